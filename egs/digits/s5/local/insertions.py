#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Which words a decode inserts: the best-scoring hypothesis of a decode directory (as
compare-wer.py picks it, nnetmix.score.best_scoring) aligned to the reference as compute-wer
aligns it (nnetmix.score.wer.align_ops), and the inserted words counted, with those next to a
word ending in ow (OH, ZERO).

Usage: local/insertions.py <ref-text> <decode-dir>
"""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys
from collections import Counter

# the nnetmix tree (egs/digits/s5/local -> ../../../..), in case nnetmix is not installed
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), *[".."] * 4))

from nnetmix.score.compare import best_scoring  # noqa: E402
from nnetmix.score.wer import align_ops  # noqa: E402

OW_FINAL = ("OH", "ZERO")


def inserted(ref: list, hyp: list) -> list:
    """Indices in ``hyp`` of the words compute-wer's alignment to ``ref`` counts as inserted."""
    out, j = [], 0
    for op in align_ops(ref, hyp):
        if op == "I":
            out.append(j)
        if op != "D":
            j += 1
    return out


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 1
    ref = {ln.split()[0]: ln.split()[1:] for ln in open(sys.argv[1]) if ln.strip()}
    best = best_scoring(sys.argv[2])
    hyp = {ln.split()[0]: ln.split()[1:] for ln in open(best.hyp) if ln.strip()}
    words, near_ow = Counter(), 0
    for key, r in ref.items():
        h = hyp.get(key, [])
        for j in inserted(r, h):
            words[h[j]] += 1
            near_ow += any(0 <= x < len(h) and h[x] in OW_FINAL for x in (j - 1, j + 1))
    top = ", ".join(f"{w} {c}" for w, c in words.most_common(4))
    print(f"{best.hyp}: {sum(words.values())} insertions ({top}); {near_ow} next to OH or ZERO")
    return 0


if __name__ == "__main__":
    sys.exit(main())
