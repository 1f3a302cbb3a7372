"""numba.cuda kernels of NG-SGD's helper operations (see ngsgd_cpu.py), one set per dtype.

Kept apart from ngsgd_cpu.py so the cpu path never imports numba.cuda, and with ``cuda`` a
module global: the CUDA simulator swaps that global when it runs a kernel.
"""
from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

import numpy as np
from numba import cuda, float64

from nnetmix.kernels.cuda_kernels import TPB

__all__ = ["kernels_for"]


@lru_cache(maxsize=None)
def kernels_for(dtype):
    """numba.cuda kernels for one dtype (grid-stride loops; one block per row for norms)."""
    dtype = np.dtype(dtype)
    ONE = dtype.type(1)

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
    def row_sqnorms(a, out):
        sh = cuda.shared.array(TPB, float64)
        t = cuda.threadIdx.x
        m = a.shape[1]
        for i in range(cuda.blockIdx.x, a.shape[0], cuda.gridDim.x):
            s = 0.0
            for j in range(t, m, TPB):
                v = float64(a[i, j])
                s += v * v
            sh[t] = s
            cuda.syncthreads()
            h = TPB // 2
            while h > 0:
                if t < h:
                    sh[t] += sh[t + h]
                cuda.syncthreads()
                h //= 2
            if t == 0:
                out[i] = sh[0]
            cuda.syncthreads()

    return SimpleNamespace(append_ones=append_ones, scale_cols=scale_cols, scale_rows=scale_rows,
                           row_sqnorms=row_sqnorms)
