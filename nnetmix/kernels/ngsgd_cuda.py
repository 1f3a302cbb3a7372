"""numba.cuda kernels of NG-SGD's helper operations (see ngsgd_cpu.py), one set per dtype.

Kept apart from ngsgd_cpu.py so the cpu path never imports numba.cuda, and with ``cuda`` a
module global: the CUDA simulator swaps that global when it runs a kernel.
"""
from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

import math

import numpy as np
from numba import cuda, float64

from nnetmix.kernels.cuda_kernels import TPB
from nnetmix.kernels.cuda_kernels import kernels_for as shared_kernels

__all__ = ["kernels_for"]


@lru_cache(maxsize=None)
def kernels_for(dtype):
    """numba.cuda kernels for one dtype (grid-stride loops; one block for the scalars)."""
    dtype = np.dtype(dtype)
    ONE = dtype.type(1)
    CAST = dtype.type
    block_sum64 = shared_kernels(np.float64).block_sum  # float64 sum over one block

    @cuda.jit
    def append_ones(x, out):
        m = out.shape[1]
        for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
            i = k // m
            j = k - i * m
            out[i, j] = x[i, j] if j < m - 1 else ONE

    @cuda.jit
    def scale_cols(a, c):
        m = a.shape[1]
        for k in range(cuda.grid(1), a.size, cuda.gridsize(1)):
            i = k // m
            j = k - i * m
            a[i, j] *= c[j]

    @cuda.jit
    def scale_rows(src, c, out):
        m = src.shape[1]
        for k in range(cuda.grid(1), src.size, cuda.gridsize(1)):
            i = k // m
            j = k - i * m
            out[i, j] = c[i] * src[i, j]

    @cuda.jit
    def gamma(before, after, out):
        """out[0] = sqrt(|X|^2 / |X^|^2) from the row norms before and after (one block); 1
        when either is zero or not finite, as the host path returns."""
        sh = cuda.shared.array(TPB, float64)
        t = cuda.threadIdx.x
        a = 0.0
        b = 0.0
        for i in range(t, before.size, TPB):
            a += before[i]
            b += after[i]
        xx = block_sum64(sh, a)
        xh = block_sum64(sh, b)
        if t == 0:
            if xx > 0.0 and math.isfinite(xx) and xh > 0.0 and math.isfinite(xh):
                out[0] = math.sqrt(xx / xh)
            else:
                out[0] = 1.0

    @cuda.jit
    def change_norm(g_in, g_out, r_in, r_out, out):
        """out[0] = gamma_in gamma_out sum_i sqrt(r_in[i] r_out[i]) (one block)."""
        sh = cuda.shared.array(TPB, float64)
        t = cuda.threadIdx.x
        a = 0.0
        for i in range(t, r_in.size, TPB):
            a += math.sqrt(r_in[i] * r_out[i])
        s = block_sum64(sh, a)
        if t == 0:
            out[0] = g_in[0] * g_out[0] * s

    @cuda.jit
    def scale_by(a, s1, s2):
        """a *= (s1[0] * s2[0]) cast to a's type, as Backend.scale(a, float) does."""
        f = CAST(s1[0] * s2[0])
        for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
            a[i] *= f

    @cuda.jit
    def max_change(change, lr_coef, allowed, factor, counter):
        """nnet2's max-change-per-sample factor on the device (one thread)."""
        if cuda.grid(1) == 0:
            c = lr_coef * change[0]
            if c > allowed:
                factor[0] = allowed / c
                counter[0] += 1
            else:
                factor[0] = 1.0

    return SimpleNamespace(append_ones=append_ones, scale_cols=scale_cols, scale_rows=scale_rows,
                           gamma=gamma, change_norm=change_norm,
                           scale_by=scale_by, max_change=max_change)
