#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""copy-post.py: Kaldi's copy-post (src/bin/copy-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copy archives of posteriors, with optional scaling

Usage: copy-post.py [options] <post-rspecifier> <post-wspecifier>
 e.g.: copy-post.py --scale=0.5 ark:post.ark ark,t:-"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="copy-post.py")
    p.register("scale", 1.0, "Scale for posteriors")
    return p


def body(opts, args) -> int:
    from nnetmix.kaldi.copy import copy_table
    from nnetmix.kaldi.vector_ops import scale_posterior
    transform = None
    if opts.scale != 1.0:
        transform = lambda post: scale_posterior(post, opts.scale)  # noqa: E731
    done = copy_table(args[0], args[1], "post", transform, what="posteriors")
    return 0 if done else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
