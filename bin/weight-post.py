#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""weight-post.py: Kaldi's weight-post (src/bin/weight-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Takes archives (typically per-utterance) of posteriors and per-frame weights,
and weights the posteriors by the per-frame weights

Usage: weight-post.py <post-rspecifier> <weights-rspecifier> <post-wspecifier>"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="weight-post.py")
    p.register("length-tolerance", 2, "Tolerate this many frames of length mismatch between "
               "posteriors and weights")
    return p


def body(opts, args) -> int:
    from nnetmix.hmm.post_tables import weight_post
    return 0 if weight_post(args[0], args[1], args[2], opts.length_tolerance).ok else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
