#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""sum-matrices.py: Kaldi's sum-matrices (src/bin/sum-matrices.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Sum matrices, e.g. stats for fMPE training
Usage:  sum-matrices.py [options] <mat-out> <mat-in1> <mat-in2> ...
e.g.:
 sum-matrices.py mat 1.mat 2.mat 3.mat"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="sum-matrices.py")
    p.register("binary", True, "Write output in binary mode")
    return p


def body(opts, args) -> int:
    from nnetmix.kaldi.sums import sum_matrices
    sum_matrices(args[0], args[1:], opts.binary)
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
