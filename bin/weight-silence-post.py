#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""weight-silence-post.py: Kaldi's weight-silence-post (src/bin/weight-silence-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Apply weight to silences in posts
Usage:  weight-silence-post.py [options] <silence-weight> <silence-phones> <model> <posteriors-rspecifier> <posteriors-wspecifier>
e.g.:
 weight-silence-post.py 0.0 1:2:3 1.mdl ark:1.post ark:nosil.post
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="weight-silence-post.py")
    parser.register("distribute", False, "If true, rather than weighting the individual "
                    "posteriors, apply the weighting to the whole frame: i.e. on time t, scale "
                    "all posterior entries by p(sil)*silence-weight + p(non-sil)*1.0")

    def body(opts, args):
        from nnetmix.errors import UsageError
        from nnetmix.hmm.post_tools import weight_silence_post

        try:
            weight = float(args[0])
        except ValueError:
            raise UsageError(f'Invalid silence-weight parameter: expected float, got "{args[0]}"')
        done = weight_silence_post(weight, args[1], args[2], args[3], args[4], opts.distribute)
        return 0 if done else 1

    return run_tool(parser, (5, 5), body, argv)


if __name__ == "__main__":
    sys.exit(main())
