#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-latgen-faster-parallel.py: Kaldi's gmm-latgen-faster-parallel
(src/gmmbin/gmm-latgen-faster-parallel.cc): gmm-latgen-faster with --num-threads decoding
threads, outputs written in input order (identical archives with any number of threads)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.latgen import latgen_main

USAGE = """
Decode features using GMM-based model.  Uses multiple decoding threads,
but interface and behavior is otherwise the same as gmm-latgen-faster
Usage: gmm-latgen-faster-parallel.py [options] <model-in> <fst-in> <features-rspecifier> <lattice-wspecifier> [ <words-wspecifier> [<alignments-wspecifier>] ]
 e.g.: gmm-latgen-faster-parallel.py --num-threads=2 --decoder=faster --beam=13 \\
   --lattice-beam=8 --acoustic-scale=0.083333 exp/tri1/final.mdl exp/tri1/graph/HCLG.fst \\
   ark:feats.ark "ark:|gzip -c > lat.1.gz"
"""


def main(argv=None) -> int:
    return latgen_main(USAGE, "gmm-latgen-faster-parallel.py", gmm=True, parallel=True,
                       argv=argv)


if __name__ == "__main__":
    sys.exit(main())
