#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-post-to-gpost.py: Kaldi's gmm-post-to-gpost (src/gmmbin/gmm-post-to-gpost.cc); Kaldi's
GaussPost tables (text by default, as Kaldi's)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Convert state-level posteriors to Gaussian-level posteriors
Usage:  gmm-post-to-gpost.py [options] <model-in> <feature-rspecifier> <posteriors-rspecifier> <gpost-wspecifier>
e.g.:
 gmm-post-to-gpost.py 1.mdl scp:train.scp ark:1.post ark:1.gpost
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-post-to-gpost.py")
    parser.register("binary", False, "Write output in binary mode (Kaldi registers it but its "
                    "tables follow the wspecifier: ark,t: for text)")

    def body(opts, args):
        from nnetmix.hmm.gauss_post import post_to_gpost

        return 0 if post_to_gpost(args[0], args[1], args[2], args[3]) else 1

    return run_tool(parser, (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
