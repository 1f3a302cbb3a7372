#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-init-mono.py: Kaldi's gmm-init-mono (src/gmmbin/gmm-init-mono.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys

# One BLAS thread per job, as Kaldi's jobs run (parallelism comes from the $nj jobs): OpenBLAS's
# threads on the many small per-utterance GEMMs made 1000 utterances' likelihoods take 6.4 s
# against 0.18 s single-threaded on 2 cores. Set before numpy loads; a user's value wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Initialize monophone GMM.
Usage:  gmm-init-mono.py [options] <topology-in> <dim> <model-out> <tree-out>
e.g.:
 gmm-init-mono.py --shared-phones=data/lang/phones/sets.int \\
   "--train-feats=ark:subset-feats.py --n=10 scp:feats.scp ark:- |" topo 39 0.mdl tree
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-init-mono.py")
    parser.register("binary", True, "Write output in binary mode")
    parser.register("train-feats", "", "rspecifier for training features [used to set mean "
                    "and variance]")
    parser.register("shared-phones", "", "rxfilename containing, on each line, a list of "
                    "phones whose pdfs should be shared.")

    def body(opts, args):
        from nnetmix.errors import UsageError
        from nnetmix.hmm.gmm_tools import init_mono

        try:
            dim = int(args[1])
        except ValueError:
            raise UsageError(f"<dim> must be an integer, got '{args[1]}'") from None
        init_mono(args[0], dim, args[2], args[3], opts.train_feats, opts.shared_phones,
                  opts.binary)
        return 0

    return run_tool(parser, (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
