#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""copy-int-vector.py: Kaldi's copy-int-vector (src/bin/copy-int-vector.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copy vectors of integers, or archives of vectors of integers (e.g. alignments)

Usage: copy-int-vector.py [options] (<vector-in-rspecifier>|<vector-in-rxfilename>) (<vector-out-wspecifier>|<vector-out-wxfilename>)
 e.g.: copy-int-vector.py --binary=false foo -
   copy-int-vector.py 'ark:gunzip -c ali.1.gz |' ark,t:-"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="copy-int-vector.py")
    p.register("binary", True, "Write in binary mode (only relevant if output is a wxfilename)")
    return p


def body(opts, args) -> int:
    from nnetmix.kaldi.copy import copy_any, is_rspecifier
    done = copy_any(args[0], args[1], "ivec", opts.binary, what="vectors of int32")
    return 0 if done or not is_rspecifier(args[0]) else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
