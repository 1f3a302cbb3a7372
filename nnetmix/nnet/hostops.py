"""The few layer operations the Backend contract has no kernel for, done on the host.

Splice (a row gather with edge frames replicated), column scaling (Rescale), the Rescale
gradient and the exact softmax Jacobian are not in :class:`~nnetmix.kernels.backend.Backend`.
They only run in the feature transform (once per utterance) or outside training (backprop
through a final Softmax), so they go through ``to_host``/``asarray``/``copy``: on the cpu backend
that is numpy work, on cuda two transfers. A backend may provide a method of the same name
(``splice``, ``splice_backward``, ``mul_cols``, ``rescale_grad``, ``softmax_backward``) to keep
the work on the device; it is then used instead.
"""
from __future__ import annotations

import numpy as np

__all__ = ["splice_index", "splice", "splice_backward", "mul_cols", "rescale_grad",
           "softmax_backward"]


def splice_index(num_frames: int, offsets: np.ndarray) -> np.ndarray:
    """(T, K) source rows: t + offset clamped to [0, T-1], as Kaldi's cu::Splice."""
    t = np.arange(num_frames)[:, None] + np.asarray(offsets, dtype=np.int64)[None, :]
    return np.clip(t, 0, max(num_frames - 1, 0))


def _put(be, out, value: np.ndarray) -> None:
    be.copy(out, be.asarray(np.ascontiguousarray(value), dtype=value.dtype))


def splice(be, x, offsets: np.ndarray, y) -> None:
    """y[t, k*D:(k+1)*D] = x[clamp(t + offsets[k])]."""
    own = getattr(be, "splice", None)
    if own is not None:
        return own(x, offsets, y)
    h = be.to_host(x)
    idx = splice_index(h.shape[0], offsets)
    _put(be, y, h[idx].reshape(h.shape[0], -1))


def splice_backward(be, dy, offsets: np.ndarray, dx) -> None:
    """The adjoint of :func:`splice`: each output block adds into the row it came from.

    Kaldi's Splice::BackpropagateFnc drops the contributions of replicated edge frames; this is
    the exact derivative (what a gradient check expects). Splice sits in the feature transform,
    which nnet1 never trains, so the difference does not reach a model.
    """
    own = getattr(be, "splice_backward", None)
    if own is not None:
        return own(dy, offsets, dx)
    g = be.to_host(dy)
    t, k = g.shape[0], len(offsets)
    idx = splice_index(t, offsets)
    out = np.zeros((t, g.shape[1] // max(k, 1)), dtype=g.dtype)
    np.add.at(out, idx.ravel(), g.reshape(t * k, -1))
    _put(be, dx, out)


def mul_cols(be, x, s, out) -> None:
    """out[i, j] = x[i, j] * s[j]."""
    own = getattr(be, "mul_cols", None)
    if own is not None:
        return own(x, s, out)
    _put(be, out, be.to_host(x) * be.to_host(s)[None, :])


def rescale_grad(be, dy, x, g) -> None:
    """g[j] = sum_i dy[i, j] * x[i, j] (Rescale's gradient, the SUM over frames)."""
    own = getattr(be, "rescale_grad", None)
    if own is not None:
        return own(dy, x, g)
    _put(be, g, np.einsum("ij,ij->j", be.to_host(dy), be.to_host(x)))


def softmax_backward(be, y, dy, dx) -> None:
    """dx = y * (dy - sum_j dy*y), the softmax Jacobian applied to dy."""
    own = getattr(be, "softmax_backward", None)
    if own is not None:
        return own(y, dy, dx)
    hy, hd = be.to_host(y), be.to_host(dy)
    _put(be, dx, hy * (hd - np.einsum("ij,ij->i", hd, hy)[:, None]))
