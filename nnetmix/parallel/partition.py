"""Per-epoch split of the training utterances across N ranks, balanced by frames.

Each epoch the utterance list (sorted first, so the input order never matters) is shuffled with
a generator seeded by (seed, epoch), then cut into N shares whose frame totals are as equal as
the utterance lengths allow, every utterance on exactly one rank. Every rank computes the same
partition on its own (no messages); check that they agree with
``check_same(comm, "data", partition_digest(...))``. A new shuffle per epoch means a rank sees
different data every epoch, as the seed 002 "N x M" partition does per sweep.

Two balancing methods:

- ``greedy`` (default): longest utterance first to the lightest rank (ties: lowest rank), i.e.
  LPT scheduling; the heaviest rank exceeds the mean by at most one utterance. Each share keeps
  the shuffled order.
- ``contiguous``: the shuffled list cut into N consecutive runs at the frame totals closest to
  k/N of the total; the excess is at most one utterance per cut.

Frame counts come from ``utt2num_frames`` (nnetmix.data.read_utt2num_frames) or the features'
lengths. This is the toolkit's only partition.
"""
from __future__ import annotations

import dataclasses
import hashlib
import heapq
from typing import Mapping, Sequence

import numpy as np

from nnetmix.parallel.agree import agree_minibatches, check_same  # noqa: F401 (re-exported)
from nnetmix.parallel.buffers import ParallelError

__all__ = ["Partition", "partition_utterances", "rank_utterances", "shuffled_utterances",
           "agree_minibatches", "check_same"]

METHODS = ("greedy", "contiguous")


@dataclasses.dataclass
class Partition:
    """One epoch's split: ``parts[r]`` are rank r's utterances, ``frames[r]`` their frames."""

    parts: list[list[str]]
    frames: list[int]

    @property
    def imbalance(self) -> float:
        """max / mean of the per-rank frame totals (1.0 is perfect)."""
        mean = sum(self.frames) / max(len(self.frames), 1)
        return max(self.frames) / mean if mean > 0 else 1.0

    def digest(self) -> str:
        """A hash of the whole split, for check_same across ranks."""
        h = hashlib.sha256()
        for r, part in enumerate(self.parts):
            h.update(f"{r}:{len(part)}\n".encode())
            h.update("\n".join(part).encode())
        return h.hexdigest()


def shuffled_utterances(utts: Sequence[str], epoch: int, seed: int = 777) -> list[str]:
    """The utterances sorted, then permuted by a generator seeded with (seed, epoch)."""
    keys = sorted(utts)
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, int(epoch) & 0xFFFFFFFF])
    return [keys[i] for i in rng.permutation(len(keys))]


def partition_utterances(utt2frames: Mapping[str, int], num_ranks: int, epoch: int = 0,
                         seed: int = 777, method: str = "greedy") -> Partition:
    """Split ``utt2frames``'s utterances over ``num_ranks`` for ``epoch`` (module docstring)."""
    if num_ranks < 1:
        raise ParallelError(f"partition: {num_ranks} ranks")
    if method not in METHODS:
        raise ParallelError(f"partition: unknown method '{method}' (expected one of "
                            f"{', '.join(METHODS)})")
    if len(utt2frames) < num_ranks:
        raise ParallelError(f"partition: {len(utt2frames)} utterances for {num_ranks} ranks "
                            "(every rank needs data: use fewer ranks)")
    bad = [k for k, v in utt2frames.items() if int(v) <= 0]
    if bad:
        raise ParallelError(f"partition: utterance {bad[0]} has {utt2frames[bad[0]]} frames "
                            f"({len(bad)} with no frames; drop them from the data dir)")
    order = shuffled_utterances(list(utt2frames), epoch, seed)
    frames = [int(utt2frames[u]) for u in order]
    owner = [0] * len(order)
    if method == "greedy":
        heap = [(0, r) for r in range(num_ranks)]
        for i in sorted(range(len(order)), key=lambda i: (-frames[i], i)):
            load, r = heapq.heappop(heap)
            owner[i] = r
            heapq.heappush(heap, (load + frames[i], r))
    else:
        cum = np.concatenate([[0], np.cumsum(frames, dtype=np.int64)])  # cum[i]: first i utts
        n, lo = len(frames), 0
        for k in range(1, num_ranks + 1):
            if k == num_ranks:
                cut = n
            else:  # the cut nearest k/N of the total, leaving >= 1 utterance per rank
                target = k * int(cum[-1]) / num_ranks
                i = int(np.searchsorted(cum, target))
                cands = [c for c in (i - 1, i) if lo + 1 <= c <= n - (num_ranks - k)]
                cut = (min(cands, key=lambda c: (abs(cum[c] - target), c)) if cands
                       else min(max(i, lo + 1), n - (num_ranks - k)))
            for j in range(lo, cut):
                owner[j] = k - 1
            lo = cut
    parts: list[list[str]] = [[] for _ in range(num_ranks)]
    tot = [0] * num_ranks
    for u, f, r in zip(order, frames, owner):
        parts[r].append(u)
        tot[r] += f
    return Partition(parts, tot)


def rank_utterances(utt2frames: Mapping[str, int], rank: int, num_ranks: int, epoch: int = 0,
                    seed: int = 777, method: str = "greedy") -> list[str]:
    """This rank's share for ``epoch`` (``partition_utterances(...).parts[rank]``)."""
    if not 0 <= rank < num_ranks:
        raise ParallelError(f"partition: rank {rank} of {num_ranks}")
    return partition_utterances(utt2frames, num_ranks, epoch, seed, method).parts[rank]
