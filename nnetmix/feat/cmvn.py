"""Cepstral mean and variance normalisation with Kaldi's stats layout (src/transform/cmvn.cc).

Stats are a 2 x (D+1) float64 matrix: row 0 holds the per-dimension sums and, in the last
column, the frame count; row 1 holds the sums of squares (last column 0). Stats add up, so
per-speaker stats are the sum of the per-utterance ones, and Kaldi tools read ours unchanged.
"""
from __future__ import annotations

import logging

import numpy as np

from nnetmix.errors import NnetmixError, UsageError

__all__ = ["CmvnError", "acc_cmvn_stats", "apply_cmvn", "cmvn_transform"]

logger = logging.getLogger(__name__)

VAR_FLOOR = 1.0e-20  # Kaldi's ApplyCmvn floor on the variance


class CmvnError(NnetmixError):
    """CMVN stats that cannot normalise: too few frames, wrong shape, NaN variance."""


def acc_cmvn_stats(feats: np.ndarray, stats: np.ndarray | None = None,
                   weights: np.ndarray | None = None) -> np.ndarray:
    """Add a (T, D) matrix's sums, squares and count to ``stats`` (a new 2 x (D+1) if None).

    Kaldi's arithmetic (AccCmvnStats), to the last bit: features and weights are float32, each
    frame's ``x * w`` and ``x * x * w`` are rounded to float32 and then added to the float64
    stats one frame after another, in frame order; frames of weight 0 are skipped. Squaring in
    float64, or summing pairwise, gives stats that differ from a Kaldi-written file in the last
    bits, and so do the means and variances derived from them.
    """
    x = np.asarray(feats, dtype=np.float32)
    d = x.shape[1]
    if stats is None:
        stats = np.zeros((2, d + 1), dtype=np.float64)
    elif stats.shape != (2, d + 1):
        raise CmvnError(f"CMVN stats have shape {stats.shape}, features have dim {d}")
    if weights is None:
        w = np.ones((x.shape[0], 1), dtype=np.float32)
        sums, squares = x, x * x
    else:
        w = np.asarray(weights, dtype=np.float32)
        keep = w != 0
        x, w = x[keep], w[keep, None]
        sums, squares = x * w, x * x * w
    stats[0, :d] = _running_sum(stats[0, :d], sums)
    stats[1, :d] = _running_sum(stats[1, :d], squares)
    stats[0, d] = _running_sum(stats[0, d:], w)[0]
    return stats


_BLOCK = 4096  # frames per step: bounds the float64 copy


def _running_sum(start: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``start + rows[0] + rows[1] + ...`` in float64, added strictly in that order.

    numpy sums pairwise only along a contiguous axis: over the rows of a C-ordered matrix of two
    or more columns it adds row after row, which is the order wanted, at the speed of a sum. A
    single column is contiguous along the rows, so it goes through a cumulative sum, which adds
    in order by definition (tests/feat/test_feat_cmvn.py checks both against a frame loop).
    """
    acc = np.asarray(start, dtype=np.float64)
    for i in range(0, rows.shape[0], _BLOCK):
        block = np.empty((min(_BLOCK, rows.shape[0] - i) + 1, acc.shape[0]), dtype=np.float64)
        block[0] = acc
        block[1:] = rows[i:i + _BLOCK]
        acc = block.sum(axis=0) if acc.shape[0] > 1 else np.cumsum(block, axis=0)[-1]
    return acc


def cmvn_transform(stats: np.ndarray, norm_vars: bool = False,
                   key: str = "") -> tuple[np.ndarray, np.ndarray]:
    """(scale, offset) in float32 so that normalised = feats * scale + offset.

    Computed in float64 and stored in float32 as Kaldi's ApplyCmvn does; variances are floored
    at 1e-20 with a warning.
    """
    stats = np.asarray(stats, dtype=np.float64)
    if stats.ndim != 2 or stats.shape[0] != 2 or stats.shape[1] < 2:
        raise CmvnError(f"{key}: CMVN stats must be 2 x (dim+1), got shape {stats.shape}")
    d = stats.shape[1] - 1
    count = stats[0, d]
    if count < 1.0:
        raise CmvnError(f"{key}: insufficient stats for cepstral mean and variance "
                        f"normalization: count = {count:g}")
    mean = stats[0, :d] / count
    if not norm_vars:
        return np.ones(d, dtype=np.float32), (-mean).astype(np.float32)
    var = stats[1, :d] / count - mean * mean
    low = var < VAR_FLOOR
    if low.any():
        for v in var[low]:
            logger.warning("Flooring cepstral variance from %g to %g%s", v, VAR_FLOOR,
                           f" ({key})" if key else "")
        var = np.where(low, VAR_FLOOR, var)
    scale = 1.0 / np.sqrt(var)
    if not np.all(np.isfinite(scale)):
        raise CmvnError(f"{key}: NaN or infinity in cepstral mean/variance computation")
    return scale.astype(np.float32), (-(mean * scale)).astype(np.float32)


def apply_cmvn(stats: np.ndarray, feats: np.ndarray, norm_vars: bool = False,
               norm_means: bool = True, key: str = "") -> np.ndarray:
    """Normalise a (T, D) float32 matrix with CMVN stats (Kaldi's ApplyCmvn).

    ``norm_means=False`` leaves the features alone (Kaldi refuses --norm-vars without
    --norm-means, and so do we).
    """
    feats = np.asarray(feats, dtype=np.float32)
    d = feats.shape[1]
    if np.shape(stats)[-1] != d + 1:
        raise CmvnError(f"{key}: CMVN stats have dim {np.shape(stats)[-1] - 1}, "
                        f"features have dim {d}")
    if not norm_means:
        if norm_vars:
            raise UsageError("You cannot normalize the variance but not the mean.")
        return feats.copy()
    scale, offset = cmvn_transform(stats, norm_vars, key)
    if norm_vars:
        return feats * scale + offset
    return feats + offset
