#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""concat-feats.py: Kaldi's concat-feats (src/featbin/concat-feats.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Concatenate feature files (assuming they have the same dimensions),
so the output file has the sum of the num-frames of the inputs.
Usage: concat-feats.py <in-rxfilename1> <in-rxfilename2> [<in-rxfilename3> ...] <out-wxfilename>
 e.g. concat-feats.py mfcc/foo.ark:12343 mfcc/foo.ark:56789 -
See also: copy-feats.py, append-vector-to-feats, paste-feats.py"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="concat-feats.py")
    p.register("binary", True, "If true, output files in binary (only relevant for single-file "
               "operation, i.e. no tables)")
    return p


def body(opts, args) -> int:
    from nnetmix.feat.reshape import concat_feats
    concat_feats(args[:-1], args[-1], opts.binary)
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
