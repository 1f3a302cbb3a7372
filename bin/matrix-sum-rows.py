#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""matrix-sum-rows.py: Kaldi's matrix-sum-rows (src/bin/matrix-sum-rows.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Sum the rows of an input table of matrices and output the corresponding
table of vectors

Usage: matrix-sum-rows.py [options] <matrix-rspecifier> <vector-wspecifier>
e.g.: matrix-sum-rows.py ark:- ark:- | vector-sum.py ark:- sum.vec
See also: matrix-sum.py, vector-sum.py"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="matrix-sum-rows.py")


def body(opts, args) -> int:
    from nnetmix.kaldi.sums import matrix_sum_rows
    return 0 if matrix_sum_rows(args[0], args[1]).ok else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
