#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""am-info.py: Kaldi's am-info (src/bin/am-info.cc): the transition model's sizes, of any model with one (our GMM models)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Write to standard output various properties of a model, of any type
(reads only the transition model)
Usage:  am-info.py [options] <model-in>
e.g.:
 am-info.py 1.mdl"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="am-info.py")


def body(opts, args) -> int:
    from nnetmix.kaldi.transition_model import write_info
    write_info(args[0], sys.stdout)
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (1, 1), body, argv)


if __name__ == "__main__":
    sys.exit(main())
