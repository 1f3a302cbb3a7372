#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""prob-to-post.py: Kaldi's prob-to-post (src/bin/prob-to-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

USAGE = """Convert a matrix of probabilities (e.g. from nnet-logprob2) to posteriors
Usage:  prob-to-post.py [options] <prob-matrix-rspecifier> <posteriors-wspecifier>
e.g.:
 nnet-logprob2 [args] | prob-to-post.py ark:- ark:1.post
Caution: in this particular example, the output would be posteriors of pdf-ids,
rather than transition-ids (c.f. post-to-pdf-post)
(--random-prune draws from a seeded numpy generator, not the C library's rand() as Kaldi:
the same distribution, other draws.)"""


def main(argv=None) -> int:
    from nnetmix.cli.posteriors import prob_to_post_main

    return prob_to_post_main("prob-to-post.py", USAGE, False, argv)


if __name__ == "__main__":
    sys.exit(main())
