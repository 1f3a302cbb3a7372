#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""paste-feats.py: Kaldi's paste-feats (src/featbin/paste-feats.cc), tables only."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Paste feature files (assuming they have about the same durations, see --length-tolerance),
appending the features on each frame; think of the unix command 'paste'.
Usage: paste-feats.py <in-rspecifier1> <in-rspecifier2> [<in-rspecifier3> ...] <out-wspecifier>
 e.g. paste-feats.py ark:feats1.ark "ark:select-feats 0-3 ark:feats2.ark ark:- |" ark:feats-out.ark
See also: copy-feats.py, subset-feats.py
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="paste-feats.py")
    parser.register("length-tolerance", 0, "If length is different, trim as shortest up to "
                    "a frame  difference of length-tolerance, otherwise exclude segment.")

    def body(opts, args):
        from nnetmix.feat.tables import paste_feats_table

        return 0 if paste_feats_table(args[:-1], args[-1], opts.length_tolerance).ok else 1

    return run_tool(parser, (3, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
