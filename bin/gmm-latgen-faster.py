#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-latgen-faster.py: Kaldi's gmm-latgen-faster (src/gmmbin/gmm-latgen-faster.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.latgen import latgen_main

USAGE = """
Generate lattices using GMM-based model.
Usage: gmm-latgen-faster.py [options] <model-in> <fst-in> <features-rspecifier> <lattice-wspecifier> [ <words-wspecifier> [<alignments-wspecifier>] ]
 e.g.: gmm-latgen-faster.py --beam=13 --lattice-beam=8 --acoustic-scale=0.083333 \\
   --word-symbol-table=exp/mono/graph/words.txt exp/mono/final.mdl exp/mono/graph/HCLG.fst \\
   ark:feats.ark "ark:|gzip -c > lat.1.gz"
"""


def main(argv=None) -> int:
    return latgen_main(USAGE, "gmm-latgen-faster.py", gmm=True, parallel=False,
                       argv=argv)


if __name__ == "__main__":
    sys.exit(main())
