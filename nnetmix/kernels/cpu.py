"""The cpu backend: numpy arrays, GEMM through numpy's BLAS, fused work in numba kernels.

Threading. Two thread pools share the cores in one process: OpenBLAS's (GEMM) and numba's
(the prange kernels, OpenMP layer when libgomp is present). They run one after the other, never
at once, so whichever pool is idle must sleep instead of spinning. Measured on the project's
2-core machine: with libgomp's default wait policy (spin) a 2-thread exp over 2M floats took
8 ms against 1.1 ms single-threaded, the spinning workers stealing the cores; with
``OMP_WAIT_POLICY=PASSIVE`` it took 1.1 ms. So this module sets ``OMP_WAIT_POLICY=PASSIVE``
(setdefault: a user's own value wins) before numba loads libgomp, which happens at the first
parallel kernel launch, not at ``import numba``. numba's ``workqueue`` layer (condition
variables, never spins) measured the same and would also do; we keep numba's default layer
selection so other numba code in the process is not forced onto a layer it did not ask for.
Thread counts: OpenBLAS follows ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS`` read when numpy
is imported, numba follows ``NUMBA_NUM_THREADS``; ``set_num_threads`` changes both at run time.
"""
from __future__ import annotations

import contextlib
import ctypes
import glob
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402
import numpy as np  # noqa: E402

from ..errors import NnetmixError  # noqa: E402
from . import cpu_kernels as K  # noqa: E402
from .backend import Array, Backend  # noqa: E402

__all__ = ["CpuBackend", "set_num_threads", "one_blas_thread", "blas_num_threads",
           "SUM_BLOCKS"]

#: row blocks of a column sum (sum_rows_k): fixed, not the thread count, so that the partial sums
#: and therefore the bits do not depend on how many threads run them
SUM_BLOCKS = 16

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_ACT_SIGMOID, _ACT_TANH = 0, 1


def _openblas():
    """numpy's bundled OpenBLAS through ctypes: (sgemm, dgemm, set_num_threads) or None.

    Used for a GEMM with beta != 0 (np.matmul has no beta, so it would need a temporary) and
    to set the BLAS thread count without threadpoolctl. The symbol names are those of the
    scipy-openblas64 build that numpy wheels ship; any other build falls back to np.matmul.
    """
    libdir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libdir, "libscipy_openblas64_*.so"))):
        try:
            lib = ctypes.CDLL(path)
            sgemm, dgemm = lib.scipy_cblas_sgemm64_, lib.scipy_cblas_dgemm64_
            setn = lib.scipy_openblas_set_num_threads64_
        except (OSError, AttributeError):
            continue
        for f, t in ((sgemm, ctypes.c_float), (dgemm, ctypes.c_double)):
            i64, ptr = ctypes.c_int64, ctypes.c_void_p
            f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, i64, i64, i64, t, ptr, i64,
                          ptr, i64, t, ptr, i64]
            f.restype = None
        setn.argtypes = [ctypes.c_int]
        setn.restype = None
        global _LIB
        _LIB = lib
        return sgemm, dgemm, setn
    return None


_LIB = None
_BLAS = _openblas()


def _local_threads():
    """OpenBLAS's openblas_set_num_threads_local (0.3.27 and newer): sets the calling thread's
    BLAS thread count and returns the previous one, leaving other threads' alone; else None."""
    try:
        f = _LIB.openblas_set_num_threads_local
    except AttributeError:   # no numpy OpenBLAS found (_LIB None), or an older OpenBLAS
        return None
    f.argtypes = [ctypes.c_int]
    f.restype = ctypes.c_int
    return f


_SET_LOCAL = _local_threads()


def blas_num_threads() -> int:
    """The calling thread's BLAS thread count (1 where numpy's OpenBLAS was not found)."""
    if _LIB is None:
        return 1
    f = _LIB.scipy_openblas_get_num_threads64_
    f.restype = ctypes.c_int
    return int(f())
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def set_num_threads(n: int) -> None:
    """Use n threads for both BLAS and the numba kernels (from now on, in this process)."""
    numba.set_num_threads(n)
    if _BLAS is not None:
        _BLAS[2](int(n))


@contextlib.contextmanager
def one_blas_thread():
    """Run the block's GEMMs on one BLAS thread (this Python thread's count only, where OpenBLAS
    can set it per thread), then restore the count.

    For long runs of small GEMMs, such as an LSTM's per-frame recurrence (40 x 128 x 1024):
    OpenBLAS's threads synchronise on every call, and on a loaded 2-core machine a call waits
    for a second core: 32-43 ms per GEMM against 0.05-0.45 ms on one thread (bench/
    lstm_step_speed.py). The large GEMMs outside the block keep every thread.
    """
    if _SET_LOCAL is None:
        yield
        return
    old = _SET_LOCAL(1)
    try:
        yield
    finally:
        _SET_LOCAL(old)


def _flat(a: np.ndarray, what: str, writable: bool = False) -> np.ndarray:
    """1-D view of a C-contiguous array; inputs that are not contiguous are copied."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    if writable:
        raise NnetmixError(f"cpu backend: output {what} of shape {a.shape} is not C-contiguous "
                           "(pass a contiguous array or view)")
    return np.ascontiguousarray(a).reshape(-1)


def _c2d(a: np.ndarray, what: str, writable: bool = False) -> np.ndarray:
    if a.ndim != 2:
        raise NnetmixError(f"cpu backend: {what} must be 2-D (frames, dim), got shape {a.shape}")
    if a.flags.c_contiguous:
        return a
    if writable:
        raise NnetmixError(f"cpu backend: output {what} of shape {a.shape} is not C-contiguous")
    return np.ascontiguousarray(a)


def _same_size(what: str, *arrays) -> None:
    """Kernels index flat views: a size mismatch would write past the end of a buffer."""
    if len({a.size for a in arrays}) != 1:
        raise NnetmixError(f"cpu backend: {what}: sizes {[a.shape for a in arrays]} differ")


def _check_float(a: np.ndarray, what: str) -> None:
    if a.dtype not in _FLOATS:
        raise NnetmixError(f"cpu backend: {what} has dtype {a.dtype}, expected float32 or float64")


class CpuBackend(Backend):
    """numpy arrays; np.matmul (OpenBLAS) for GEMM, numba kernels (cpu_kernels.py) for the rest."""

    name = "cpu"

    def __init__(self) -> None:
        self._scratch: dict = {}

    # ---- memory ----
    def asarray(self, a, dtype=None) -> np.ndarray:
        return np.array(a, dtype=dtype if dtype is not None else np.asarray(a).dtype, order="C",
                        copy=True)

    def to_host(self, a) -> np.ndarray:
        return np.array(a, copy=True)

    def empty(self, shape, dtype=np.float32) -> np.ndarray:
        return np.empty(shape, dtype=dtype)

    def zeros(self, shape, dtype=np.float32) -> np.ndarray:
        return np.zeros(shape, dtype=dtype)

    def copy(self, dst, src) -> None:
        if dst.shape != src.shape:
            raise NnetmixError(f"cpu backend: copy from shape {src.shape} into {dst.shape}")
        np.copyto(dst, src)

    def fill(self, a, value: float) -> None:
        a.fill(value)

    def take_rows(self, src, rows, out) -> None:
        np.take(src, rows, axis=0, out=out)

    def put_rows(self, src, rows, out) -> None:
        out.fill(0)
        out[rows] = src

    # ---- BLAS ----
    def gemm(self, a, b, out, trans_a: bool = False, trans_b: bool = False,
             alpha: float = 1.0, beta: float = 0.0) -> np.ndarray:
        opa = a.T if trans_a else a
        opb = b.T if trans_b else b
        m, k = opa.shape
        k2, n = opb.shape
        if k != k2 or out.shape != (m, n):
            raise NnetmixError(f"cpu backend: gemm shapes {opa.shape} @ {opb.shape} -> {out.shape}")
        if beta == 0.0:
            np.matmul(opa, opb, out=out)
            if alpha != 1.0:
                self.scale(out, alpha)
            return out
        dt = out.dtype
        if (_BLAS is not None and dt in _FLOATS and a.dtype == dt and b.dtype == dt
                and a.flags.c_contiguous and b.flags.c_contiguous and out.flags.c_contiguous
                and m > 0 and n > 0 and k > 0):
            f = _BLAS[0] if dt == np.float32 else _BLAS[1]
            f(_ROW_MAJOR, _TRANS if trans_a else _NO_TRANS, _TRANS if trans_b else _NO_TRANS,
              m, n, k, alpha, a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1], beta,
              out.ctypes.data, n)
            return out
        tmp = self._tmp(out.shape, out.dtype)
        np.matmul(opa, opb, out=tmp)
        self.scale(out, beta)
        self.axpy(alpha, tmp, out)
        return out

    def _tmp(self, shape, dtype) -> np.ndarray:
        key = (tuple(shape), np.dtype(dtype))
        if key not in self._scratch:
            self._scratch[key] = np.empty(shape, dtype)
        return self._scratch[key]

    def axpy(self, alpha: float, x, y) -> None:
        if x.size != y.size:
            raise NnetmixError(f"cpu backend: axpy sizes {x.size} and {y.size} differ")
        yf = _flat(y, "y", True)
        K.axpy_k(yf.dtype.type(alpha), _flat(x, "x").astype(yf.dtype, copy=False), yf)

    def scale(self, a, alpha: float) -> None:
        af = _flat(a, "a", True)
        K.scale_k(af, af.dtype.type(alpha))

    # ---- fused elementwise forward ----
    def add_bias(self, z, b) -> None:
        z = _c2d(z, "z", True)
        if b.size != z.shape[1]:
            raise NnetmixError(f"cpu backend: add_bias of {b.shape} to {z.shape}")
        K.add_bias_k(z, _flat(b, "b").astype(z.dtype, copy=False))

    def _bias_act(self, z, b, out, kind: int) -> None:
        _check_float(z, "z")
        z = _c2d(z, "z")
        out = _c2d(out, "out", True)
        if b.size != z.shape[1] or out.shape != z.shape:
            raise NnetmixError(f"cpu backend: bias {b.shape} / output {out.shape} do not fit {z.shape}")
        K.bias_act_k(z, _flat(b, "b").astype(z.dtype, copy=False), out, kind)

    def bias_sigmoid(self, z, b, out) -> None:
        self._bias_act(z, b, out, _ACT_SIGMOID)

    def bias_tanh(self, z, b, out) -> None:
        self._bias_act(z, b, out, _ACT_TANH)

    def sigmoid(self, x, out) -> None:
        _check_float(x, "x")
        _same_size("sigmoid", x, out)
        K.sigmoid_k(_flat(x, "x"), _flat(out, "out", True))

    def tanh(self, x, out) -> None:
        _check_float(x, "x")
        _same_size("tanh", x, out)
        K.tanh_k(_flat(x, "x"), _flat(out, "out", True))

    def softmax(self, x, out) -> None:
        _same_size("softmax", x, out)
        K.softmax_k(_c2d(x, "x"), _c2d(out, "out", True))

    # ---- fused elementwise backward ----
    def sigmoid_backward(self, y, dy, out) -> None:
        _same_size("sigmoid_backward", y, dy, out)
        K.sigmoid_backward_k(_flat(y, "y"), _flat(dy, "dy"), _flat(out, "out", True))

    def tanh_backward(self, y, dy, out) -> None:
        _same_size("tanh_backward", y, dy, out)
        K.tanh_backward_k(_flat(y, "y"), _flat(dy, "dy"), _flat(out, "out", True))

    def softmax_xent(self, logits, targets, probs_out, grad_out) -> tuple[float, int]:
        x = _c2d(logits, "logits")
        _same_size("softmax_xent", x, probs_out, grad_out)
        n, m = x.shape
        t = np.ascontiguousarray(targets, dtype=np.int32).reshape(-1)
        if t.size != n:
            raise NnetmixError(f"cpu backend: softmax_xent has {n} rows but {t.size} targets")
        if n and (t.min() < 0 or t.max() >= m):
            raise NnetmixError(f"cpu backend: softmax_xent target out of range [0, {m}) "
                               f"(min {t.min()}, max {t.max()}; do the alignments fit the model?)")
        loss, correct = K.softmax_xent_k(x, t, _c2d(probs_out, "probs_out", True),
                                         _c2d(grad_out, "grad_out", True))
        return float(loss), int(correct)

    def sum_rows(self, x, out, alpha: float = 1.0, beta: float = 0.0) -> None:
        x = _c2d(x, "x")
        of = _flat(out, "out", True)
        if of.size != x.shape[1]:
            raise NnetmixError(f"cpu backend: sum_rows of {x.shape} into {out.shape}")
        nblk = max(1, min(SUM_BLOCKS, x.shape[0]))
        K.sum_rows_k(x, of, of.dtype.type(alpha), of.dtype.type(beta), nblk)

    # ---- parameter updates ----
    def sgd_update(self, param, grad, velocity, lr: float, momentum: float, l2: float = 0.0,
                   l1: float = 0.0, num_frames: int = 1) -> None:
        p = _flat(param, "param", True)
        v = _flat(velocity, "velocity", True)
        g = _flat(grad, "grad")
        if not (p.size == v.size == g.size):
            raise NnetmixError(f"cpu backend: sgd_update sizes param {p.size}, grad {g.size}, "
                               f"velocity {v.size} differ")
        d = p.dtype.type
        K.sgd_update_k(p, g, v, d(lr), d(momentum), d(1.0 - lr * l2 * num_frames),
                       d(lr * l1 * num_frames))

    def max_norm(self, w, max_norm: float) -> None:
        if max_norm > 0:
            K.max_norm_k(_c2d(w, "w", True), float(max_norm))

    # ---- reductions and checks ----
    def binarize(self, probs, u, out) -> None:
        np.greater(probs, u, out=out, casting="unsafe")

    def sq_diff_rows(self, a, b, out) -> None:
        d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
        np.einsum("ij,ij->i", d, d, out=out)

    def argmax_rows(self, x, out) -> None:
        x = _c2d(x, "x")
        if out.dtype != np.int32 or out.size != x.shape[0]:
            raise NnetmixError(f"cpu backend: argmax_rows output must be int32 of size {x.shape[0]}")
        K.argmax_rows_k(x, _flat(out, "out", True))

    def all_finite(self, a) -> bool:
        af = _flat(a, "a")
        if af.dtype == np.float32:
            return K.count_nonfinite_k(af.view(np.uint32), np.uint32(0x7F800000)) == 0
        if af.dtype == np.float64:
            return K.count_nonfinite_k(af.view(np.uint64), np.uint64(0x7FF0000000000000)) == 0
        return bool(np.isfinite(af).all())

    def synchronize(self) -> None:
        return None
