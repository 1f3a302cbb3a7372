"""Posteriors over transition-ids from lattices: Kaldi's lattice-to-post (src/latbin/lattice-to-
post.cc, LatticeForwardBackward in src/lat/lattice-functions.cc), what steps/decode_fmllr.sh
turns the speaker-independent pass's lattices into before gmm-est-fmllr.

Kaldi reads a CompactLattice archive as a state-level Lattice (each arc's transition-id string
becomes a chain of arcs). Here the forward-backward runs on the CompactLattice itself, in the
log semiring on -(lm_scale·graph + acoustic_scale·acoustic) costs: an arc's posterior
exp(α(s) - cost + β(next) - total) goes to every transition-id of its string, at the frames the
string covers (a state's frame is the length of the strings leading to it; final strings
count too). Entries of a frame are summed per transition-id and sorted, as Kaldi's
MergePairVectorSumming leaves them. The total log-likelihood is the forward one.
"""
from __future__ import annotations

import logging
import math
from typing import Optional

import numpy as np

from nnetmix.decode.latio import iter_compact_lattices
from nnetmix.decode.lattice import CompactLattice, LatticeError
from nnetmix.errors import UsageError
from nnetmix.kaldi.writer import TableWriter

__all__ = ["compact_lattice_posteriors", "lattice_to_post"]

logger = logging.getLogger(__name__)


def _logadd(x: float, y: float) -> float:
    if x == -math.inf:
        return y
    if y == -math.inf:
        return x
    hi, lo = (x, y) if x > y else (y, x)
    return hi + math.log1p(math.exp(lo - hi))


def compact_lattice_posteriors(clat: CompactLattice, acoustic_scale: float = 1.0,
                               lm_scale: float = 1.0, what: str = "lattice"
                               ) -> tuple[list, float]:
    """(posterior: frames of sorted (transition-id, weight) pairs, total log-likelihood)."""
    if clat.start < 0 or clat.num_states == 0:
        return [], -math.inf
    order = clat.topo_order()
    n = clat.num_states

    def cost(g: float, a: float) -> float:
        return lm_scale * g + acoustic_scale * a

    alpha = [-math.inf] * n
    time = [-1] * n
    alpha[clat.start], time[clat.start] = 0.0, 0
    total = -math.inf
    for s in order:
        if alpha[s] == -math.inf:
            continue
        for _, g, a, tids, nxt in clat.arcs[s]:
            t = time[s] + len(tids)
            if time[nxt] not in (-1, t):
                raise LatticeError(f"{what}: state {nxt} is reached after {time[nxt]} and {t} "
                                   "frames (not a lattice of one utterance)")
            time[nxt] = t
            alpha[nxt] = _logadd(alpha[nxt], alpha[s] - cost(g, a))
        if clat.finals[s] is not None:
            total = _logadd(total, alpha[s] - cost(*clat.finals[s][:2]))
    if total == -math.inf:
        return [], total
    beta = [-math.inf] * n
    for s in reversed(order):
        b = -cost(*clat.finals[s][:2]) if clat.finals[s] is not None else -math.inf
        for _, g, a, _, nxt in clat.arcs[s]:
            b = _logadd(b, beta[nxt] - cost(g, a))
        beta[s] = b
    frames, ids, weights = [], [], []

    def add(start: int, tids: tuple, p: float) -> None:
        if tids and p > 0.0:
            frames.append(np.arange(start, start + len(tids)))
            ids.append(np.asarray(tids, dtype=np.int64))
            weights.append(np.full(len(tids), p))

    num_frames = 0
    for s in order:
        if alpha[s] == -math.inf:
            continue
        for _, g, a, tids, nxt in clat.arcs[s]:
            add(time[s], tids, math.exp(alpha[s] - cost(g, a) + beta[nxt] - total))
        if clat.finals[s] is not None:
            g, a, tids = clat.finals[s]
            num_frames = max(num_frames, time[s] + len(tids))
            add(time[s], tids, math.exp(alpha[s] - cost(g, a) - total))
    post: list = [[] for _ in range(num_frames)]
    if frames:
        f, i, w = np.concatenate(frames), np.concatenate(ids), np.concatenate(weights)
        span = int(i.max()) + 1
        keys, inverse = np.unique(f * span + i, return_inverse=True)
        sums = np.bincount(inverse, weights=w).astype(np.float32)
        for k, p in zip(keys.tolist(), sums.tolist()):
            if p != 0.0:
                post[k // span].append((k % span, p))
    return post, total


def lattice_to_post(rspecifier: str, wspecifier: str, acoustic_scale: float = 1.0,
                    lm_scale: float = 1.0, log: Optional[logging.Logger] = None) -> int:
    """Kaldi's lattice-to-post; returns the number of lattices done."""
    log = log or logger
    if acoustic_scale == 0.0:
        raise UsageError("Do not use a zero acoustic scale (cannot be inverted)")
    done = 0
    total_like = total_time = 0.0
    with TableWriter(wspecifier, "post") as writer:
        for key, clat in iter_compact_lattices(rspecifier):
            post, like = compact_lattice_posteriors(clat, acoustic_scale, lm_scale,
                                                    f"{rspecifier}: key {key}")
            total_like += like
            total_time += len(post)
            writer.write(key, post)
            done += 1
    log.info("Overall average log-like/frame is %s over %s frames.",
             "{:.6g}".format(total_like / total_time) if total_time else "nan",
             "{:.6g}".format(total_time))
    log.info("Done %d lattices.", done)
    return done
