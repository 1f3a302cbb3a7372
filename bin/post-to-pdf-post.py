#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""post-to-pdf-post.py: Kaldi's post-to-pdf-post (src/bin/post-to-pdf-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """This program turns per-frame posteriors, which have transition-ids as
the integers, into pdf-level posteriors
See also: post-to-weights.py, ali-to-pdf.py

Usage:  post-to-pdf-post.py [options] <model-file> <posteriors-rspecifier> <posteriors-wspecifier>
e.g.: post-to-pdf-post.py 1.mdl ark:- ark:-"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="post-to-pdf-post.py")


def body(opts, args) -> int:
    from nnetmix.hmm.post_tables import post_to_pdf_post
    return 0 if post_to_pdf_post(args[0], args[1], args[2]).ok else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
