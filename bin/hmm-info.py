#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""hmm-info.py: Kaldi's hmm-info (src/bin/hmm-info.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Write to standard output various properties of HMM-based transition model
Usage:  hmm-info.py [options] <model-in>
e.g.:
 hmm-info.py trans.mdl"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="hmm-info.py")


def body(opts, args) -> int:
    from nnetmix.kaldi.transition_model import write_info
    write_info(args[0], sys.stdout)
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (1, 1), body, argv)


if __name__ == "__main__":
    sys.exit(main())
