#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""acc-lda.py: Kaldi's acc-lda (src/bin/acc-lda.cc); the statistics file is Kaldi's."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Accumulate LDA statistics based on pdf-ids.
Usage:  acc-lda.py [options] <transition-gmm/model> <features-rspecifier> <posteriors-rspecifier> <lda-acc-out>
Typical usage:
 ali-to-post.py ark:1.ali ark:- | acc-lda.py 1.mdl "ark:splice-feats.py scp:train.scp ark:- |" ark:- ldaacc.1
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="acc-lda.py")
    parser.register("binary", True, "Write accumulators in binary mode.")
    parser.register("rand-prune", 0.0, "Randomized pruning threshold for posteriors")
    parser.register("srand", 0, "nnetmix: seed of the randomized pruning (Kaldi uses rand())")

    def body(opts, args):
        from nnetmix.feat.lda import acc_lda

        acc_lda(args[0], args[1], args[2], args[3], opts.rand_prune, opts.binary, opts.srand)
        return 0

    return run_tool(parser, (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
