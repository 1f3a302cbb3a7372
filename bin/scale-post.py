#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""scale-post.py: Kaldi's scale-post (src/bin/scale-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Scale posteriors with either a global scale, or a different scale for  each utterance.
Usage: scale-post.py <post-rspecifier> (<scale-rspecifier>|<scale>) <post-wspecifier>"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="scale-post.py")


def body(opts, args) -> int:
    from nnetmix.hmm.post_tables import scale_post
    return 0 if scale_post(args[0], args[1], args[2]).ok else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
