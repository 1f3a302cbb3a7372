#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""latgen-faster-mapped-parallel.py: Kaldi's latgen-faster-mapped-parallel
(src/bin/latgen-faster-mapped-parallel.cc): latgen-faster-mapped with --num-threads decoding
threads, outputs written in input order (identical archives with any number of threads)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.latgen import latgen_main

USAGE = """
Generate lattices, reading log-likelihoods as matrices, using multiple decoding threads
 (model is needed only for the integer mappings in its transition-model)
Usage: latgen-faster-mapped-parallel.py [options] <trans-model-in> <fst-in> <loglikes-rspecifier> <lattice-wspecifier> [ <words-wspecifier> [<alignments-wspecifier>] ]
 e.g.: nnet-forward.py --class-frame-counts=ali_train_pdf.counts final.nnet scp:feats.scp ark:- | \\
   latgen-faster-mapped-parallel.py --num-threads=2 --decoder=faster --beam=13 \\
   --lattice-beam=8 --acoustic-scale=0.1 final.mdl HCLG.fst ark:- "ark:|gzip -c > lat.1.gz"
"""


def main(argv=None) -> int:
    return latgen_main(USAGE, "latgen-faster-mapped-parallel.py", gmm=False, parallel=True,
                       argv=argv)


if __name__ == "__main__":
    sys.exit(main())
