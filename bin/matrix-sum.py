#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""matrix-sum.py: Kaldi's matrix-sum (src/bin/matrix-sum.cc): tables summed per key, a table summed to one matrix, or matrix files summed."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Add matrices (supports various forms)

Type one usage:
 matrix-sum.py [options] <matrix-in-rspecifier1> [<matrix-in-rspecifier2> <matrix-in-rspecifier3> ...] <matrix-out-wspecifier>
  e.g.: matrix-sum.py ark:1.weights ark:2.weights ark:combine.weights
  This usage supports the --scale1 and --scale2 options to scale the
  first two input tables.
Type two usage (sums a single table input to produce a single output):
 matrix-sum.py [options] <matrix-in-rspecifier> <matrix-out-wxfilename>
 e.g.: matrix-sum.py --binary=false mats.ark sum.mat
Type three usage (sums or averages single-file inputs to produce
a single output):
 matrix-sum.py [options] <matrix-in-rxfilename1> <matrix-in-rxfilename2> ... <matrix-out-wxfilename>
 e.g.: matrix-sum.py --binary=false 1.mat 2.mat 3.mat sum.mat
See also: matrix-sum-rows, copy-matrix.py"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="matrix-sum.py")
    p.register("scale1", 1.0, "Scale applied to first matrix (only for type one usage)")
    p.register("scale2", 1.0, "Scale applied to second matrix (only for type one usage)")
    p.register("binary", True, "If true, write output as binary (only relevant for usage types "
               "two or three")
    p.register("average", False, "If true, compute average instead of sum; currently "
               "compatible with type 3 or type 1 usage.")
    return p


def body(opts, args) -> int:
    from nnetmix.kaldi.sums import sum_any
    return 0 if sum_any(args, "mat", opts.binary, opts.average, opts.scale1, opts.scale2) else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
