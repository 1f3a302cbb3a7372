#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""subset-feats.py: Kaldi's subset-feats (src/featbin/subset-feats.cc), the --n form."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Copy a subset of features (by default, the first n feature files)
Usually used where only a small amount of data is needed
Usage: subset-feats.py [options] <in-rspecifier> <out-wspecifier>
e.g.: subset-feats.py --n=10 ark:- ark:-
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="subset-feats.py")
    parser.register("n", 10, "If nonnegative, copy the first n feature files.")

    def body(opts, args):
        from nnetmix.hmm.gmm_tools import subset_feats

        subset_feats(args[0], args[1], opts.n)
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
