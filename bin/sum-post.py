#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""sum-post.py: Kaldi's sum-post (src/bin/sum-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Sum two sets of posteriors for each utterance, e.g. useful in fMMI.
To take the difference of posteriors, use e.g. --scale2=-1.0

Usage: sum-post.py <post-rspecifier1> <post-rspecifier2> <post-wspecifier>"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="sum-post.py")
    p.register("scale1", 1.0, "Scale for first set of posteriors")
    p.register("scale2", 1.0, "Scale for second set of posteriors")
    p.register("merge", True, "If true, merge posterior entries for same transition-id "
               "(canceling positive and negative parts)")
    p.register("zero-if-disjoint", False, "If true, zero posteriors on all frames when the two "
               "sets of posteriors are disjoint (this option for back-compatibility only; use "
               "'--drop-frames'")
    p.register("drop-frames", False, "If true, zero posteriors on all frames when the two sets "
               "of posteriors are disjoint")
    return p


def body(opts, args) -> int:
    from nnetmix.hmm.post_tables import sum_post
    counts = sum_post(args[0], args[1], args[2], opts.scale1, opts.scale2, opts.merge,
                      opts.drop_frames or opts.zero_if_disjoint)
    return 0 if counts.ok else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
