#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""latgen-faster-mapped.py: Kaldi's latgen-faster-mapped (src/bin/latgen-faster-mapped.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.latgen import latgen_main

USAGE = """
Generate lattices, reading log-likelihoods as matrices
 (model is needed only for the integer mappings in its transition-model)
Usage: latgen-faster-mapped.py [options] <trans-model-in> <fst-in> <loglikes-rspecifier> <lattice-wspecifier> [ <words-wspecifier> [<alignments-wspecifier>] ]
 e.g.: nnet-forward.py --class-frame-counts=ali_train_pdf.counts final.nnet scp:feats.scp ark:- | \\
   latgen-faster-mapped.py --beam=13 --lattice-beam=8 --acoustic-scale=0.1 \\
   --word-symbol-table=words.txt final.mdl HCLG.fst ark:- "ark:|gzip -c > lat.1.gz"
"""


def main(argv=None) -> int:
    return latgen_main(USAGE, "latgen-faster-mapped.py", gmm=False, parallel=False,
                       argv=argv)


if __name__ == "__main__":
    sys.exit(main())
