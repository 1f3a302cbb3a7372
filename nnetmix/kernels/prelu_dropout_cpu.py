"""The elementwise work of <ParametricRelu> and <Dropout>, for the cpu and the cuda backend.

nnet1's ParametricRelu (src/nnet/nnet-parametric-relu.h, cu-kernels.cu ``_parametric_relu``)
scales each column by ``alpha[j]`` where the input is > 0 and by ``beta[j]`` elsewhere; its
gradient w.r.t. alpha (beta) is the column sum of max(x, 0) * dy (min(x, 0) * dy). Plain ReLU
is alpha = 1, beta = 0.

nnet1's Dropout (nnet-activation.h) draws a uniform mask per minibatch, zeroes the entries
below the rate and scales the rest by 1 / (1 - rate) at TRAINING time (so the test-time network
is the identity), and backpropagates through the same mask. Here the mask is not stored: it is
a counter-based hash of (seed, step, flat index), so the backward pass recomputes it, and the
cpu and cuda kernels give the same mask bit for bit. The (seed, step) pair lives in a uint64
backend array of two elements; :meth:`advance` (a kernel, so a recorded CUDA graph advances it
on every replay) steps it once per forward pass. An entry is kept when the top 24 bits of its
hash are >= round(rate * 2^24), i.e. with probability 1 - rate to within 2^-24.

The hash is murmur3's 32-bit finaliser (fmix32) on values held in uint64 and masked to 32 bits
after every product (a product of two 32-bit numbers never overflows 64 bits, so the CUDA
simulator's numpy scalars and numba's machine integers agree).

``prelu_dropout_ops(be)`` returns the set for a backend: numba ``@njit(parallel=True)`` kernels
on numpy arrays (cpu, and the tests' numpy backend), numba.cuda kernels on cuda
(prelu_dropout_cuda.py; the tests run them on the CUDA simulator).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from nnetmix.errors import NnetmixError

__all__ = ["prelu_dropout_ops", "CpuPreluDropoutOps", "CudaPreluDropoutOps", "keep_threshold",
           "fmix32", "dropout_keep", "GRAD_BLOCKS"]

_JIT = dict(parallel=True, fastmath=True, cache=True)
M32 = np.uint64(0xFFFFFFFF)
C1 = np.uint64(0x85EBCA6B)
C2 = np.uint64(0xC2B2AE35)
S16, S13 = np.uint64(16), np.uint64(13)
GOLD = np.uint64(0x9E3779B9)
SHIFT8 = np.uint64(8)
ONE = np.uint64(1)
#: row blocks of the alpha/beta gradient sums: fixed, so the bits do not depend on threads
GRAD_BLOCKS = 16


def keep_threshold(rate: float) -> np.uint64:
    """The 24-bit threshold of a dropout rate (entries whose hash is below it are dropped)."""
    if not 0.0 <= rate < 1.0:
        raise NnetmixError(f"dropout rate {rate} is outside [0, 1)")
    return np.uint64(int(round(float(rate) * (1 << 24))))


@njit(inline="always", cache=True)
def fmix32(h):
    """murmur3's finaliser on a 32-bit value held in a uint64."""
    h = h ^ (h >> S16)
    h = (h * C1) & M32
    h = h ^ (h >> S13)
    h = (h * C2) & M32
    return h ^ (h >> S16)


@njit(inline="always", cache=True)
def step_key(seed, step):
    return fmix32((seed ^ fmix32(step & M32)) & M32)


@njit(inline="always", cache=True)
def dropout_keep(seed, key, i, thr):
    """True when flat element i is kept (its hash's top 24 bits >= thr)."""
    h = fmix32(fmix32((np.uint64(i) + key) & M32) ^ seed)
    return (h >> SHIFT8) >= thr


# Branch-free (a product with 0 or 1 and a sum with 0 are exact, so the values are those of
# the select): the loops then vectorise, 2-2.5x faster than the select on 256 x 1024 floats.
@njit(**_JIT)
def _prelu_k(x, alpha, beta, out):
    n, m = x.shape
    for i in prange(n):
        for j in range(m):
            v = x[i, j]
            p = max(v, 0)
            out[i, j] = alpha[j] * p + beta[j] * (v - p)


@njit(**_JIT)
def _prelu_backward_k(x, dy, alpha, beta, out):
    n, m = x.shape
    for i in prange(n):
        for j in range(m):
            pos = x.dtype.type(x[i, j] > 0)
            d = dy[i, j]
            out[i, j] = alpha[j] * (d * pos) + beta[j] * (d - d * pos)


@njit(parallel=True, cache=True)
def _prelu_grad_k(x, dy, g_alpha, g_beta, nblk):
    n, m = x.shape
    pa = np.zeros((nblk, m), x.dtype)
    pb = np.zeros((nblk, m), x.dtype)
    step = (n + nblk - 1) // nblk
    for b in prange(nblk):
        for i in range(b * step, min(n, (b + 1) * step)):
            for j in range(m):
                v = x[i, j] * dy[i, j]
                pos = v * x.dtype.type(x[i, j] > 0)
                pa[b, j] += pos
                pb[b, j] += v - pos
    for j in range(m):
        sa = pa[0, j]
        sb = pb[0, j]
        for b in range(1, nblk):
            sa += pa[b, j]
            sb += pb[b, j]
        g_alpha[j] = sa
        g_beta[j] = sb


@njit(**_JIT)
def _dropout_k(state, thr, scale, x, out):
    seed = state[0]
    key = step_key(seed, state[1])
    for i in prange(x.size):
        out[i] = x[i] * scale if dropout_keep(seed, key, i, thr) else 0


@njit(cache=True)
def _advance_k(state):
    state[1] = (state[1] + ONE) & M32


def _c2d(a, what: str):
    if a.ndim != 2 or not a.flags.c_contiguous:
        raise NnetmixError(f"prelu/dropout: {what} must be a C-contiguous 2-D array, got shape "
                           f"{a.shape}")
    return a


def _check(what: str, x, *others) -> None:
    for o in others:
        if tuple(o.shape) != tuple(x.shape):
            raise NnetmixError(f"prelu/dropout: {what}: shapes {tuple(x.shape)} and "
                               f"{tuple(o.shape)} differ")


def new_state(seed: int) -> np.ndarray:
    """The host (seed, step) pair of a dropout mask stream."""
    return np.array([int(seed) & 0xFFFFFFFF, 0], dtype=np.uint64)


class CpuPreluDropoutOps:
    """numpy arrays (the cpu backend, or any backend whose arrays are numpy arrays)."""

    def prelu(self, x, alpha, beta, out) -> None:
        """out = x > 0 ? alpha * x : beta * x (per column); out may be x."""
        _check("prelu", x, out)
        _prelu_k(_c2d(x, "x"), alpha, beta, _c2d(out, "out"))

    def prelu_backward(self, x, dy, alpha, beta, out) -> None:
        """out = x > 0 ? alpha * dy : beta * dy; out may be dy."""
        _check("prelu_backward", x, dy, out)
        _prelu_backward_k(_c2d(x, "x"), _c2d(dy, "dy"), alpha, beta, _c2d(out, "out"))

    def prelu_grad(self, x, dy, g_alpha, g_beta) -> None:
        """g_alpha[j] = sum_i max(x, 0) dy; g_beta[j] = sum_i min(x, 0) dy (overwritten)."""
        _check("prelu_grad", x, dy)
        nblk = max(1, min(GRAD_BLOCKS, x.shape[0]))
        _prelu_grad_k(_c2d(x, "x"), _c2d(dy, "dy"), g_alpha, g_beta, nblk)

    def state(self, seed: int):
        return new_state(seed)

    def advance(self, state) -> None:
        """Step the mask stream (once per forward pass)."""
        _advance_k(state)

    def dropout(self, state, rate: float, x, out) -> None:
        """out = x * mask / (1 - rate), the mask of the stream's current step; out may be x.
        The backward pass is the same call on the output diff."""
        _check("dropout", x, out)
        _dropout_k(state, keep_threshold(rate), x.dtype.type(1.0 / (1.0 - rate)),
                   _c2d(x, "x").reshape(-1), _c2d(out, "out").reshape(-1))


class CudaPreluDropoutOps:
    """numba.cuda device arrays (the cuda backend), queued on the backend's stream."""

    def __init__(self, be=None) -> None:
        # imported here: numba.cuda is optional (the cpu backend never builds this class)
        from nnetmix.kernels.cuda_kernels import TPB, blocks_for
        self._tpb, self._blocks = TPB, blocks_for
        self._stream = getattr(be, "_stream", 0)

    def _dev(self, a):
        from nnetmix.kernels.cuda import _dev  # optional: numba.cuda, as above
        return _dev(a)

    def _k(self, dtype, name: str, size: int):
        from nnetmix.kernels.prelu_dropout_cuda import kernels_for  # optional: numba.cuda
        return getattr(kernels_for(np.dtype(dtype)), name)[self._blocks(size), self._tpb,
                                                            self._stream]

    def prelu(self, x, alpha, beta, out) -> None:
        x, out = self._dev(x), self._dev(out)
        _check("prelu", x, out)
        if x.size:
            self._k(x.dtype, "prelu", x.size)(x, self._dev(alpha), self._dev(beta), out)

    def prelu_backward(self, x, dy, alpha, beta, out) -> None:
        x, dy, out = self._dev(x), self._dev(dy), self._dev(out)
        _check("prelu_backward", x, dy, out)
        if x.size:
            self._k(x.dtype, "prelu_backward", x.size)(x, dy, self._dev(alpha),
                                                       self._dev(beta), out)

    def prelu_grad(self, x, dy, g_alpha, g_beta) -> None:
        x, dy = self._dev(x), self._dev(dy)
        _check("prelu_grad", x, dy)
        m = x.shape[1]
        if m:
            from nnetmix.kernels.prelu_dropout_cuda import COLS, ROWS, kernels_for  # optional
            k = kernels_for(np.dtype(x.dtype)).prelu_grad
            k[(m + COLS - 1) // COLS, (COLS, ROWS), self._stream](
                x, dy, self._dev(g_alpha), self._dev(g_beta))

    def state(self, seed: int):
        from numba import cuda  # optional
        return cuda.to_device(new_state(seed), stream=self._stream)

    def advance(self, state) -> None:
        from nnetmix.kernels.prelu_dropout_cuda import advance  # optional: numba.cuda
        advance[1, 1, self._stream](state)

    def dropout(self, state, rate: float, x, out) -> None:
        x, out = self._dev(x), self._dev(out)
        _check("dropout", x, out)
        if x.size:
            xf, of = x.reshape(x.size), out.reshape(out.size)
            self._k(x.dtype, "dropout", x.size)(state, keep_threshold(rate),
                                                np.dtype(x.dtype).type(1.0 / (1.0 - rate)),
                                                xf, of)


def prelu_dropout_ops(be):
    """The ParametricRelu/Dropout kernels for backend ``be`` (numpy arrays unless cuda)."""
    if getattr(be, "name", "") == "cuda":
        ops = getattr(be, "_prelu_dropout_ops", None)
        if ops is None:
            ops = be._prelu_dropout_ops = CudaPreluDropoutOps(be)
        return ops
    return _CPU


_CPU = CpuPreluDropoutOps()
