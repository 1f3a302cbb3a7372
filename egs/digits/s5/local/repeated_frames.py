#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""How many feature frames repeat the frame before them exactly (digital silence without
dither: RESULTS.md's tri1 section), and in how many utterances.

Usage: local/repeated_frames.py <data-dir>...
"""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys

# the nnetmix tree (egs/digits/s5/local -> ../../../..), in case nnetmix is not installed
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), *[".."] * 4))

import numpy as np  # noqa: E402

from nnetmix.kaldi import SequentialReader  # noqa: E402


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 1
    for data in sys.argv[1:]:
        frames = repeated = utts = with_repeats = 0
        with SequentialReader(f"scp:{data}/feats.scp", "mat") as reader:
            for _key, feats in reader:
                same = int(np.all(feats[1:] == feats[:-1], axis=1).sum())
                frames, repeated, utts = frames + len(feats), repeated + same, utts + 1
                with_repeats += same > 0
        print(f"{data}: {repeated} of {frames} frames ({100.0 * repeated / max(frames, 1):.1f}%) "
              f"repeat the frame before them, in {with_repeats} of {utts} utterances")
    return 0


if __name__ == "__main__":
    sys.exit(main())
