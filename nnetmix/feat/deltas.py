"""Delta features and frame splicing, as Kaldi's add-deltas and splice-feats compute them.

Both replicate the first and last frame at the edges (Kaldi clamps the frame index). The work
is vectorised over frames: one shifted slice of an edge-padded copy per filter tap, so the cost
is (number of taps) numpy operations per utterance, whatever its length.
"""
from __future__ import annotations

import numpy as np

from nnetmix.errors import UsageError

__all__ = ["delta_scales", "add_deltas", "splice_frames"]


def delta_scales(order: int, window: int) -> list[np.ndarray]:
    """Kaldi's DeltaFeatures scales (src/feat/feature-functions.cc), in float32.

    scales[0] = [1]; scales[i] is scales[i-1] convolved with j/sum(j^2) for j in
    [-window, window], so order 2 with window 2 is a 9-tap filter.
    """
    if order < 0 or window <= 0:
        raise UsageError(f"bad delta options: --delta-order={order} --delta-window={window}")
    scales = [np.ones(1, dtype=np.float32)]
    taps = np.arange(-window, window + 1)
    normalizer = np.float32((taps ** 2).sum())
    for _ in range(order):
        prev = scales[-1]
        cur = np.zeros(len(prev) + 2 * window, dtype=np.float32)
        for j in taps:
            cur[j + window: j + window + len(prev)] += np.float32(j) * prev
        scales.append(cur * (np.float32(1.0) / normalizer))
    return scales


def _pad_edges(feats: np.ndarray, left: int, right: int) -> np.ndarray:
    return np.concatenate([np.repeat(feats[:1], left, axis=0), feats,
                           np.repeat(feats[-1:], right, axis=0)])


def add_deltas(feats: np.ndarray, order: int = 2, window: int = 2) -> np.ndarray:
    """(T, D) -> (T, D*(order+1)): the features, then their deltas up to ``order``."""
    feats = np.asarray(feats, dtype=np.float32)
    if feats.ndim != 2:
        raise UsageError(f"add_deltas expects a matrix, got shape {feats.shape}")
    t, d = feats.shape
    out = np.zeros((t, d * (order + 1)), dtype=np.float32)
    if t == 0:
        return out
    scales = delta_scales(order, window)
    max_off = order * window
    padded = _pad_edges(feats, max_off, max_off)
    for i, sc in enumerate(scales):
        half = (len(sc) - 1) // 2
        block = out[:, i * d:(i + 1) * d]
        for k, s in enumerate(sc):
            if s != 0.0:
                start = max_off - half + k
                block += s * padded[start:start + t]
    return out


def splice_frames(feats: np.ndarray, left_context: int = 4, right_context: int = 4) -> np.ndarray:
    """(T, D) -> (T, D*(left+1+right)): frames t-left..t+right side by side, edges replicated."""
    feats = np.asarray(feats)
    if left_context < 0 or right_context < 0:
        raise UsageError(f"bad splice options: --left-context={left_context} "
                         f"--right-context={right_context}")
    t, d = feats.shape
    width = left_context + 1 + right_context
    out = np.empty((t, d * width), dtype=feats.dtype)
    if t == 0:
        return out
    padded = _pad_edges(feats, left_context, right_context)
    for k in range(width):
        out[:, k * d:(k + 1) * d] = padded[k:k + t]
    return out
