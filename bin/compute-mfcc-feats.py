#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compute-mfcc-feats.py: Kaldi's compute-mfcc-feats, computed through kaldi-native-fbank."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.features import compute_feats_main

USAGE = """
Create MFCC feature files.  Samples are used on Kaldi's scale (16-bit PCM as integers);
an utterance that cannot be read or is shorter than one frame is warned about and skipped.
Note: --dither defaults to 1.0 as in Kaldi; conf/mfcc.conf sets --dither=0 (reproducible).
Usage:  compute-mfcc-feats.py [options...] <wav-rspecifier> <feats-wspecifier>
 e.g.: compute-mfcc-feats.py --config=conf/mfcc.conf scp:data/train/wav.scp ark,scp:mfcc/raw_mfcc.ark,mfcc/raw_mfcc.scp
 or:   extract-segments.py scp:wav.scp segments ark:- | compute-mfcc-feats.py --config=conf/mfcc.conf ark:- ark:feats.ark
<wav-rspecifier> is a wav.scp (files, 'sph2pipe ... |' and other pipes) or an archive of Kaldi
wave objects such as extract-segments.py writes.
"""


def main(argv=None) -> int:
    return compute_feats_main("mfcc", USAGE, argv)


if __name__ == "__main__":
    sys.exit(main())
