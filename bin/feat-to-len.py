#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""feat-to-len.py: Kaldi's feat-to-len (frames per utterance, or the total)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Reads an archive of features and writes a corresponding archive
that maps utterance-id to utterance length in frames, or (with
one argument) print to stdout the total number of frames in the
input archive.
Usage: feat-to-len.py [options] <in-rspecifier> [<out-wspecifier>]
or: feat-to-len.py [options] <in-rxfilename>
 e.g.: feat-to-len.py scp:feats.scp ark,t:feats.lengths
or: feat-to-len.py scp:feats.scp
or: feat-to-len.py foo.mat
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="feat-to-len.py")

    def body(opts, args):
        from nnetmix.feat.tables import feat_to_len

        total = feat_to_len(args[0], args[1] if len(args) > 1 else "")
        if len(args) == 1:
            print(total)
        return 0

    return run_tool(parser, (1, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
