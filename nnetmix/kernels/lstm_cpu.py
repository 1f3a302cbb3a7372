"""Fused numba kernels of the projected LSTM's time steps (host arrays, float32 or float64).

The recurrence of ``nnetmix.nnet.recurrent`` runs per time step as a GEMM for the recurrent
projection (through the backend's BLAS) and ONE of these kernels for everything elementwise:
the gate non-linearities, the peepholes, the cell update and its clipping, the output gate and
the zeroing of padded frames. Fusing them keeps the per-step Python down to three calls instead
of Kaldi's dozen CuMatrix operations. The gate columns of a ``gifo`` block are Kaldi's order,
[g | i | f | o], each ``cell_dim`` wide.

``valid[s]`` is 1 where stream ``s`` still has a frame at this time step, 0 on padding (Kaldi
zeroes every buffer of a padded frame, so no state and no gradient leaks through it).

The forward step's constants (1, 2) come in as arguments of the arrays' dtype: a float literal
is float64 in numba, and ``1.0 / (1.0 + exp(-x))`` on float32 data would then run exp and the
division in float64. With float32 constants a float32 network's gates are computed in float32
(expf), as Kaldi's float CUDA kernels compute them; float64 networks (the gradient checks) are
unchanged.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from nnetmix.kernels.cpu import blas_num_threads, one_blas_thread

__all__ = ["LstmCpuKernels"]

_OPTS = dict(cache=True, nogil=True, fastmath=False)


@numba.njit(**_OPTS)
def _sigm(x, one):
    return one / (one + math.exp(-x))


@numba.njit(**_OPTS)
def _tanh(x, one, two):
    """tanh through exp, as Kaldi's cuda kernels compute it: libm's tanh measured ~3x slower
    than exp here, and the step kernel calls it twice per cell (NaN-free: exp(-2x) = inf
    gives -1)."""
    return two / (one + math.exp(-two * x)) - one


@numba.njit(**_OPTS)
def lstm_step_fwd(gifo, c_prev, c, h, m, pi, pf, po, cell_clip, valid, one, two):
    """gifo (S, 4C) holds the pre-activations in and the activations out; c, h, m (S, C) out;
    ``one``, ``two``: 1 and 2 of the arrays' dtype."""
    S, C = c.shape
    for s in range(S):
        if valid[s] == 0:
            gifo[s, :] = 0.0
            c[s, :] = 0.0
            h[s, :] = 0.0
            m[s, :] = 0.0
            continue
        for j in range(C):
            cp = c_prev[s, j]
            g = _tanh(gifo[s, j], one, two)
            i = _sigm(gifo[s, C + j] + pi[j] * cp, one)
            f = _sigm(gifo[s, 2 * C + j] + pf[j] * cp, one)
            cc = g * i + cp * f
            if cell_clip > 0.0:
                cc = min(max(cc, -cell_clip), cell_clip)
            o = _sigm(gifo[s, 3 * C + j] + po[j] * cc, one)
            hh = _tanh(cc, one, two)
            gifo[s, j] = g
            gifo[s, C + j] = i
            gifo[s, 2 * C + j] = f
            gifo[s, 3 * C + j] = o
            c[s, j] = cc
            h[s, j] = hh
            m[s, j] = hh * o


@numba.njit(**_OPTS)
def lstm_step_bwd(dm, y, h, c_prev, dgifo_next, y_next, dc_next, pi, pf, po, d, dc, dh, dr,
                  diff_clip, cell_diff_clip, valid):
    """One step of BPTT: dm (S, C) = dL/dm(t) (from the projection), y (S, 4C) the gate
    activations at t, *_next those of the step that read this one's state (zeros past the
    end). Writes d (S, 4C) = dL/d[g i f o] pre-activation, dc, dh; zeroes padded rows of dm, dr.
    """
    S, C = dc.shape
    for s in range(S):
        if valid[s] == 0:
            d[s, :] = 0.0
            dc[s, :] = 0.0
            dh[s, :] = 0.0
            dm[s, :] = 0.0
            dr[s, :] = 0.0
            continue
        for j in range(C):
            g = y[s, j]
            i = y[s, C + j]
            f = y[s, 2 * C + j]
            o = y[s, 3 * C + j]
            hh = h[s, j]
            dmm = dm[s, j]
            dhh = dmm * o * (1.0 - hh * hh)
            do = dmm * hh * o * (1.0 - o)
            dcc = (dhh + dc_next[s, j] * y_next[s, 2 * C + j] + dgifo_next[s, C + j] * pi[j]
                   + dgifo_next[s, 2 * C + j] * pf[j] + do * po[j])
            if cell_diff_clip > 0.0:
                dcc = min(max(dcc, -cell_diff_clip), cell_diff_clip)
            df = dcc * c_prev[s, j] * f * (1.0 - f)
            di = dcc * g * i * (1.0 - i)
            dg = dcc * i * (1.0 - g * g)
            if diff_clip > 0.0:
                dg = min(max(dg, -diff_clip), diff_clip)
                di = min(max(di, -diff_clip), diff_clip)
                df = min(max(df, -diff_clip), diff_clip)
                do = min(max(do, -diff_clip), diff_clip)
            d[s, j] = dg
            d[s, C + j] = di
            d[s, 2 * C + j] = df
            d[s, 3 * C + j] = do
            dc[s, j] = dcc
            dh[s, j] = dhh


@numba.njit(**_OPTS)
def peephole_grads(d, c_prev, c, gi, gf, go):
    """gi[j] = sum_r d[r, C+j] c_prev[r, j]; gf likewise with d[:, 2C+j]; go with d[:, 3C+j], c."""
    R, C = c.shape
    for j in range(C):
        gi[j] = 0.0
        gf[j] = 0.0
        go[j] = 0.0
    for r in range(R):
        for j in range(C):
            gi[j] += d[r, C + j] * c_prev[r, j]
            gf[j] += d[r, 2 * C + j] * c_prev[r, j]
            go[j] += d[r, 3 * C + j] * c[r, j]


@numba.njit(**_OPTS)
def clip_k(a, lim):
    for k in range(a.size):
        a[k] = min(max(a[k], -lim), lim)


_POOL: list = []


def _pool() -> ThreadPoolExecutor:
    """One worker thread for a BLSTM's second direction, made at its first use."""
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="lstm-direction"))
    return _POOL[0]


def _one_thread(fn) -> None:
    with one_blas_thread():
        fn()


class LstmCpuKernels:
    """The kernels above behind the interface recurrent.py calls (cuda has the same methods)."""

    def run_recurrences(self, fns) -> None:
        """Run the callables (one direction's recurrence each), each on one BLAS thread: side
        by side, the first in this thread and the others in a pool's, when the process has two
        or more BLAS threads; else one after the other. A recurrence is a long run of small
        GEMMs (S rows) and step kernels (numba, nogil): OpenBLAS's threads synchronising on
        each of them lose more than they gain, while a BLSTM's two directions share nothing.
        Each direction makes the same calls either way, so the results do not change."""
        others = []
        if len(fns) > 1 and blas_num_threads() > 1:
            others = [_pool().submit(_one_thread, f) for f in fns[1:]]
            fns = fns[:1]
        try:
            for f in fns:
                _one_thread(f)
        finally:
            for fut in others:
                fut.result()

    def valid(self, mask: np.ndarray):
        """The per-stream 0/1 mask as the kernels take it (host int8)."""
        return np.ascontiguousarray(mask, dtype=np.int8)

    def step_fwd(self, gifo, c_prev, c, h, m, pi, pf, po, cell_clip, valid) -> None:
        t = gifo.dtype.type
        lstm_step_fwd(gifo, c_prev, c, h, m, pi, pf, po, t(cell_clip), valid, t(1.0), t(2.0))

    def step_bwd(self, dm, y, h, c_prev, dgifo_next, y_next, dc_next, pi, pf, po, d, dc, dh,
                 dr, diff_clip, cell_diff_clip, valid) -> None:
        t = d.dtype.type
        lstm_step_bwd(dm, y, h, c_prev, dgifo_next, y_next, dc_next, pi, pf, po, d, dc, dh, dr,
                      t(diff_clip), t(cell_diff_clip), valid)

    def peephole_grads(self, d, c_prev, c, gi, gf, go) -> None:
        peephole_grads(d, c_prev, c, gi, gf, go)

    def put_cols(self, y, src, col0: int) -> None:
        """y[:, col0:col0 + src cols] = src (the BLSTM's two halves of its output)."""
        y[:, col0:col0 + src.shape[1]] = src

    def get_cols(self, src, col0: int, dst) -> None:
        """dst = src[:, col0:col0 + dst cols]."""
        dst[...] = src[:, col0:col0 + dst.shape[1]]

    def zero_rows(self, a, row: int) -> None:
        a[row] = 0.0

    def host(self, a) -> np.ndarray:
        return np.asarray(a)

    def clip(self, a, lim: float) -> None:
        """a = min(max(a, -lim), lim) in place (a C-contiguous)."""
        clip_k(a.reshape(-1), a.dtype.type(lim))
