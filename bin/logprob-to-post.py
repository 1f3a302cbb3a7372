#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""logprob-to-post.py: Kaldi's logprob-to-post (src/bin/logprob-to-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

USAGE = """Convert a matrix of log-probabilities (e.g. from nnet-logprob) to posteriors
Usage:  logprob-to-post.py [options] <logprob-matrix-rspecifier> <posteriors-wspecifier>
e.g.:
 nnet-logprob [args] | logprob-to-post.py ark:- ark:1.post
Caution: in this particular example, the output would be posteriors of pdf-ids,
rather than transition-ids (c.f. post-to-pdf-post)
(--random-prune draws from a seeded numpy generator, not the C library's rand() as Kaldi:
the same distribution, other draws.)"""


def main(argv=None) -> int:
    from nnetmix.cli.posteriors import prob_to_post_main

    return prob_to_post_main("logprob-to-post.py", USAGE, True, argv)


if __name__ == "__main__":
    sys.exit(main())
