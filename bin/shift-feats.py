#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""shift-feats.py: Kaldi's shift-feats (src/featbin/shift-feats.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copy features, and possibly shift them while maintaining the num-frames.
Usage: shift-feats.py [options] <feature-rspecifier> <feature-wspecifier>
or:  shift-feats.py [options] <feats-rxfilename> <feats-wxfilename>
e.g.: shift-feats.py --shift=-1 foo.scp bar.ark
or: shift-feats.py --shift=1 foo.mat bar.mat
See also: copy-feats.py, copy-matrix.py, select-feats.py, subset-feats.py,
subsample-feats.py, splice-feats.py, paste-feats.py, concat-feats.py, extract-feature-segments"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="shift-feats.py")
    p.register("shift", 0, "Number of frames by which to shift the features.")
    p.register("binary", True, "Binary-mode output (not relevant if writing to archive)")
    return p


def body(opts, args) -> int:
    from nnetmix.feat.reshape import shift_feats
    return 0 if shift_feats(args[0], args[1], opts.shift, opts.binary).ok else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
