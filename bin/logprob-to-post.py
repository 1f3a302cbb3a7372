#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""logprob-to-post.py: Kaldi's logprob-to-post (src/bin/logprob-to-post.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Convert a matrix of log-probabilities (e.g. from nnet-logprob) to posteriors
Usage:  logprob-to-post.py [options] <logprob-matrix-rspecifier> <posteriors-wspecifier>
e.g.:
 nnet-logprob [args] | logprob-to-post.py ark:- ark:1.post
Caution: in this particular example, the output would be posteriors of pdf-ids,
rather than transition-ids (c.f. post-to-pdf-post)
(--random-prune draws from a seeded numpy generator, not the C library's rand() as Kaldi:
the same distribution, other draws.)"""


def main(argv=None) -> int:
    from nnetmix.hmm.post_tables import PostPruneOptions

    parser = OptionParser(USAGE, prog="logprob-to-post.py")
    parser.register_group(PostPruneOptions)

    def body(opts, args) -> int:
        from nnetmix.hmm.post_tables import prob_to_post

        o = parser.group(PostPruneOptions, opts)
        return 0 if prob_to_post(args[0], args[1], o.min_post, o.random_prune,
                                 log=True).ok else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
