"""ML re-estimation of diagonal GMMs and of transition probabilities (what gmm-est does).

GMM update: Kaldi's ``MleDiagGmmUpdate`` (src/gmm/mle-diag-gmm.cc) with its defaults
(``MleDiagGmmOptions``): a Gaussian with occupancy > min_gaussian_occupancy (10; train_mono.sh
uses 3 on the first update) and weight > min_gaussian_weight (1e-5) gets weight occ/sum(occ),
mean = sum(g x)/occ and variance = sum(g x^2)/occ - mean^2 floored at min_variance (0.001).
A Gaussian below either threshold is removed (remove_low_count_gaussians) unless it is the last
of its pdf, and the remaining weights are renormalised; one that is kept keeps its mean and
variance with weight max(occ/sum, min_gaussian_weight).

Transition update: ``TransitionModel::MleUpdate`` (src/hmm/transition-model.cc) with
``MleTransitionUpdateConfig`` defaults: for each transition-state with more than one transition
and at least mincount (5) counts, probabilities become counts/total, then three times over:
renormalise and floor at 0.01. Others keep their probabilities.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nnetmix.hmm.gmm_likelihood import GmmParams, compute_gconsts
from nnetmix.hmm.gmm_stats import GmmAccs
from nnetmix.options import option

__all__ = ["MleGmmOptions", "MleTransitionOptions", "GmmUpdateInfo", "mle_diag_gmm_update",
           "mle_am_update", "mle_transition_update", "ml_objective"]

logger = logging.getLogger(__name__)


@dataclass
class MleGmmOptions:
    """gmm-est's MleDiagGmmOptions (names as Kaldi's --min-gaussian-weight etc.)."""

    min_gaussian_weight: float = option(1.0e-5, "Min Gaussian weight before we remove it.")
    min_gaussian_occupancy: float = option(10.0, "Minimum occupancy to update a Gaussian.")
    min_variance: float = option(0.001, "Variance floor (absolute variance).")
    remove_low_count_gaussians: bool = option(True, "If true, remove Gaussians that fall below "
                                              "the floors.")


@dataclass
class MleTransitionOptions:
    """gmm-est's MleTransitionUpdateConfig (--transition-floor, --transition-min-count)."""

    floor: float = option(0.01, "Floor for transition probabilities")
    mincount: float = option(5.0, "Minimum count required to update transitions from a state")


@dataclass
class GmmUpdateInfo:
    """What gmm-est logs: objective change, count, floored and removed Gaussians."""

    objf_change: float = 0.0
    count: float = 0.0
    floored_elements: int = 0
    floored_gaussians: int = 0
    removed_gaussians: int = 0

    def __iadd__(self, o: "GmmUpdateInfo") -> "GmmUpdateInfo":
        self.objf_change += o.objf_change
        self.count += o.count
        self.floored_elements += o.floored_elements
        self.floored_gaussians += o.floored_gaussians
        self.removed_gaussians += o.removed_gaussians
        return self


def ml_objective(gmm, occ: np.ndarray, mean_acc: np.ndarray, var_acc: np.ndarray) -> float:
    """Kaldi's MlObjective: occ.gconsts + tr(mean_acc means_invvars') - 0.5 tr(var_acc inv_vars')."""
    gc = compute_gconsts(gmm.weights, gmm.means, gmm.vars)
    inv = 1.0 / np.asarray(gmm.vars, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        obj = np.where(occ > 0, occ * gc, 0.0).sum()
    return float(obj + (mean_acc * gmm.means * inv).sum() - 0.5 * (var_acc * inv).sum())


def mle_diag_gmm_update(gmm, occ: np.ndarray, mean_acc: np.ndarray, var_acc: np.ndarray,
                        opts: MleGmmOptions = MleGmmOptions(), pdf: int = -1,
                        ) -> tuple[GmmParams, GmmUpdateInfo]:
    """Update one GMM (an object with .weights/.means/.vars) from its stats."""
    w = np.array(gmm.weights, dtype=np.float64)
    mu = np.array(gmm.means, dtype=np.float64)
    var = np.array(gmm.vars, dtype=np.float64)
    k = len(w)
    occ = np.asarray(occ, dtype=np.float64)
    occ_sum = float(occ.sum())
    info = GmmUpdateInfo(count=occ_sum)
    obj_old = ml_objective(gmm, occ, mean_acc, var_acc)
    prob = occ / occ_sum if occ_sum > 0.0 else np.full(k, 1.0 / k)
    good = (occ > opts.min_gaussian_occupancy) & (prob > opts.min_gaussian_weight)
    if good.any():
        og = occ[good][:, None]
        new_mu = mean_acc[good] / og
        new_var = var_acc[good] / og - new_mu * new_mu
        low = new_var < opts.min_variance
        new_var[low] = opts.min_variance
        info.floored_elements = int(low.sum())
        info.floored_gaussians = int(low.any(1).sum())
        w[good], mu[good], var[good] = prob[good], new_mu, new_var
    to_remove = []
    for i in np.flatnonzero(~good):  # the loop is over starved Gaussians only: few
        if opts.remove_low_count_gaussians and len(to_remove) < k - 1:
            logger.warning("Too little data - removing Gaussian (pdf %d, weight %f, occupation "
                           "count %f, vector size %d)", pdf, prob[i], occ[i], mu.shape[1])
            to_remove.append(i)
        else:
            logger.warning("Gaussian has too little data but not removing it because it is the "
                           "last Gaussian: pdf %d, i = %d, occ = %g, weight = %g",
                           pdf, i, occ[i], prob[i])
            w[i] = max(prob[i], opts.min_gaussian_weight)
    new = GmmParams(w, mu, var)
    info.objf_change = ml_objective(new, occ, mean_acc, var_acc) - obj_old
    if to_remove:
        keep = np.ones(k, dtype=bool)
        keep[to_remove] = False
        kw = w[keep]
        new = GmmParams(kw / kw.sum(), mu[keep], var[keep])
        info.removed_gaussians = len(to_remove)
    return new, info


def mle_am_update(gmms: Sequence, accs: GmmAccs, opts: MleGmmOptions = MleGmmOptions(),
                  ) -> tuple[list[GmmParams], GmmUpdateInfo]:
    """MleAmDiagGmmUpdate: update every pdf's GMM from the summed stats."""
    if len(gmms) != accs.num_pdfs:
        raise ValueError(f"model has {len(gmms)} pdfs, stats have {accs.num_pdfs}")
    out, total = [], GmmUpdateInfo()
    for p, g in enumerate(gmms):
        s = accs.gauss_slice(p)
        if len(g.weights) != s.stop - s.start:
            raise ValueError(f"pdf {p}: model has {len(g.weights)} Gaussians, stats "
                             f"{s.stop - s.start}")
        new, info = mle_diag_gmm_update(g, accs.occ[s], accs.mean_acc[s], accs.var_acc[s],
                                        opts, pdf=p)
        out.append(new)
        total += info
    return out, total


def mle_transition_update(log_probs: np.ndarray, stats: np.ndarray, id2state: np.ndarray,
                          opts: MleTransitionOptions = MleTransitionOptions(),
                          ) -> tuple[np.ndarray, float, float]:
    """New transition log-probs (indexed by transition-id, [0] unused) from counts ``stats``.

    ``id2state[tid]`` is the transition-state of each transition-id (Kaldi's id2state_, [0]
    unused); the transition-ids of a state are consecutive. Returns (log_probs, objf_impr,
    count) like TransitionModel::MleUpdate. Probabilities are float32 as in Kaldi.
    """
    log_probs = np.asarray(log_probs, dtype=np.float64)
    stats = np.asarray(stats, dtype=np.float64)
    id2state = np.asarray(id2state, dtype=np.int64)
    if not (len(log_probs) == len(stats) == len(id2state)):
        raise ValueError(f"transition stats of size {len(stats)}, log-probs {len(log_probs)}, "
                         f"id2state {len(id2state)} differ (index 0 unused in each)")
    new = log_probs.copy()
    objf, count = 0.0, 0.0
    tids = np.arange(1, len(stats))
    states = id2state[1:]
    starts = np.flatnonzero(np.r_[True, states[1:] != states[:-1]])
    ends = np.r_[starts[1:], len(states)]
    floor = np.float32(opts.floor)
    for a, b in zip(starts, ends):  # loop over transition-states (hundreds), not frames
        if b - a < 2:
            continue
        ids = tids[a:b]
        counts = stats[ids]
        tot = counts.sum()
        count += tot
        if tot < opts.mincount:
            continue
        p = (counts / tot).astype(np.float32)
        for _ in range(3):
            p = (p * np.float32(1.0 / p.sum(dtype=np.float32))).astype(np.float32)
            p = np.maximum(p, floor)
        newlp = np.log(p.astype(np.float64))
        objf += float((counts * (newlp - log_probs[ids])).sum())
        new[ids] = np.log(p).astype(np.float64)
    return new, objf, count
