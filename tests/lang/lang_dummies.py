"""Dictionary directories and FST walkers for the lang tests (built in code, nothing checked in)."""
from __future__ import annotations

import heapq
import math
from pathlib import Path

DIGITS_LEXICON = """!SIL sil
<UNK> spn
EIGHT ey t
FIVE f ay v
OH ow
ONE w ah n
SEVEN s eh v ah n
TWO t uw
"""


def write_dict(d: Path, lexicon: str = DIGITS_LEXICON, silence: str = "sil\nspn\n",
               optional: str = "sil\n", nonsilence: str | None = None,
               extra_questions: str | None = "sil spn\n") -> Path:
    """A dict dir; nonsilence phones default to those the lexicon uses, one per line."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "lexicon.txt").write_text(lexicon)
    (d / "silence_phones.txt").write_text(silence)
    (d / "optional_silence.txt").write_text(optional)
    if nonsilence is None:
        sil = set(silence.split())
        used = sorted({p for line in lexicon.splitlines() for p in line.split()[1:]} - sil)
        nonsilence = "".join(p + "\n" for p in used)
    (d / "nonsilence_phones.txt").write_text(nonsilence)
    if extra_questions is not None:
        (d / "extra_questions.txt").write_text(extra_questions)
    return d


def read_fst(path):
    import kaldi_hmm_gmm  # noqa: F401  (before kaldifst)
    import kaldifst
    return kaldifst.StdVectorFst.read(str(path))


def arcs_of(fst):
    import kaldifst
    return {s: [(a.ilabel, a.olabel, a.weight.value, a.nextstate)
                for a in kaldifst.ArcIterator(fst, s)] for s in kaldifst.StateIterator(fst)}


def best_cost(fst, ilabels: list[int], olabels: list[int]) -> float:
    """The lowest cost of a path reading ``ilabels`` and writing ``olabels`` (epsilons skipped);
    inf when the FST accepts no such path. Dijkstra over (state, input pos, output pos)."""
    arcs = arcs_of(fst)
    start = (fst.start, 0, 0)
    dist = {start: 0.0}
    heap = [(0.0, start)]
    best = math.inf
    while heap:
        cost, node = heapq.heappop(heap)
        if cost > dist.get(node, math.inf):
            continue
        s, i, o = node
        if i == len(ilabels) and o == len(olabels):
            fw = fst.final(s).value
            if not math.isinf(fw):
                best = min(best, cost + fw)
        for il, ol, w, nxt in arcs[s]:
            ni, no = i, o
            if il:
                if i >= len(ilabels) or ilabels[i] != il:
                    continue
                ni += 1
            if ol:
                if o >= len(olabels) or olabels[o] != ol:
                    continue
                no += 1
            key = (nxt, ni, no)
            if cost + w < dist.get(key, math.inf):
                dist[key] = cost + w
                heapq.heappush(heap, (cost + w, key))
    return best


def table(path) -> dict[str, int]:
    return {line.split()[0]: int(line.split()[1]) for line in Path(path).read_text().splitlines()}
