#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Which words a decode inserts: the best-scoring transcript of a decode directory (the wer_*
file with the fewest errors, its scoring/<lmwt>.<wip>.tra) aligned to the reference by edit
distance, and the inserted words counted, with those next to a word ending in ow (OH, ZERO).

Usage: local/insertions.py <ref-text> <decode-dir>
"""
import sys
from collections import Counter
from pathlib import Path

OW_FINAL = ("OH", "ZERO")


def insertions(ref: list, hyp: list) -> list:
    """Indices in ``hyp`` of the words a minimum-edit alignment to ``ref`` inserts."""
    n, m = len(ref), len(hyp)
    d = [[i + j if not i or not j else 0 for j in range(m + 1)] for i in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]))
    i, j, out = n, m, []
    while i or j:
        if i and j and d[i][j] == d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]):
            i, j = i - 1, j - 1
        elif j and d[i][j] == d[i][j - 1] + 1:
            out.append(j - 1)
            j -= 1
        else:
            i -= 1
    return out


def best_tra(decode_dir: Path) -> Path:
    def errors(f: Path) -> int:
        return int(f.read_text().split("[")[1].split("/")[0])
    best = min(decode_dir.glob("wer_*"), key=errors)
    lmwt, wip = best.name[4:].split("_")
    return decode_dir / "scoring" / f"{lmwt}.{wip}.tra"


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 1
    ref = {ln.split()[0]: ln.split()[1:] for ln in open(sys.argv[1]) if ln.strip()}
    tra = best_tra(Path(sys.argv[2]))
    hyp = {ln.split()[0]: ln.split()[1:] for ln in open(tra) if ln.strip()}
    words, near_ow = Counter(), 0
    for key, r in ref.items():
        h = hyp.get(key, [])
        for j in insertions(r, h):
            words[h[j]] += 1
            if any(0 <= x < len(h) and h[x] in OW_FINAL for x in (j - 1, j + 1)):
                near_ow += 1
    total = sum(words.values())
    top = ", ".join(f"{w} {c}" for w, c in words.most_common(4))
    print(f"{tra}: {total} insertions ({top}); {near_ow} next to OH or ZERO")
    return 0


if __name__ == "__main__":
    sys.exit(main())
