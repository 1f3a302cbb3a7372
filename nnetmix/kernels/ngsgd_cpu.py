"""The few non-BLAS operations NG-SGD needs, for the cpu and the cuda backend.

Everything heavy in the online natural gradient (train/ngsgd.py) is a GEMM and goes through
``Backend.gemm``; what is left is elementwise or a row reduction over (frames, dim) matrices:

* ``append_ones(x, out)``: out = [x, 1], the input with the column of ones that carries the bias
  (Kaldi's NaturalGradientAffineComponent preconditions the bias this way);
* ``scale_cols(a, c)``: a[:, j] *= c[j] (H·E, E the diagonal of eigenvalue factors);
* ``scale_rows(src, c, out)``: out[i, :] = c[i] * src[i, :] (the (1-η)(D+ρ)·R part of Y);
* ``row_sqnorms(a, out)``: out[i] = Σ_j a[i, j]² accumulated in float64 (Frobenius norms and the
  per-frame norms of the max-change-per-sample limit);
* ``cols(a, start, stop)``: the column view a[:, start:stop] (the weight and bias parts of the
  preconditioned input). On cuda it is built directly: numba's own slicing walks every row of a
  strided view (about 2 ms for 1024 rows, measured on an H100), which cost more than the GEMMs.

``ngsgd_ops(be)`` returns the set matching a backend: numba ``@njit(parallel=True)`` kernels on
numpy arrays for ``cpu`` (and any numpy-array backend, e.g. the tests' reference one), numba.cuda
kernels for ``cuda`` (ngsgd_cuda.py; they run on the CUDA simulator in the tests).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from nnetmix.errors import NnetmixError

__all__ = ["ngsgd_ops", "CpuNgsgdOps", "CudaNgsgdOps"]

_JIT = dict(parallel=True, fastmath=True, cache=True)


@njit(**_JIT)
def _append_ones_k(x, out):
    n, d = x.shape
    for i in prange(n):
        for j in range(d):
            out[i, j] = x[i, j]
        out[i, d] = 1.0


@njit(**_JIT)
def _scale_cols_k(a, c):
    n, m = a.shape
    for i in prange(n):
        for j in range(m):
            a[i, j] *= c[j]


@njit(**_JIT)
def _scale_rows_k(src, c, out):
    n, m = src.shape
    for i in prange(n):
        s = c[i]
        for j in range(m):
            out[i, j] = s * src[i, j]


@njit(parallel=True, cache=True)   # no fastmath: the float64 accumulation must not be reassociated into float32
def _row_sqnorms_k(a, out):
    n, m = a.shape
    for i in prange(n):
        s = 0.0
        for j in range(m):
            v = np.float64(a[i, j])
            s += v * v
        out[i] = s


def _c2d(a, what: str):
    if a.ndim != 2 or not a.flags.c_contiguous:
        raise NnetmixError(f"ngsgd: {what} must be a C-contiguous 2-D array, got shape {a.shape}")
    return a


class CpuNgsgdOps:
    """numpy arrays (the cpu backend, or any backend whose arrays are numpy arrays)."""

    device = False

    def append_ones(self, x, out) -> None:
        if out.shape != (x.shape[0], x.shape[1] + 1):
            raise NnetmixError(f"ngsgd: append_ones of {x.shape} into {out.shape}")
        _append_ones_k(np.ascontiguousarray(x), _c2d(out, "out"))

    def scale_cols(self, a, c) -> None:
        _scale_cols_k(_c2d(a, "a"), np.ascontiguousarray(c, dtype=a.dtype))

    def scale_rows(self, src, c, out) -> None:
        _scale_rows_k(_c2d(src, "src"), np.ascontiguousarray(c, dtype=src.dtype), _c2d(out, "out"))

    def row_sqnorms(self, a, out) -> None:
        _row_sqnorms_k(_c2d(a, "a"), out)

    def cols(self, a, start: int, stop: int):
        return a[:, start:stop]

    def host(self, a) -> np.ndarray:
        return np.asarray(a)


def _ck():
    # imported here: numba.cuda is optional, and the cpu path must not import it
    from nnetmix.kernels.ngsgd_cuda import kernels_for
    return kernels_for


def _shared():
    # imported here: numba.cuda is optional, and the cpu path must not import it
    from nnetmix.kernels.cuda_kernels import kernels_for
    return kernels_for


class CudaNgsgdOps:
    """numba.cuda device arrays (the cuda backend), queued on the backend's stream.

    ``device`` is True: NG-SGD then keeps the per-minibatch scalars (the Frobenius-norm ratio
    gamma, the max-change norm and factor) in one-element float64 device arrays, so a step that
    does not update the Fisher estimate never waits for the GPU.
    """

    device = True

    def __init__(self, be=None) -> None:
        # imported here: numba.cuda is optional (the cpu backend never builds this class)
        from nnetmix.kernels.cuda_kernels import TPB, blocks_for
        self._tpb, self._blocks = TPB, blocks_for
        self._stream = getattr(be, "_stream", 0)

    def _dev(self, a):
        from nnetmix.kernels.cuda import _dev  # optional: numba.cuda, as above
        return _dev(a)

    def _k(self, dtype, name: str, size: int, single_block: bool = False):
        kern = getattr(_ck()(np.dtype(dtype)), name)
        return kern[1 if single_block else self._blocks(size), self._tpb, self._stream]

    def append_ones(self, x, out) -> None:
        x, out = self._dev(x), self._dev(out)
        if tuple(out.shape) != (x.shape[0], x.shape[1] + 1):
            raise NnetmixError(f"ngsgd: append_ones of {x.shape} into {out.shape}")
        if out.size:
            self._k(out.dtype, "append_ones", out.size)(x, out)

    def scale_cols(self, a, c) -> None:
        a, c = self._dev(a), self._dev(c)
        if a.size:
            self._k(a.dtype, "scale_cols", a.size)(a, c)

    def scale_rows(self, src, c, out) -> None:
        src, c, out = self._dev(src), self._dev(c), self._dev(out)
        if src.size:
            self._k(src.dtype, "scale_rows", src.size)(src, c, out)

    def row_sqnorms(self, a, out) -> None:
        a, out = self._dev(a), self._dev(out)
        if a.shape[0]:
            blocks = max(1, min(1024, a.shape[0]))
            # the backend's per-row reduction without a second matrix
            shared = _shared()(np.dtype(a.dtype)).sq_diff_rows
            shared[blocks, self._tpb, self._stream](a, a, out, False)

    # -- the device-side scalars (float64 arrays of one element) -------------------------------
    def gamma(self, before, after, out) -> None:
        """out[0] = sqrt(sum(before) / sum(after)), or 1 (see ngsgd_cuda.gamma)."""
        self._k(np.float32, "gamma", 1, True)(before, after, out)

    def change_norm(self, g_in, g_out, r_in, r_out, out) -> None:
        self._k(np.float32, "change_norm", 1, True)(g_in, g_out, r_in, r_out, out)

    def scale_by(self, a, s1, s2) -> None:
        """a *= s1[0] * s2[0] (a flat or C-contiguous array)."""
        a = self._dev(a)
        if a.size:
            a = a.reshape(a.size) if a.ndim > 1 else a
            self._k(a.dtype, "scale_by", a.size)(a, s1, s2)

    def max_change(self, change, lr_coef: float, allowed: float, factor, counter) -> None:
        self._k(np.float32, "max_change", 1, True)(change, float(lr_coef), float(allowed),
                                                   factor, counter)

    def cols(self, a, start: int, stop: int):
        from numba import config
        a = self._dev(a)
        n, m = a.shape
        if (config.ENABLE_CUDASIM or not (0 <= start < stop <= m) or n == 0
                or not a.is_c_contiguous()):
            return a[:, start:stop]             # the simulator's arrays slice as numpy does
        from numba.cuda.cudadrv.devicearray import DeviceNDArray
        item = a.dtype.itemsize
        end = (n - 1) * a.strides[0] + stop * item
        return DeviceNDArray((n, stop - start), a.strides, a.dtype,
                             gpu_data=a.gpu_data.view(start * item, end))

    def host(self, a) -> np.ndarray:
        out = self._dev(a).copy_to_host(stream=self._stream)
        if self._stream:
            self._stream.synchronize()
        return out


def ngsgd_ops(be):
    """The NG-SGD helper kernels for backend ``be`` (cpu-style numpy arrays unless cuda)."""
    if getattr(be, "name", "") == "cuda":
        return CudaNgsgdOps(be)
    return CpuNgsgdOps()
