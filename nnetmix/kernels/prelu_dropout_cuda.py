"""numba.cuda kernels of <ParametricRelu> and <Dropout> (see prelu_dropout_cpu.py), per dtype.

Kept apart from prelu_dropout_cpu.py so the cpu path never imports numba.cuda. The dropout hash
is the cpu module's, written again as device functions over the same uint64 constants, so both
backends draw the same mask. ``prelu_grad`` sums columns as the backend's ``sum_rows`` does
(blocks of COLS columns x ROWS row lanes, reads coalesced along a row).
"""
from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

import numpy as np
from numba import cuda, from_dtype

from nnetmix.kernels.prelu_dropout_cpu import C1, C2, M32, ONE, S13, S16, SHIFT8

__all__ = ["kernels_for", "advance", "COLS", "ROWS"]

COLS, ROWS = 32, 8


@cuda.jit(device=True, inline=True)
def _fmix32(h):
    h = h ^ (h >> S16)
    h = (h * C1) & M32
    h = h ^ (h >> S13)
    h = (h * C2) & M32
    return h ^ (h >> S16)


@cuda.jit
def advance(state):
    """Step a dropout mask stream (one thread)."""
    if cuda.grid(1) == 0:
        state[1] = (state[1] + ONE) & M32


@lru_cache(maxsize=None)
def kernels_for(dtype) -> SimpleNamespace:
    """The kernels for float32 or float64 arrays."""
    dtype = np.dtype(dtype)
    nbt = from_dtype(dtype)
    ZERO = dtype.type(0)

    @cuda.jit
    def prelu(x, alpha, beta, out):
        m = x.shape[1]
        for k in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            i = k // m
            j = k - i * m
            v = x[i, j]
            out[i, j] = alpha[j] * v if v > ZERO else beta[j] * v

    @cuda.jit
    def prelu_backward(x, dy, alpha, beta, out):
        m = x.shape[1]
        for k in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            i = k // m
            j = k - i * m
            out[i, j] = alpha[j] * dy[i, j] if x[i, j] > ZERO else beta[j] * dy[i, j]

    @cuda.jit
    def prelu_grad(x, dy, g_alpha, g_beta):
        sa = cuda.shared.array((ROWS, COLS), nbt)
        sb = cuda.shared.array((ROWS, COLS), nbt)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        j = cuda.blockIdx.x * COLS + tx
        n, m = x.shape
        a = ZERO
        b = ZERO
        if j < m:
            for i in range(ty, n, ROWS):
                v = x[i, j] * dy[i, j]
                if x[i, j] > ZERO:
                    a += v
                else:
                    b += v
        sa[ty, tx] = a
        sb[ty, tx] = b
        cuda.syncthreads()
        if ty == 0 and j < m:
            for k in range(1, ROWS):
                a += sa[k, tx]
                b += sb[k, tx]
            g_alpha[j] = a
            g_beta[j] = b

    @cuda.jit
    def dropout(state, thr, scale, x, out):
        seed = state[0]
        key = _fmix32((seed ^ _fmix32(state[1] & M32)) & M32)
        for k in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            h = _fmix32(_fmix32((np.uint64(k) + key) & M32) ^ seed)
            out[k] = x[k] * scale if (h >> SHIFT8) >= thr else ZERO

    return SimpleNamespace(prelu=prelu, prelu_backward=prelu_backward, prelu_grad=prelu_grad,
                           dropout=dropout)
