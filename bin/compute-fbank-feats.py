#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compute-fbank-feats.py: Kaldi's compute-fbank-feats, computed through kaldi-native-fbank."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.features import compute_feats_main

USAGE = """
Create Mel-filter bank (FBANK) feature files.  Samples are used on Kaldi's scale (16-bit PCM
as integers); an utterance that cannot be read or is shorter than one frame is warned about and skipped.
Note: --dither defaults to 1.0 as in Kaldi; conf/fbank.conf sets --dither=0 (reproducible).
Usage:  compute-fbank-feats.py [options...] <wav-rspecifier> <feats-wspecifier>
 e.g.: compute-fbank-feats.py --config=conf/fbank.conf scp:data/train/wav.scp ark,scp:fbank/raw_fbank.ark,fbank/raw_fbank.scp
 or:   extract-segments.py scp:wav.scp segments ark:- | compute-fbank-feats.py --config=conf/fbank.conf ark:- ark:feats.ark
<wav-rspecifier> is a wav.scp (files, 'sph2pipe ... |' and other pipes) or an archive of Kaldi
wave objects such as extract-segments.py writes.
"""


def main(argv=None) -> int:
    return compute_feats_main("fbank", USAGE, argv)


if __name__ == "__main__":
    sys.exit(main())
