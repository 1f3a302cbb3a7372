"""GEMM on the GPU: cuBLAS through CuPy when CuPy imports, else a tiled numba.cuda kernel.

The fallback is the textbook shared-memory tiling (TILE x TILE threads, each computing one
element of C from TILE-wide slabs of op(A) and op(B) staged in shared memory). It is correct for
any shape, transposes and alpha/beta, but reaches only a fraction of cuBLAS: install CuPy
(``cupy-cuda12x``) for training on a real GPU.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import config, cuda, from_dtype

__all__ = ["TILE", "gemm_tiled", "gemm_cupy", "cupy_module"]

TILE = 16


@lru_cache(maxsize=None)
def _kernel(dtype):
    dtype = np.dtype(dtype)
    nbt = from_dtype(dtype)
    ZERO = dtype.type(0)

    @cuda.jit(fastmath=True)
    def gemm(a, b, c, trans_a, trans_b, alpha, beta):
        sa = cuda.shared.array((TILE, TILE), nbt)
        sb = cuda.shared.array((TILE, TILE), nbt)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * TILE + ty
        col = cuda.blockIdx.x * TILE + tx
        m, n = c.shape
        k = a.shape[0] if trans_a else a.shape[1]
        acc = ZERO
        for t0 in range(0, k, TILE):
            ka = t0 + tx            # op(A)[row, ka]
            if row < m and ka < k:
                sa[ty, tx] = a[ka, row] if trans_a else a[row, ka]
            else:
                sa[ty, tx] = ZERO
            kb = t0 + ty            # op(B)[kb, col]
            if kb < k and col < n:
                sb[ty, tx] = b[col, kb] if trans_b else b[kb, col]
            else:
                sb[ty, tx] = ZERO
            cuda.syncthreads()
            for kk in range(TILE):
                acc += sa[ty, kk] * sb[kk, tx]
            cuda.syncthreads()
        if row < m and col < n:
            if beta == ZERO:        # beta 0 ignores c (it may hold NaN), as BLAS does
                c[row, col] = alpha * acc
            else:
                c[row, col] = alpha * acc + beta * c[row, col]

    return gemm


def gemm_tiled(a, b, out, trans_a: bool, trans_b: bool, alpha: float, beta: float,
               stream=0) -> None:
    m, n = out.shape
    dt = np.dtype(out.dtype)
    grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)
    if grid[0] and grid[1]:
        _kernel(dt)[grid, (TILE, TILE), stream](a, b, out, bool(trans_a), bool(trans_b), dt.type(alpha),
                                        dt.type(beta))


@lru_cache(maxsize=None)
def cupy_module():
    """The cupy module when it imports and we are on a real GPU, else None."""
    if config.ENABLE_CUDASIM:
        return None
    try:
        import cupy
        import cupy.cublas  # noqa: F401
    except Exception:
        return None
    return cupy


def gemm_cupy(cp, a, b, out, trans_a: bool, trans_b: bool, alpha: float, beta: float) -> None:
    """cuBLAS through CuPy on zero-copy CuPy views (__cuda_array_interface__) of our arrays.

    cupy.cublas.gemm writes op(a) @ op(b) * alpha + beta * out into out in place, on CuPy's
    current stream (the caller makes it the backend's).
    """
    ca, cb, cc = cp.asarray(a), cp.asarray(b), cp.asarray(out)
    cp.cublas.gemm("T" if trans_a else "N", "T" if trans_b else "N", ca, cb, out=cc,
                   alpha=alpha, beta=beta)
