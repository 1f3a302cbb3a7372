#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""select-feats.py: Kaldi's select-feats (src/featbin/select-feats.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Select certain dimensions of the feature file;  think of it as the unix
command cut -f ...
Usage: select-feats.py <selection> <in-rspecifier> <out-wspecifier>
  e.g. select-feats.py 0,24-22,3-12 scp:feats.scp ark,scp:feat-red.ark,feat-red.scp
See also copy-feats.py, extract-feature-segments, subset-feats.py, subsample-feats.py"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="select-feats.py")


def body(opts, args) -> int:
    from nnetmix.feat.reshape import select_feats
    select_feats(args[0], args[1], args[2])
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
