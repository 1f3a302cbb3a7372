#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compute-and-process-kaldi-pitch-feats.py: Kaldi's binary of that name, through
kaldi-native-fbank (the same numbers as compute-kaldi-pitch-feats | process-kaldi-pitch-feats)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.features import compute_pitch_main

USAGE = """
Apply Kaldi pitch extractor and pitch post-processor, starting from wav input.
Equivalent to compute-kaldi-pitch-feats | process-kaldi-pitch-feats, except
that it is able to simulate online pitch extraction; see options like
--frames-per-chunk, --simulate-first-pass-online, --recompute-frame.
Usage: compute-and-process-kaldi-pitch-feats.py [options...] <wav-rspecifier> <feats-wspecifier>
e.g.
compute-and-process-kaldi-pitch-feats.py --simulate-first-pass-online=true \\
  --frames-per-chunk=10 --sample-frequency=8000 scp:wav.scp ark:-
"""


def main(argv=None) -> int:
    return compute_pitch_main(USAGE, "compute-and-process-kaldi-pitch-feats.py", argv)


if __name__ == "__main__":
    sys.exit(main())
