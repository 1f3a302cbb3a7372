"""Log-likelihoods and posteriors of diagonal GMMs for a whole feature matrix at once.

A diagonal GMM is three plain arrays: ``weights (K,)``, ``means (K, D)`` and ``vars (K, D)``
(float64). Any object with those three attributes works (:class:`GmmParams` here, or the
DiagGmm dataclass of :mod:`nnetmix.kaldi.diag_gmm`), so an acoustic model is just a sequence of
them, one per pdf.

Kaldi evaluates a Gaussian in its exponential-family form (src/gmm/diag-gmm.cc,
``DiagGmm::LogLikelihoods`` and ``ComputeGconsts``)::

    log N(x) + log w = gconst + means_invvars . x - 0.5 * inv_vars . x^2
    gconst = log w - 0.5 * D * log(2 pi) - 0.5 * sum(log var) - 0.5 * sum(mean^2 / var)

so all Gaussians of all pdfs for all frames are ONE matrix product of ``[x, x^2]`` (T, 2D)
against the stacked ``[means_invvars; -0.5 inv_vars]`` (2D, G), plus ``gconst``. A pdf's
log-likelihood is the log-sum-exp over its Gaussians (a numba kernel over contiguous segments).
There is no per-frame Python loop anywhere.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple, Optional, Sequence

import numpy as np

__all__ = ["GmmParams", "StackedGmms", "compute_gconsts", "gauss_loglikes", "pdf_loglikes",
           "gauss_posteriors"]

_LOG_2PI = math.log(2.0 * math.pi)


class GmmParams(NamedTuple):
    """One diagonal GMM as plain arrays: weights (K,), means (K, D), vars (K, D), float64."""

    weights: np.ndarray
    means: np.ndarray
    vars: np.ndarray


def compute_gconsts(weights: np.ndarray, means: np.ndarray, vars: np.ndarray) -> np.ndarray:
    """Kaldi's gconsts: the log-likelihood of each weighted Gaussian at x = 0 (K,).

    A zero weight gives -inf (Kaldi keeps -inf, never NaN, so the Gaussian simply never wins).
    """
    weights = np.asarray(weights, dtype=np.float64)
    means = np.asarray(means, dtype=np.float64)
    vars = np.asarray(vars, dtype=np.float64)
    d = means.shape[1]
    with np.errstate(divide="ignore"):
        logw = np.log(weights)
    return (logw - 0.5 * d * _LOG_2PI - 0.5 * np.log(vars).sum(1)
            - 0.5 * (means * means / vars).sum(1))


@dataclass(frozen=True)
class StackedGmms:
    """All Gaussians of a set of pdfs stacked for one GEMM.

    ``offsets[p]:offsets[p+1]`` are the Gaussians of pdf p in the stacked order; ``proj`` is
    (2D, G) = ``[means/vars; -0.5/vars]`` transposed; ``gconsts`` is (G,). ``proj32`` is the same in
    float32 for the fast path (Kaldi itself computes likelihoods in float32).
    """

    offsets: np.ndarray
    proj: np.ndarray
    gconsts: np.ndarray
    proj32: np.ndarray
    gconsts32: np.ndarray

    @property
    def num_pdfs(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_gauss(self) -> int:
        return int(self.offsets[-1])

    @property
    def dim(self) -> int:
        return self.proj.shape[0] // 2

    @classmethod
    def from_gmms(cls, gmms: Sequence) -> "StackedGmms":
        """Stack a sequence of GMMs (objects with .weights, .means, .vars)."""
        if len(gmms) == 0:
            raise ValueError("StackedGmms.from_gmms: no pdfs")
        counts = np.array([len(g.weights) for g in gmms], dtype=np.int64)
        offsets = np.zeros(len(gmms) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        weights = np.concatenate([np.asarray(g.weights, dtype=np.float64) for g in gmms])
        means = np.concatenate([np.asarray(g.means, dtype=np.float64) for g in gmms])
        vars = np.concatenate([np.asarray(g.vars, dtype=np.float64) for g in gmms])
        inv = 1.0 / vars
        proj = np.ascontiguousarray(np.concatenate([means * inv, -0.5 * inv], axis=1).T)
        gconsts = compute_gconsts(weights, means, vars)
        return cls(offsets, proj, gconsts, proj.astype(np.float32),
                   gconsts.astype(np.float32))

    def select(self, pdfs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Column indices (into the stacked Gaussians) of ``pdfs`` and their local offsets."""
        pdfs = np.asarray(pdfs, dtype=np.int64)
        starts, ends = self.offsets[pdfs], self.offsets[pdfs + 1]
        counts = ends - starts
        local = np.zeros(len(pdfs) + 1, dtype=np.int64)
        np.cumsum(counts, out=local[1:])
        cols = np.repeat(starts - local[:-1], counts) + np.arange(local[-1])
        return cols, local


def _lazy_njit(fn):
    """``numba.njit(cache=True, nogil=True)(fn)``, made on the first call. Importing numba and
    loading a cached kernel cost about 0.9 s per process, and most processes that import this
    module (gmm-est, gmm-sum-accs, gmm-boost-silence: a monophone training runs ~150 of them)
    never call a kernel. nogil: decoding threads (gmm-latgen-faster-parallel) run them at once."""
    jitted = None

    @functools.wraps(fn)
    def call(*args):
        nonlocal jitted
        if jitted is None:
            import numba
            jitted = numba.njit(cache=True, nogil=True)(fn)
        return jitted(*args)

    return call


def _design(feats: np.ndarray, dtype) -> np.ndarray:
    x = np.asarray(feats, dtype=dtype)
    if x.ndim != 2:
        raise ValueError(f"features must be a (T, D) matrix, got shape {x.shape}")
    out = np.empty((x.shape[0], 2 * x.shape[1]), dtype=dtype)
    out[:, :x.shape[1]] = x
    np.multiply(x, x, out=out[:, x.shape[1]:])
    return out


def gauss_loglikes(model: StackedGmms, feats: np.ndarray, pdfs: Optional[np.ndarray] = None,
                   dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Weighted log-likelihood of every Gaussian for every frame: (T, G') and its offsets.

    With ``pdfs`` given only those pdfs' Gaussians are computed (G' columns, in that order, with
    ``offsets`` of length len(pdfs)+1); otherwise all, with ``model.offsets``. ``dtype`` float32
    halves the GEMM cost (alignment); float64 is used for accumulation.
    """
    if feats.shape[1] != model.dim:
        raise ValueError(f"feature dim {feats.shape[1]} does not match the model's {model.dim}")
    f32 = np.dtype(dtype) == np.float32
    proj = model.proj32 if f32 else model.proj
    gconsts = model.gconsts32 if f32 else model.gconsts
    if pdfs is None:
        offsets = model.offsets
    else:
        cols, offsets = model.select(pdfs)
        proj, gconsts = proj[:, cols], gconsts[cols]
    ll = _design(feats, proj.dtype) @ proj
    ll += gconsts
    return ll, offsets


@_lazy_njit
def _segment_lse(ll, offsets, out):
    t_n = ll.shape[0]
    p_n = offsets.shape[0] - 1
    for t in range(t_n):
        for p in range(p_n):
            a, b = offsets[p], offsets[p + 1]
            m = -np.inf
            for g in range(a, b):
                if ll[t, g] > m:
                    m = ll[t, g]
            if m == -np.inf:
                out[t, p] = -np.inf
                continue
            s = 0.0
            for g in range(a, b):
                s += math.exp(ll[t, g] - m)
            out[t, p] = m + math.log(s)


@_lazy_njit
def _segment_softmax(ll, offsets, out_lse):
    """In place: each row's segments become posteriors; out_lse gets the per-segment LSE."""
    t_n = ll.shape[0]
    p_n = offsets.shape[0] - 1
    for t in range(t_n):
        for p in range(p_n):
            a, b = offsets[p], offsets[p + 1]
            m = -np.inf
            for g in range(a, b):
                if ll[t, g] > m:
                    m = ll[t, g]
            if m == -np.inf:  # no Gaussian can explain the frame: share equally (never NaN)
                for g in range(a, b):
                    ll[t, g] = 1.0 / (b - a)
                out_lse[t, p] = -np.inf
                continue
            s = 0.0
            for g in range(a, b):
                e = math.exp(ll[t, g] - m)
                ll[t, g] = e
                s += e
            for g in range(a, b):
                ll[t, g] /= s
            out_lse[t, p] = m + math.log(s)


def pdf_loglikes(model: StackedGmms, feats: np.ndarray, pdfs: Optional[np.ndarray] = None,
                 dtype=np.float64) -> np.ndarray:
    """(T, P') log-likelihood of each pdf (all, or the listed ``pdfs`` in that order)."""
    ll, offsets = gauss_loglikes(model, feats, pdfs, dtype)
    out = np.empty((ll.shape[0], len(offsets) - 1), dtype=ll.dtype)
    _segment_lse(ll, offsets, out)
    return out


def gauss_posteriors(model: StackedGmms, feats: np.ndarray, pdfs: Optional[np.ndarray] = None,
                     dtype=np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Posterior of each Gaussian given its pdf, per frame (Kaldi's ComponentPosteriors).

    Returns ``(post (T, G'), pdf_loglikes (T, P'), offsets)``; each pdf's posteriors sum to one.
    """
    ll, offsets = gauss_loglikes(model, feats, pdfs, dtype)
    lse = np.empty((ll.shape[0], len(offsets) - 1), dtype=ll.dtype)
    _segment_softmax(ll, offsets, lse)
    return ll, lse, offsets
