#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-info.py: Kaldi's gmm-info (src/gmmbin/gmm-info.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Write to standard output various properties of GMM-based model
Usage:  gmm-info.py [options] <model-in>
e.g.:
 gmm-info.py 1.mdl
See also: gmm-global-info, am-info"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="gmm-info.py")


def body(opts, args) -> int:
    from nnetmix.kaldi.diag_gmm import read_gmm_model
    from nnetmix.kaldi.transition_model import info_lines
    tm, am = read_gmm_model(args[0])
    sys.stdout.write("".join(line + "\n" for line in info_lines(tm))
                     + f"feature dimension {am.dim}\n"
                     f"number of gaussians {am.num_gauss}\n")
    sys.stdout.flush()
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (1, 1), body, argv)


if __name__ == "__main__":
    sys.exit(main())
