#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""vector-sum.py: Kaldi's vector-sum (src/bin/vector-sum.cc): tables summed per key, a table summed to one vector, or vector files summed."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Add vectors (e.g. weights, transition-accs; speaker vectors)
If you need to scale the inputs, use vector-scale.py on the inputs

Type one usage:
 vector-sum.py [options] <vector-in-rspecifier1> [<vector-in-rspecifier2> <vector-in-rspecifier3> ...] <vector-out-wspecifier>
  e.g.: vector-sum.py ark:1.weights ark:2.weights ark:combine.weights
Type two usage (sums a single table input to produce a single output):
 vector-sum.py [options] <vector-in-rspecifier> <vector-out-wxfilename>
 e.g.: vector-sum.py --binary=false vecs.ark sum.vec
Type three usage (sums single-file inputs to produce a single output):
 vector-sum.py [options] <vector-in-rxfilename1> <vector-in-rxfilename2> ... <vector-out-wxfilename>
 e.g.: vector-sum.py --binary=false 1.vec 2.vec 3.vec sum.vec
See also: copy-vector.py, dot-weights
(Kaldi leaves --binary uninitialized; here it is true. --average applies to type two usage, as
in Kaldi.)"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="vector-sum.py")
    p.register("binary", True, "If true, write output as binary (only relevant for usage types "
               "two or three")
    p.register("average", False, "Do average instead of sum")
    return p


def body(opts, args) -> int:
    from nnetmix.kaldi.sums import sum_any
    return 0 if sum_any(args, "vec", opts.binary, opts.average and len(args) == 2) else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
