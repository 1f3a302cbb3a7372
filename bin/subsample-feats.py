#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""subsample-feats.py: Kaldi's subsample-feats (src/featbin/subsample-feats.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Sub-samples features by taking every n'th frame.
With negative values of n, will repeat each frame n times
(e.g. --n=-2 will repeat each frame twice)

Usage: subsample-feats.py [options] <in-rspecifier> <out-wspecifier>
  e.g. subsample-feats.py --n=2 ark:- ark:-"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="subsample-feats.py")
    p.register("n", 1, "Take every n'th feature, for this value of n(with negative value, "
               "repeats each feature n times)")
    p.register("offset", 0, "Start with the feature with this offset, then take every n'th "
               "feature.")
    return p


def body(opts, args) -> int:
    from nnetmix.feat.reshape import subsample_feats
    return 0 if subsample_feats(args[0], args[1], opts.n, opts.offset).ok else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
