#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-acc-mllt.py: Kaldi's gmm-acc-mllt (src/gmmbin/gmm-acc-mllt.cc); Kaldi's MlltAccs file."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Accumulate MLLT (global STC) statistics
Usage:  gmm-acc-mllt.py [options] <model-in> <feature-rspecifier> <posteriors-rspecifier> <stats-out>
e.g.:
 gmm-acc-mllt.py 1.mdl scp:train.scp ark:1.post 1.macc
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-acc-mllt.py")
    parser.register("binary", True, "Write output in binary mode")
    parser.register("rand-prune", 0.25, "Randomized pruning parameter to speed up accumulation")
    parser.register("srand", 0, "nnetmix: seed of the randomized pruning (Kaldi uses rand())")

    def body(opts, args):
        from nnetmix.hmm.mllt import acc_mllt

        acc_mllt(args[0], args[1], args[2], args[3], opts.rand_prune, opts.binary, opts.srand)
        return 0

    return run_tool(parser, (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
