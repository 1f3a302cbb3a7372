#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compute-plp-feats.py: Kaldi's compute-plp-feats (knf's mel front end, then PLP in numpy)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.features import compute_feats_main

USAGE = """
Create PLP feature files.  Samples are used on Kaldi's scale (16-bit PCM as integers);
an utterance that cannot be read or is shorter than one frame is warned about and skipped.
Framing, dither, window and mel banks are MFCC's (kaldi-native-fbank); equal loudness,
compression, LPC and cepstra follow Kaldi's feature-plp.cc (nnetmix/feat/plp.py).
Note: --dither defaults to 1.0 as in Kaldi; conf/plp.conf sets --dither=0 (reproducible).
Usage:  compute-plp-feats.py [options...] <wav-rspecifier> <feats-wspecifier>
 e.g.: compute-plp-feats.py --config=conf/plp.conf scp:data/train/wav.scp ark,scp:plp/raw_plp.ark,plp/raw_plp.scp
 or:   extract-segments.py scp:wav.scp segments ark:- | compute-plp-feats.py --config=conf/plp.conf ark:- ark:feats.ark
<wav-rspecifier> is a wav.scp (files, 'sph2pipe ... |' and other pipes) or an archive of Kaldi
wave objects such as extract-segments.py writes.
"""


def main(argv=None) -> int:
    return compute_feats_main("plp", USAGE, argv)


if __name__ == "__main__":
    sys.exit(main())
