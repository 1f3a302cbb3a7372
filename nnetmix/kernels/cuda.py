"""The cuda backend: numba.cuda device arrays, kernels in cuda_kernels.py, GEMM in gemm_cuda.py.

Arrays are numba DeviceNDArrays; anything exposing ``__cuda_array_interface__`` (a CuPy array)
is accepted as input and viewed without a copy. Kernels, copies and cuBLAS calls are queued on
one stream of the backend's and methods return without waiting, except those whose result is a
host value (softmax_xent, all_finite, xent_collect), which wait for it. The stream is a
blocking one (not created non-blocking), so work other code queues on the legacy default stream
stays ordered with ours. Call ``synchronize()`` before timing or handing device data to MPI.
Bind the process to its GPU first (``nnetmix.kernels.bind_device``) when running several ranks
per node.

Launch cost. numba-cuda spends about 25-35 µs of Python per kernel launch and CuPy about 10 µs
per zero-copy view (bench/cuda_launch.py, H100), against a few µs of GPU time for a small
layer's kernel; a training step of 440-3x512-500 makes about 30 launches. So a trainer records
its step once with :meth:`CudaBackend.capture` (a CUDA graph, through CuPy's stream capture)
and replays it: a replay costs about 1 µs per kernel. The loss of each minibatch stays on the
device (``softmax_xent_rows``/``xent_stash``) and is read back every ``xent_defer``
minibatches, so nothing in the step waits for the GPU.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from ..errors import NnetmixError
from .backend import Backend, StepGraph
from .cublas import Cublas, CublasError
from .cuda_kernels import TPB, blocks_for, kernels_for, stash_kernel
from .gemm_cuda import cupy_module, gemm_cupy, gemm_tiled

__all__ = ["CudaBackend", "CudaGraph"]

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
    """numba.cuda kernels; cuBLAS (our ctypes handle, else CuPy's) or the tiled kernel for GEMM."""

    name = "cuda"

    #: minibatches a trainer leaves on the device before reading their losses back
    xent_defer = 32
    #: slots of the device ring that xent_stash writes (more than xent_defer)
    XENT_RING = 64

    def __init__(self) -> None:
        self._cupy = cupy_module()
        self._scratch: dict = {}
        self._ring: dict = {}
        self._launchers: dict = {}
        self._xent_key = None
        self._blas = None
        if self._cupy is not None:
            self._cp_stream = self._cupy.cuda.Stream(non_blocking=False)
            self._stream = cuda.external_stream(self._cp_stream.ptr)
            try:
                self._blas = Cublas(self._cupy, self._cp_stream.ptr,
                                    cuda.device_array(Cublas.workspace_bytes(), np.uint8))
            except (CublasError, OSError, AttributeError):
                self._blas = None  # CuPy's own cuBLAS wrapper still works, outside graphs
        else:  # the simulator, or a GPU without CuPy: numba's own stream, no graphs
            self._cp_stream = None
            self._stream = cuda.stream()

    def _go(self, kern, grid, block):
        """kern configured for (grid, block) on the backend's stream, kept for the next call."""
        key = (kern, grid, block)
        cfg = self._launchers.get(key)
        if cfg is None:
            cfg = self._launchers[key] = kern[grid, block, self._stream]
        return cfg

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
            dst.copy_to_device(np.ascontiguousarray(src, dtype=dst.dtype), stream=self._stream)
        else:
            dst.copy_to_device(_dev(src), stream=self._stream)

    def fill(self, a, value: float) -> None:
        f = _flat(a)
        if f.size:
            self._go(_k(f).fill, blocks_for(f.size), TPB)(f, f.dtype.type(value))

    # ---- BLAS ----
    def gemm(self, a, b, out, trans_a: bool = False, trans_b: bool = False,
             alpha: float = 1.0, beta: float = 0.0):
        a, b, o = _dev(a), _dev(b), _dev(out)
        m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
        k2, n = (b.shape[1], b.shape[0]) if trans_b else b.shape
        if k != k2 or tuple(o.shape) != (m, n):
            raise NnetmixError(f"cuda backend: gemm shapes op(a) ({m}, {k}) @ op(b) ({k2}, {n}) "
                               f"-> {tuple(o.shape)}")
        if self._blas is not None and self._blas.supports(a, b, o):
            self._blas.gemm(a, b, o, trans_a, trans_b, alpha, beta)
        elif self._cupy is not None:
            with self._cp_stream:
                gemm_cupy(self._cupy, a, b, o, trans_a, trans_b, alpha, beta)
        else:
            gemm_tiled(a, b, o, trans_a, trans_b, alpha, beta, self._stream)
        return out

    def axpy(self, alpha: float, x, y) -> None:
        xf, yf = _flat(x), _flat(y)
        if xf.size != yf.size:
            raise NnetmixError(f"cuda backend: axpy sizes {xf.size} and {yf.size} differ")
        if yf.size:
            self._go(_k(yf).axpy, blocks_for(yf.size), TPB)(yf.dtype.type(alpha), xf, yf)

    def scale(self, a, alpha: float) -> None:
        f = _flat(a)
        if f.size:
            self._go(_k(f).scale, blocks_for(f.size), TPB)(f, f.dtype.type(alpha))

    # ---- fused elementwise forward ----
    def _bias_act(self, z, b, out, kind: int) -> None:
        z2, o2 = _2d(z, "z"), _2d(out, "out")
        bf = _flat(b)
        if bf.size != z2.shape[1] or tuple(o2.shape) != tuple(z2.shape):
            raise NnetmixError(f"cuda backend: bias {bf.shape} / output {o2.shape} do not fit {z2.shape}")
        zf, of = _flat(z2), _flat(o2)
        if zf.size:
            self._go(_k(zf).bias_act, blocks_for(zf.size), TPB)(zf, bf, of, kind)

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
            self._go(_k(xf).act, blocks_for(xf.size), TPB)(xf, of, kind)

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
            self._go(_k(x2).softmax, self._rows_grid(x2.shape[0]), TPB)(x2, _2d(out, "out"))

    # ---- fused elementwise backward ----
    def _act_bwd(self, y, dy, out, kind):
        yf = _flat(y)
        _same_size("activation backward", yf, dy, out)
        if yf.size:
            self._go(_k(yf).act_backward, blocks_for(yf.size), TPB)(yf, _flat(dy), _flat(out), kind)

    def sigmoid_backward(self, y, dy, out) -> None:
        self._act_bwd(y, dy, out, _SIGMOID)

    def tanh_backward(self, y, dy, out) -> None:
        self._act_bwd(y, dy, out, _TANH)

    def _xent_rows(self, logits, targets, probs_out, grad_out):
        """Queue the softmax_xent kernel; returns the (loss, hit) row scratch it writes, or None
        for no rows."""
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
            t = cuda.to_device(t_host, stream=self._stream)
        else:
            t = _flat(targets)
            if t.size != n:
                raise NnetmixError(f"cuda backend: softmax_xent has {n} rows but {t.size} targets")
        if n == 0:
            return None
        key = (n, np.dtype(x.dtype))
        if key not in self._scratch:
            self._scratch[key] = (cuda.device_array(n, dtype=x.dtype),
                                  cuda.device_array(n, dtype=np.int32))
        loss_rows, hit_rows = self._scratch[key]
        self._go(_k(x).softmax_xent, self._rows_grid(n), TPB)(
            x, t, _2d(probs_out, "probs_out"), _2d(grad_out, "grad_out"), loss_rows, hit_rows)
        return key

    def softmax_xent(self, logits, targets, probs_out, grad_out) -> tuple[float, int]:
        key = self._xent_rows(logits, targets, probs_out, grad_out)
        if key is None:
            return 0.0, 0
        loss_rows, hit_rows = self._scratch[key]
        loss = loss_rows.copy_to_host(stream=self._stream)
        hits = hit_rows.copy_to_host(stream=self._stream)
        self._stream.synchronize()
        return float(loss.astype(np.float64).sum()), int(hits.sum())

    def softmax_xent_rows(self, logits, targets, probs_out, grad_out) -> None:
        self._xent_key = self._xent_rows(logits, targets, probs_out, grad_out)

    def xent_stash(self, rows: int):
        """Copy the last softmax_xent_rows' per-row values into a slot of a device ring (one
        launch, no wait); the token is (ring key, slot). At most XENT_RING tokens may wait."""
        key = self._xent_key
        if key is None or key[0] != rows:
            return None
        ring = self._ring.get(key)
        if ring is None:
            n, dt = key
            ring = self._ring[key] = [cuda.device_array((self.XENT_RING, n), dtype=dt),
                                      cuda.device_array((self.XENT_RING, n), dtype=np.int32), 0]
        slot = ring[2]
        ring[2] = (slot + 1) % self.XENT_RING
        loss_rows, hit_rows = self._scratch[key]
        self._go(stash_kernel(key[1]), blocks_for(key[0]), TPB)(loss_rows, hit_rows, ring[0],
                                                                 ring[1], slot)
        return key, slot

    def xent_collect(self, tokens: list) -> list[tuple[float, int]]:
        """One wait and one read-back of each ring in use; sums as softmax_xent sums."""
        self._stream.synchronize()
        host: dict = {}
        out = []
        for tok in tokens:
            if tok is None:
                out.append((0.0, 0))
                continue
            key, slot = tok
            if key not in host:
                ring = self._ring[key]
                host[key] = (ring[0].copy_to_host(), ring[1].copy_to_host())
            loss, hits = host[key]
            out.append((float(loss[slot].astype(np.float64).sum()), int(hits[slot].sum())))
        return out

    def capture(self, fn) -> StepGraph:
        """Record fn's launches into a CUDA graph (CuPy stream capture) on the backend's
        stream; without CuPy (or on the simulator) a record that calls fn again."""
        if self._cp_stream is None:
            return StepGraph(fn)
        return CudaGraph(fn, self._cp_stream)

    def sum_rows(self, x, out, alpha: float = 1.0, beta: float = 0.0) -> None:
        x2 = _2d(x, "x")
        of = _flat(out)
        if of.size != x2.shape[1]:
            raise NnetmixError(f"cuda backend: sum_rows of {x2.shape} into {tuple(of.shape)}")
        if of.size:
            d = of.dtype.type
            self._go(_k(of).sum_rows, (of.size + 31) // 32, (32, 8))(x2, of, d(alpha), d(beta))

    # ---- parameter updates ----
    def sgd_update(self, param, grad, velocity, lr: float, momentum: float, l2: float = 0.0,
                   l1: float = 0.0, num_frames: int = 1) -> None:
        p, g, v = _flat(param), _flat(grad), _flat(velocity)
        if not (p.size == g.size == v.size):
            raise NnetmixError(f"cuda backend: sgd_update sizes param {p.size}, grad {g.size}, "
                               f"velocity {v.size} differ")
        if p.size:
            d = p.dtype.type
            self._go(_k(p).sgd_update, blocks_for(p.size), TPB)(p, g, v, d(lr), d(momentum),
                                                      d(1.0 - lr * l2 * num_frames),
                                                      d(lr * l1 * num_frames))

    def max_norm(self, w, max_norm: float) -> None:
        w2 = _2d(w, "w")
        if max_norm > 0 and w2.size:
            self._go(_k(w2).max_norm, self._rows_grid(w2.shape[0]), TPB)(w2, w2.dtype.type(max_norm))

    # ---- reductions and checks ----
    def binarize(self, probs, u, out) -> None:
        pf, of = _flat(probs), _flat(out)
        uf = _flat(self.asarray(u) if isinstance(u, np.ndarray) else u)
        _same_size("binarize", pf, uf, of)
        if pf.size:
            self._go(_k(of).binarize, blocks_for(pf.size), TPB)(pf, uf, of)

    def sq_diff_rows(self, a, b, out) -> None:
        a2, b2, of = _2d(a, "a"), _2d(b, "b"), _flat(out)
        if tuple(a2.shape) != tuple(b2.shape) or of.size != a2.shape[0]:
            raise NnetmixError(f"cuda backend: sq_diff_rows of {a2.shape} and {b2.shape} into "
                               f"{tuple(of.shape)}")
        if a2.shape[0]:
            self._go(_k(a2).sq_diff_rows, self._rows_grid(a2.shape[0]), TPB)(a2, b2, of, True)

    def argmax_rows(self, x, out) -> None:
        x2 = _2d(x, "x")
        of = _flat(out)
        if np.dtype(of.dtype) != np.int32 or of.size != x2.shape[0]:
            raise NnetmixError(f"cuda backend: argmax_rows output must be int32 of size {x2.shape[0]}")
        if x2.size:
            self._go(_k(x2).argmax_rows, self._rows_grid(x2.shape[0]), TPB)(x2, of)

    def all_finite(self, a) -> bool:
        f = _flat(a)
        if f.size == 0:
            return True
        flag = cuda.to_device(np.zeros(1, np.int32), stream=self._stream)
        self._go(_k(f).count_nonfinite, blocks_for(f.size), TPB)(f, flag)
        bad = flag.copy_to_host(stream=self._stream)
        self._stream.synchronize()
        return int(bad[0]) == 0

    def synchronize(self) -> None:
        self._stream.synchronize()
        cuda.synchronize()


class CudaGraph(StepGraph):
    """fn's device work captured once as a CUDA graph and replayed on the same stream.

    The arrays fn touches must stay allocated while the graph lives (their addresses are in
    it); scalars (learning rate, momentum) are fixed at capture, so a trainer captures again
    when they change. A capture that fails (fn read something back to the host, say) raises
    the CUDA error after the capture is closed, leaving the stream usable.
    """

    captured = True

    def __init__(self, fn, stream) -> None:
        super().__init__(fn)
        self.stream = stream
        stream.begin_capture()
        try:
            fn()
        finally:
            graph = stream.end_capture()
        self.graph = graph

    def replay(self) -> None:
        self.graph.launch(self.stream)
