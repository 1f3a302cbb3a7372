"""The cuda backend: numba.cuda device arrays, kernels in cuda_kernels.py, GEMM in gemm_cuda.py.

Arrays are numba DeviceNDArrays; anything exposing ``__cuda_array_interface__`` (a CuPy array)
is accepted as input and viewed without a copy. Kernels are queued on the default stream and
methods return without waiting, except those whose result is a host value (softmax_xent,
all_finite), which wait for it. Call ``synchronize()`` before timing or handing device data to
MPI. Bind the process to its GPU first (``nnetmix.kernels.bind_device``) when running several
ranks per node.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from ..errors import NnetmixError
from .backend import Backend
from .cuda_kernels import TPB, blocks_for, kernels_for
from .gemm_cuda import cupy_module, gemm_cupy, gemm_tiled

__all__ = ["CudaBackend"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_SIGMOID, _TANH, _IDENTITY = 0, 1, 2


def _dev(a):
    """A device-array view of a device array (CuPy arrays included); host arrays are copied."""
    if cuda.devicearray.is_cuda_ndarray(a):      # numba's DeviceNDArray (or the simulator's)
        return a
    if hasattr(a, "__cuda_array_interface__"):   # CuPy and friends: a zero-copy view
        return cuda.as_cuda_array(a)
    return cuda.to_device(np.ascontiguousarray(a))


def _flat(a):
    a = _dev(a)
    if a.ndim == 1:
        return a
    if not a.is_c_contiguous():
        raise NnetmixError(f"cuda backend: array of shape {a.shape} is not C-contiguous")
    return a.reshape(a.size)


def _same_size(what, *arrays):
    if len({a.size for a in arrays}) != 1:
        raise NnetmixError(f"cuda backend: {what}: sizes {[tuple(a.shape) for a in arrays]} differ")


def _k(a):
    dt = np.dtype(a.dtype)
    if dt not in _FLOATS:
        raise NnetmixError(f"cuda backend: dtype {dt} is not float32 or float64")
    return kernels_for(dt)


def _2d(a, what):
    a = _dev(a)
    if a.ndim != 2:
        raise NnetmixError(f"cuda backend: {what} must be 2-D (frames, dim), got shape {a.shape}")
    return a


class CudaBackend(Backend):
    """numba.cuda kernels; cuBLAS (CuPy) or the tiled kernel for GEMM."""

    name = "cuda"

    def __init__(self) -> None:
        self._cupy = cupy_module()
        self._scratch: dict = {}

    # ---- memory ----
    def asarray(self, a, dtype=None):
        a = np.asarray(a)
        return cuda.to_device(np.ascontiguousarray(a, dtype=dtype if dtype is not None else a.dtype))

    def to_host(self, a) -> np.ndarray:
        if isinstance(a, np.ndarray):
            return a.copy()
        return _dev(a).copy_to_host()

    def empty(self, shape, dtype=np.float32):
        return cuda.device_array(shape, dtype=dtype)

    def zeros(self, shape, dtype=np.float32):
        a = cuda.device_array(shape, dtype=dtype)
        if a.size:
            self.fill(a, 0.0)
        return a

    def copy(self, dst, src) -> None:
        if tuple(dst.shape) != tuple(src.shape):
            raise NnetmixError(f"cuda backend: copy from shape {src.shape} into {dst.shape}")
        dst = _dev(dst)
        if isinstance(src, np.ndarray):
            dst.copy_to_device(np.ascontiguousarray(src, dtype=dst.dtype))
        else:
            dst.copy_to_device(_dev(src))

    def fill(self, a, value: float) -> None:
        f = _flat(a)
        if f.size:
            _k(f).fill[blocks_for(f.size), TPB](f, f.dtype.type(value))

    # ---- BLAS ----
    def gemm(self, a, b, out, trans_a: bool = False, trans_b: bool = False,
             alpha: float = 1.0, beta: float = 0.0):
        a, b, o = _dev(a), _dev(b), _dev(out)
        m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
        k2, n = (b.shape[1], b.shape[0]) if trans_b else b.shape
        if k != k2 or tuple(o.shape) != (m, n):
            raise NnetmixError(f"cuda backend: gemm shapes op(a) ({m}, {k}) @ op(b) ({k2}, {n}) "
                               f"-> {tuple(o.shape)}")
        if self._cupy is not None:
            gemm_cupy(self._cupy, a, b, o, trans_a, trans_b, alpha, beta)
        else:
            gemm_tiled(a, b, o, trans_a, trans_b, alpha, beta)
        return out

    def axpy(self, alpha: float, x, y) -> None:
        xf, yf = _flat(x), _flat(y)
        if xf.size != yf.size:
            raise NnetmixError(f"cuda backend: axpy sizes {xf.size} and {yf.size} differ")
        if yf.size:
            _k(yf).axpy[blocks_for(yf.size), TPB](yf.dtype.type(alpha), xf, yf)

    def scale(self, a, alpha: float) -> None:
        f = _flat(a)
        if f.size:
            _k(f).scale[blocks_for(f.size), TPB](f, f.dtype.type(alpha))

    # ---- fused elementwise forward ----
    def _bias_act(self, z, b, out, kind: int) -> None:
        z2, o2 = _2d(z, "z"), _2d(out, "out")
        bf = _flat(b)
        if bf.size != z2.shape[1] or tuple(o2.shape) != tuple(z2.shape):
            raise NnetmixError(f"cuda backend: bias {bf.shape} / output {o2.shape} do not fit {z2.shape}")
        zf, of = _flat(z2), _flat(o2)
        if zf.size:
            _k(zf).bias_act[blocks_for(zf.size), TPB](zf, bf, of, kind)

    def add_bias(self, z, b) -> None:
        self._bias_act(z, b, z, _IDENTITY)

    def bias_sigmoid(self, z, b, out) -> None:
        self._bias_act(z, b, out, _SIGMOID)

    def bias_tanh(self, z, b, out) -> None:
        self._bias_act(z, b, out, _TANH)

    def _act(self, x, out, kind):
        xf, of = _flat(x), _flat(out)
        _same_size("activation", xf, of)
        if xf.size:
            _k(xf).act[blocks_for(xf.size), TPB](xf, of, kind)

    def sigmoid(self, x, out) -> None:
        self._act(x, out, _SIGMOID)

    def tanh(self, x, out) -> None:
        self._act(x, out, _TANH)

    def _rows_grid(self, n: int) -> int:
        return max(1, min(n, 65535))

    def softmax(self, x, out) -> None:
        x2 = _2d(x, "x")
        _same_size("softmax", x2, out)
        if x2.size:
            _k(x2).softmax[self._rows_grid(x2.shape[0]), TPB](x2, _2d(out, "out"))

    # ---- fused elementwise backward ----
    def _act_bwd(self, y, dy, out, kind):
        yf = _flat(y)
        _same_size("activation backward", yf, dy, out)
        if yf.size:
            _k(yf).act_backward[blocks_for(yf.size), TPB](yf, _flat(dy), _flat(out), kind)

    def sigmoid_backward(self, y, dy, out) -> None:
        self._act_bwd(y, dy, out, _SIGMOID)

    def tanh_backward(self, y, dy, out) -> None:
        self._act_bwd(y, dy, out, _TANH)

    def softmax_xent(self, logits, targets, probs_out, grad_out) -> tuple[float, int]:
        x = _2d(logits, "logits")
        _same_size("softmax_xent", x, probs_out, grad_out)
        n, m = x.shape
        if isinstance(targets, np.ndarray):
            t_host = np.ascontiguousarray(targets, dtype=np.int32).reshape(-1)
            if t_host.size != n:
                raise NnetmixError(f"cuda backend: softmax_xent has {n} rows but {t_host.size} targets")
            if n and (t_host.min() < 0 or t_host.max() >= m):
                raise NnetmixError(f"cuda backend: softmax_xent target out of range [0, {m}) "
                                   f"(min {t_host.min()}, max {t_host.max()})")
            t = cuda.to_device(t_host)
        else:
            t = _flat(targets)
            if t.size != n:
                raise NnetmixError(f"cuda backend: softmax_xent has {n} rows but {t.size} targets")
        if n == 0:
            return 0.0, 0
        key = (n, np.dtype(x.dtype))
        if key not in self._scratch:
            self._scratch[key] = (cuda.device_array(n, dtype=x.dtype),
                                  cuda.device_array(n, dtype=np.int32))
        loss_rows, hit_rows = self._scratch[key]
        _k(x).softmax_xent[self._rows_grid(n), TPB](x, t, _2d(probs_out, "probs_out"),
                                                    _2d(grad_out, "grad_out"), loss_rows, hit_rows)
        return (float(loss_rows.copy_to_host().astype(np.float64).sum()),
                int(hit_rows.copy_to_host().sum()))

    def sum_rows(self, x, out, alpha: float = 1.0, beta: float = 0.0) -> None:
        x2 = _2d(x, "x")
        of = _flat(out)
        if of.size != x2.shape[1]:
            raise NnetmixError(f"cuda backend: sum_rows of {x2.shape} into {tuple(of.shape)}")
        if of.size:
            d = of.dtype.type
            _k(of).sum_rows[(of.size + 31) // 32, (32, 8)](x2, of, d(alpha), d(beta))

    # ---- parameter updates ----
    def sgd_update(self, param, grad, velocity, lr: float, momentum: float, l2: float = 0.0,
                   l1: float = 0.0, num_frames: int = 1) -> None:
        p, g, v = _flat(param), _flat(grad), _flat(velocity)
        if not (p.size == g.size == v.size):
            raise NnetmixError(f"cuda backend: sgd_update sizes param {p.size}, grad {g.size}, "
                               f"velocity {v.size} differ")
        if p.size:
            d = p.dtype.type
            _k(p).sgd_update[blocks_for(p.size), TPB](p, g, v, d(lr), d(momentum),
                                                      d(1.0 - lr * l2 * num_frames),
                                                      d(lr * l1 * num_frames))

    def max_norm(self, w, max_norm: float) -> None:
        w2 = _2d(w, "w")
        if max_norm > 0 and w2.size:
            _k(w2).max_norm[self._rows_grid(w2.shape[0]), TPB](w2, w2.dtype.type(max_norm))

    # ---- reductions and checks ----
    def argmax_rows(self, x, out) -> None:
        x2 = _2d(x, "x")
        of = _flat(out)
        if np.dtype(of.dtype) != np.int32 or of.size != x2.shape[0]:
            raise NnetmixError(f"cuda backend: argmax_rows output must be int32 of size {x2.shape[0]}")
        if x2.size:
            _k(x2).argmax_rows[self._rows_grid(x2.shape[0]), TPB](x2, of)

    def all_finite(self, a) -> bool:
        f = _flat(a)
        if f.size == 0:
            return True
        flag = cuda.to_device(np.zeros(1, np.int32))
        _k(f).count_nonfinite[blocks_for(f.size), TPB](f, flag)
        return int(flag.copy_to_host()[0]) == 0

    def synchronize(self) -> None:
        cuda.synchronize()
