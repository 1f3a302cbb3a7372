#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""splice-feats.py: Kaldi's splice-feats (frames t-left..t+right side by side)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Splice features with left and right context (e.g. prior to LDA)
Usage: splice-feats.py [options] <feature-rspecifier> <feature-wspecifier>
 e.g.: splice-feats.py scp:feats.scp ark:-
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="splice-feats.py")
    parser.register("left-context", 4, "Number of frames of left context")
    parser.register("right-context", 4, "Number of frames of right context")

    def body(opts, args):
        from nnetmix.feat.tables import splice_feats_table

        splice_feats_table(args[0], args[1], opts.left_context, opts.right_context)
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
