"""numba.cuda versions of lstm_cpu's step kernels, behind the same interface (LstmCudaKernels).

One thread per (stream, cell) pair with grid-stride loops; the GEMMs of the recurrence stay
with the backend (cuBLAS). The arithmetic is lstm_cpu's line for line, so the cuda and cpu
paths agree to rounding; tests/nnet/lstm_cuda_checks.py compares them on numba's simulator.
Kernels are built per dtype (as cuda_kernels.py does) so float32 stays float32 on the GPU.

Why the cell arithmetic is written here and in lstm_cpu.py rather than once as a function both
compile: the cpu step kernel built that way (the cell as a jitted function of the arrays and
(s, j), inlined or not) measured 120-210 ns per cell against 17-35 ns with the loop body
written out (40 x 512 cells, one thread), as numba then no longer optimises the loop.
"""
from __future__ import annotations

import math
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
from numba import cuda

from .cuda_kernels import TPB, blocks_for

__all__ = ["LstmCudaKernels"]


@lru_cache(maxsize=None)
def _kernels(dtype) -> SimpleNamespace:
    dtype = np.dtype(dtype)
    ZERO, ONE = dtype.type(0), dtype.type(1)

    @cuda.jit(device=True)
    def sigm(x):
        return ONE / (ONE + math.exp(-x))

    @cuda.jit(device=True)
    def tanh(x):  # through exp, as lstm_cpu (and Kaldi's cuda kernels)
        return (ONE + ONE) / (ONE + math.exp(-(ONE + ONE) * x)) - ONE

    @cuda.jit(device=True)
    def clip(v, lim):
        return min(max(v, -lim), lim)

    @cuda.jit
    def step_fwd(gifo, c_prev, c, h, m, pi, pf, po, cell_clip, valid):
        S, C = c.shape
        for k in range(cuda.grid(1), S * C, cuda.gridsize(1)):
            s, j = k // C, k % C
            if valid[s] == 0:
                for q in range(4):
                    gifo[s, q * C + j] = ZERO
                c[s, j] = ZERO
                h[s, j] = ZERO
                m[s, j] = ZERO
                continue
            cp = c_prev[s, j]
            g = tanh(gifo[s, j])
            i = sigm(gifo[s, C + j] + pi[j] * cp)
            f = sigm(gifo[s, 2 * C + j] + pf[j] * cp)
            cc = g * i + cp * f
            if cell_clip > ZERO:
                cc = clip(cc, cell_clip)
            o = sigm(gifo[s, 3 * C + j] + po[j] * cc)
            hh = tanh(cc)
            gifo[s, j] = g
            gifo[s, C + j] = i
            gifo[s, 2 * C + j] = f
            gifo[s, 3 * C + j] = o
            c[s, j] = cc
            h[s, j] = hh
            m[s, j] = hh * o

    @cuda.jit
    def step_bwd(dm, y, h, c_prev, dgifo_next, y_next, dc_next, pi, pf, po, d, dc, dh, dr,
                 diff_clip, cell_diff_clip, valid):
        S, C = dc.shape
        P = dr.shape[1]
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for k in range(start, S * P, stride):
            if valid[k // P] == 0:
                dr[k // P, k % P] = ZERO
        for k in range(start, S * C, stride):
            s, j = k // C, k % C
            if valid[s] == 0:
                for q in range(4):
                    d[s, q * C + j] = ZERO
                dc[s, j] = ZERO
                dh[s, j] = ZERO
                dm[s, j] = ZERO
                continue
            g = y[s, j]
            i = y[s, C + j]
            f = y[s, 2 * C + j]
            o = y[s, 3 * C + j]
            hh = h[s, j]
            dmm = dm[s, j]
            dhh = dmm * o * (ONE - hh * hh)
            do = dmm * hh * o * (ONE - o)
            dcc = (dhh + dc_next[s, j] * y_next[s, 2 * C + j] + dgifo_next[s, C + j] * pi[j]
                   + dgifo_next[s, 2 * C + j] * pf[j] + do * po[j])
            if cell_diff_clip > ZERO:
                dcc = clip(dcc, cell_diff_clip)
            df = dcc * c_prev[s, j] * f * (ONE - f)
            di = dcc * g * i * (ONE - i)
            dg = dcc * i * (ONE - g * g)
            if diff_clip > ZERO:
                dg = clip(dg, diff_clip)
                di = clip(di, diff_clip)
                df = clip(df, diff_clip)
                do = clip(do, diff_clip)
            d[s, j] = dg
            d[s, C + j] = di
            d[s, 2 * C + j] = df
            d[s, 3 * C + j] = do
            dc[s, j] = dcc
            dh[s, j] = dhh

    @cuda.jit
    def peephole_grads(d, c_prev, c, gi, gf, go):
        R, C = c.shape
        for j in range(cuda.grid(1), C, cuda.gridsize(1)):
            a = ZERO
            b = ZERO
            e = ZERO
            for r in range(R):
                a += d[r, C + j] * c_prev[r, j]
                b += d[r, 2 * C + j] * c_prev[r, j]
                e += d[r, 3 * C + j] * c[r, j]
            gi[j] = a
            gf[j] = b
            go[j] = e

    @cuda.jit
    def clip_flat(a, lim):
        for k in range(cuda.grid(1), a.size, cuda.gridsize(1)):
            a[k] = clip(a[k], lim)

    @cuda.jit
    def copy_cols(dst, dst_col, src, src_col, ncols):
        """dst[:, dst_col + q] = src[:, src_col + q] for q < ncols."""
        R = dst.shape[0]
        for k in range(cuda.grid(1), R * ncols, cuda.gridsize(1)):
            r, q = k // ncols, k % ncols
            dst[r, dst_col + q] = src[r, src_col + q]

    return SimpleNamespace(step_fwd=step_fwd, step_bwd=step_bwd, peephole_grads=peephole_grads,
                           clip=clip_flat, copy_cols=copy_cols)


class LstmCudaKernels:
    """lstm_cpu.LstmCpuKernels' interface on device arrays, launched on the backend's stream."""

    def __init__(self, be):
        self.be = be

    def _go(self, kern, n: int):
        return self.be._go(kern, blocks_for(max(1, n)), TPB)

    def run_recurrences(self, fns) -> None:
        """One after the other: they queue on the backend's one stream."""
        for f in fns:
            f()

    def valid(self, mask: np.ndarray):
        return cuda.to_device(np.ascontiguousarray(mask, dtype=np.int8))

    def step_fwd(self, gifo, c_prev, c, h, m, pi, pf, po, cell_clip, valid) -> None:
        k = _kernels(gifo.dtype)
        self._go(k.step_fwd, c.size)(gifo, c_prev, c, h, m, pi, pf, po,
                                     gifo.dtype.type(cell_clip), valid)

    def step_bwd(self, dm, y, h, c_prev, dgifo_next, y_next, dc_next, pi, pf, po, d, dc, dh,
                 dr, diff_clip, cell_diff_clip, valid) -> None:
        k, t = _kernels(d.dtype), d.dtype.type
        self._go(k.step_bwd, max(dc.size, dr.size))(
            dm, y, h, c_prev, dgifo_next, y_next, dc_next, pi, pf, po, d, dc, dh, dr,
            t(diff_clip), t(cell_diff_clip), valid)

    def peephole_grads(self, d, c_prev, c, gi, gf, go) -> None:
        self._go(_kernels(d.dtype).peephole_grads, c.shape[1])(d, c_prev, c, gi, gf, go)

    def put_cols(self, y, src, col0: int) -> None:
        n = int(src.shape[1])
        self._go(_kernels(y.dtype).copy_cols, src.size)(y, col0, src, 0, n)

    def get_cols(self, src, col0: int, dst) -> None:
        n = int(dst.shape[1])
        self._go(_kernels(dst.dtype).copy_cols, dst.size)(dst, 0, src, col0, n)

    def zero_rows(self, a, row: int) -> None:
        self.be.fill(a[row], 0.0)

    def host(self, a) -> np.ndarray:
        return self.be.to_host(a)

    def clip(self, a, lim: float) -> None:
        f = a.reshape(a.size) if a.ndim != 1 else a
        self._go(_kernels(a.dtype).clip, f.size)(f, a.dtype.type(lim))
