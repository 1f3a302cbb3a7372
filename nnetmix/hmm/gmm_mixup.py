"""Mixing up: growing the number of Gaussians per pdf by occupancy (gmm-est --mix-up).

``split_targets`` is Kaldi's ``GetSplitTargets`` (src/gmm/model-common.cc): every pdf starts
with one Gaussian; a priority queue keyed by occ^power / num_components repeatedly gives one
more Gaussian to the top pdf, unless (n+1)*min_count >= occ, in which case that pdf is closed;
it stops at the overall target (or when every pdf is closed). So the allocation follows
occupancy^power (gmm-est's default power 0.2; train_mono.sh passes 0.25) and min_count (20).

``split_gmm`` is ``DiagGmm::Split`` (src/gmm/diag-gmm.cc): repeatedly halve the weight of the
heaviest Gaussian and copy it, moving the two means apart by +-perturb_factor (0.01) times a
standard-normal draw times the standard deviation. Kaldi perturbs means_invvars by
perturb * r * sqrt(inv_var), i.e. the mean by perturb * r * stddev, which is what is done here.
The random draws come from a seeded numpy Generator, not Kaldi's RandGauss.
"""
from __future__ import annotations

import heapq
import logging
from typing import Sequence

import numpy as np

from nnetmix.hmm.gmm_likelihood import GmmParams

__all__ = ["split_targets", "split_gmm", "mix_up"]

logger = logging.getLogger(__name__)


def split_targets(occs: np.ndarray, target: int, power: float = 0.2,
                  min_count: float = 20.0) -> np.ndarray:
    """Target number of Gaussians per pdf for an overall ``target`` (GetSplitTargets)."""
    occs = np.asarray(occs, dtype=np.float32)  # Kaldi keeps state occs as BaseFloat
    n = len(occs)
    prio = np.power(occs.astype(np.float64), power).astype(np.float32)
    comps = np.ones(n, dtype=np.int64)
    # heapq is a min-heap: key (-occ/num, pdf). Kaldi's std::priority_queue breaks ties in its
    # own heap order; ties only happen between equal occupancies.
    heap = [(-float(prio[p]) / (1 + 1e-10), p) for p in range(n)]
    heapq.heapify(heap)
    closed = np.zeros(n, dtype=bool)
    num_gauss = n
    while num_gauss < target and heap:
        key, p = heapq.heappop(heap)
        if key == 0.0 or closed[p]:
            logger.warning("Could not split up to %d due to min-count = %g (or no counts at all)",
                           target, min_count)
            break
        if (comps[p] + 1) * min_count >= occs[p]:
            closed[p] = True
            heapq.heappush(heap, (0.0, p))
        else:
            comps[p] += 1
            num_gauss += 1
            heapq.heappush(heap, (-float(prio[p]) / (comps[p] + 1e-10), p))
    return comps


def split_gmm(gmm, target: int, perturb_factor: float = 0.01,
              rng: np.random.Generator | None = None) -> GmmParams:
    """Split a GMM (.weights/.means/.vars) up to ``target`` Gaussians (DiagGmm::Split)."""
    w = np.asarray(gmm.weights, dtype=np.float64)
    k = len(w)
    if target < k or k == 0:
        raise ValueError(f"cannot split from {k} to {target} components")
    if rng is None:
        rng = np.random.default_rng(777)
    weights = np.zeros(target)
    means = np.zeros((target, gmm.means.shape[1]))
    vars = np.zeros_like(means)
    weights[:k], means[:k], vars[:k] = w, gmm.means, gmm.vars
    for cur in range(k, target):  # one new Gaussian per step: a loop over Gaussians
        i = int(np.argmax(weights[:cur]))  # first maximum, as Kaldi's strict '>' scan
        weights[i] /= 2
        weights[cur] = weights[i]
        delta = perturb_factor * rng.standard_normal(means.shape[1]) * np.sqrt(vars[i])
        vars[cur] = vars[i]
        means[cur] = means[i] + delta
        means[i] = means[i] - delta
    return GmmParams(weights, means, vars)


def mix_up(gmms: Sequence, occs: np.ndarray, target: int, power: float = 0.2,
           perturb_factor: float = 0.01, min_count: float = 20.0,
           rng: np.random.Generator | None = None) -> list:
    """AmDiagGmm::SplitByCount: split each pdf whose target exceeds its current size."""
    if len(gmms) != len(occs):
        raise ValueError(f"{len(gmms)} pdfs but {len(occs)} occupancies")
    if rng is None:
        rng = np.random.default_rng(777)
    targets = split_targets(occs, target, power, min_count)
    before = sum(len(g.weights) for g in gmms)
    out = [split_gmm(g, int(t), perturb_factor, rng) if len(g.weights) < t else g
           for g, t in zip(gmms, targets)]
    logger.info("Split %d states with target = %d, power = %g, perturb_factor = %g and "
                "min_count = %g, split #Gauss from %d to %d", len(gmms), target, power,
                perturb_factor, min_count, before, sum(len(g.weights) for g in out))
    return out
