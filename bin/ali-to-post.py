#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""ali-to-post.py: Kaldi's ali-to-post (src/bin/ali-to-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Convert alignments to posteriors.  This is simply a format change
from integer vectors to Posteriors, which are vectors of lists of
pairs (int, float) where the float represents the posterior.  The
floats would all be 1.0 in this case.
The posteriors will still be in terms of whatever integer index
the input contained, which will be transition-ids if they came
directly from decoding, or pdf-ids if they were processed by
ali-to-pdf.
Usage:  ali-to-post.py [options] <alignments-rspecifier> <posteriors-wspecifier>
e.g.:
 ali-to-post.py ark:1.ali ark:1.post
See also: ali-to-pdf, ali-to-phones, show-alignments, post-to-weights"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="ali-to-post.py")


def body(opts, args) -> int:
    import logging
    from nnetmix.kaldi.transition_model import ali_to_post
    done = ali_to_post(args[0], args[1])
    logging.getLogger("ali-to-post").info("Converted %d alignments.", done)
    return 0 if done else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
