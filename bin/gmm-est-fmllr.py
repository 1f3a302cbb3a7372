#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-est-fmllr.py: Kaldi's gmm-est-fmllr (src/gmmbin/gmm-est-fmllr.cc); d x (d+1) transforms."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

USAGE = """
Estimate global fMLLR transforms, either per utterance or for the supplied
set of speakers (spk2utt option).  Reads posteriors (on transition-ids).  Writes
to a table of matrices.
Usage: gmm-est-fmllr.py [options] <model-in> <feature-rspecifier> <post-rspecifier> <transform-wspecifier>
e.g.:
 gmm-est-fmllr.py --spk2utt=ark:data/train/spk2utt 1.mdl scp:feats.scp ark:1.post ark:trans.1
"""


def main(argv=None) -> int:
    from nnetmix.cli.fmllr import est_fmllr_main

    return est_fmllr_main("gmm-est-fmllr.py", USAGE, False, argv)


if __name__ == "__main__":
    sys.exit(main())
