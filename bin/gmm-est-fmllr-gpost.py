#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-est-fmllr-gpost.py: Kaldi's gmm-est-fmllr-gpost (src/gmmbin/gmm-est-fmllr-gpost.cc):
gmm-est-fmllr.py on Gaussian-level posteriors (gmm-post-to-gpost.py's tables)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

USAGE = """
Estimate global fMLLR transforms, either per utterance or for the supplied
set of speakers (spk2utt option).  Reads Gaussian-level posteriors.  Writes
to a table of matrices.
Usage: gmm-est-fmllr-gpost.py [options] <model-in> <feature-rspecifier> <gpost-rspecifier> <transform-wspecifier>
e.g.:
 gmm-est-fmllr-gpost.py --spk2utt=ark:data/train/spk2utt 1.mdl scp:feats.scp ark:1.gpost ark:trans.1
"""


def main(argv=None) -> int:
    from nnetmix.cli.fmllr import est_fmllr_main

    return est_fmllr_main("gmm-est-fmllr-gpost.py", USAGE, True, argv)


if __name__ == "__main__":
    sys.exit(main())
