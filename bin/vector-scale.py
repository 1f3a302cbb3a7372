#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""vector-scale.py: Kaldi's vector-scale (src/bin/vector-scale.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Scale vectors, or archives of vectors (useful for speaker vectors and per-frame weights)
Usage: vector-scale.py [options] <vector-in-rspecifier> <vector-out-wspecifier>
   or: vector-scale.py [options] <vector-in-rxfilename> <vector-out-wxfilename>
 e.g.: vector-scale.py --scale=-1.0 1.vec -
       vector-scale.py --scale=-2.0 ark:vec.ark ark,t:-
See also: copy-vector.py, vector-sum.py"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="vector-scale.py")
    p.register("binary", False, "If true, write output as binary not relevant for archives")
    p.register("scale", 1.0, "Scaling factor for vectors")
    return p


def body(opts, args) -> int:
    import numpy as np
    from nnetmix.kaldi.copy import copy_any
    scale = np.float32(opts.scale)
    copy_any(args[0], args[1], "vec", opts.binary,
             lambda v: np.asarray(v, np.float32) * scale, what="")
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
