#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""post-to-weights.py: Kaldi's post-to-weights (src/bin/post-to-weights.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Turn posteriors into per-frame weights (typically most useful after
weight-silence-post.py, to get silence weights)
See also: weight-silence-post.py, post-to-pdf-post, post-to-phone-post
post-to-feats, get-post-on-ali
Usage: post-to-weights.py <post-rspecifier> <weights-wspecifier>"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="post-to-weights.py")


def body(opts, args) -> int:
    from nnetmix.hmm.post_tables import post_to_weights
    return 0 if post_to_weights(args[0], args[1]).ok else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
