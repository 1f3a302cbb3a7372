#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""copy-vector.py: Kaldi's copy-vector (src/bin/copy-vector.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copy vectors, or archives of vectors (e.g. transition-accs; speaker vectors)

Usage: copy-vector.py [options] (<vector-in-rspecifier>|<vector-in-rxfilename>) (<vector-out-wspecifier>|<vector-out-wxfilename>)
 e.g.: copy-vector.py --binary=false 1.mat -
   copy-vector.py ark:2.trans ark,t:-"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="copy-vector.py")
    p.register("binary", True, "Write in binary mode (only relevant if output is a wxfilename)")
    p.register("change-dim", -1, "Use this option to truncate or zero-pad the vectors.")
    p.register("scale", 1.0, "This option can be used to scale the vectors being copied.")
    return p


def body(opts, args) -> int:
    from nnetmix.kaldi.copy import copy_any, is_rspecifier
    from nnetmix.kaldi.vector_ops import change_dim_and_scale
    transform = None
    if opts.change_dim >= 0 or opts.scale != 1.0:
        transform = lambda v: change_dim_and_scale(v, opts.change_dim, opts.scale)  # noqa: E731
    done = copy_any(args[0], args[1], "vec", opts.binary, transform, what="vectors")
    return 0 if done or not is_rspecifier(args[0]) else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
