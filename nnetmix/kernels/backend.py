"""The compute-backend contract shared by every nnet component, the trainer and MPI mixing.

One interface, two implementations: ``cpu`` (numpy arrays; GEMM through numpy's BLAS, fused
elementwise work in numba ``@njit`` kernels) and ``cuda`` (numba.cuda device arrays; GEMM through
cuBLAS via CuPy when installed, else a tiled numba.cuda kernel). Components never touch numpy
math on parameters directly: they call these methods, so the same network code runs on both.

Conventions (nnet1's): activations are row-major ``(frames, dim)``; an affine layer's weight is
``W`` of shape ``(out, in)`` and its forward pass is ``Y = X W^T + b``; gradients are the SUM over
the minibatch, not the mean. Every method works for float32 and float64 arrays (float64 is what
the finite-difference gradient checks and the reference tests use). Outputs are written into the
``out`` argument when one is given, so the training step allocates nothing.

Parameters of a network live in ONE contiguous flat buffer per network (``Backend.empty(n)``),
and each component's W and b are reshaped views into it: averaging models over MPI is then one
all-reduce on one buffer, with no packing and no per-layer messages.
"""
from __future__ import annotations

import abc
from typing import Any

import numpy as np

__all__ = ["Backend", "StepGraph"]

Array = Any  # numpy.ndarray on cpu, a numba.cuda DeviceNDArray (or CuPy array) on cuda


class StepGraph:
    """A step that replays by calling its function again (what a host backend captures)."""

    captured = False

    def __init__(self, fn) -> None:
        self.fn = fn

    def replay(self) -> None:
        self.fn()


class Backend(abc.ABC):
    """Abstract compute backend; see the module docstring for the conventions."""

    name: str = "abstract"

    # ---- memory ----
    @abc.abstractmethod
    def asarray(self, a: np.ndarray, dtype=None) -> Array:
        """Copy a host array to the backend (cpu: a C-contiguous numpy array of ``dtype``)."""

    @abc.abstractmethod
    def to_host(self, a: Array) -> np.ndarray:
        """Copy a backend array to a host numpy array."""

    @abc.abstractmethod
    def empty(self, shape, dtype=np.float32) -> Array:
        """Uninitialised C-contiguous array."""

    @abc.abstractmethod
    def zeros(self, shape, dtype=np.float32) -> Array:
        """Zero-filled C-contiguous array."""

    @abc.abstractmethod
    def copy(self, dst: Array, src: Array) -> None:
        """dst[...] = src (same shape)."""

    @abc.abstractmethod
    def fill(self, a: Array, value: float) -> None:
        """a[...] = value."""

    def take_rows(self, src: Array, rows: np.ndarray, out: Array) -> None:
        """out[i] = src[rows[i]] (``rows``: a host integer array; a network's feed-forward tail
        runs on the trained frames only, see Nnet.propagate). The default goes through the
        host, as the trainer's masked loss did before; the cpu backend gathers in place."""
        self.copy(out, np.ascontiguousarray(self.to_host(src)[rows]))

    def put_rows(self, src: Array, rows: np.ndarray, out: Array) -> None:
        """out[rows[i]] = src[i], every other row of ``out`` zero (take_rows' adjoint: the
        derivative of the rows left out is zero). The default goes through the host."""
        full = np.zeros(tuple(out.shape), dtype=out.dtype)
        full[rows] = self.to_host(src)
        self.copy(out, full)

    # ---- BLAS ----
    @abc.abstractmethod
    def gemm(self, a: Array, b: Array, out: Array, trans_a: bool = False, trans_b: bool = False,
             alpha: float = 1.0, beta: float = 0.0) -> Array:
        """out = alpha * op(a) @ op(b) + beta * out, op = transpose when trans_*; returns out."""

    @abc.abstractmethod
    def axpy(self, alpha: float, x: Array, y: Array) -> None:
        """y += alpha * x (any shape, same size)."""

    @abc.abstractmethod
    def scale(self, a: Array, alpha: float) -> None:
        """a *= alpha."""

    # ---- fused elementwise forward ----
    @abc.abstractmethod
    def add_bias(self, z: Array, b: Array) -> None:
        """z[i, :] += b for every row, in place."""

    @abc.abstractmethod
    def bias_sigmoid(self, z: Array, b: Array, out: Array) -> None:
        """out = sigmoid(z + b) (row-broadcast bias); out may be z."""

    @abc.abstractmethod
    def bias_tanh(self, z: Array, b: Array, out: Array) -> None:
        """out = tanh(z + b); out may be z."""

    @abc.abstractmethod
    def sigmoid(self, x: Array, out: Array) -> None:
        """out = 1 / (1 + exp(-x)); out may be x."""

    @abc.abstractmethod
    def tanh(self, x: Array, out: Array) -> None:
        """out = tanh(x); out may be x."""

    @abc.abstractmethod
    def softmax(self, x: Array, out: Array) -> None:
        """Row-wise softmax, numerically stable (max subtracted); out may be x."""

    # ---- fused elementwise backward ----
    @abc.abstractmethod
    def sigmoid_backward(self, y: Array, dy: Array, out: Array) -> None:
        """out = dy * y * (1 - y), y the sigmoid output; out may be dy."""

    @abc.abstractmethod
    def tanh_backward(self, y: Array, dy: Array, out: Array) -> None:
        """out = dy * (1 - y*y), y the tanh output; out may be dy."""

    @abc.abstractmethod
    def softmax_xent(self, logits: Array, targets: Array, probs_out: Array,
                     grad_out: Array) -> tuple[float, int]:
        """Softmax + cross-entropy for integer targets (int32 per row).

        probs_out = softmax(logits); grad_out = probs - onehot(targets) (the gradient of the
        summed loss w.r.t. the logits); returns (sum over rows of -log p[target], number of rows
        whose argmax equals the target). grad_out may be logits.
        """

    def softmax_xent_rows(self, logits: Array, targets: Array, probs_out: Array,
                          grad_out: Array) -> None:
        """softmax_xent without returning its host values: the loss and hit count stay with the
        backend until :meth:`xent_stash` takes them, so a device backend need not wait for the
        GPU every minibatch (and the call can be captured in a graph, see :meth:`capture`).

        The default computes them at once (a host backend loses nothing by it).
        """
        self._xent_last = self.softmax_xent(logits, targets, probs_out, grad_out)

    def xent_stash(self, rows: int):
        """A token for the values of the last softmax_xent_rows over ``rows`` rows; queue work
        only. Read tokens back with :meth:`xent_collect`."""
        return self._xent_last

    def xent_collect(self, tokens: list) -> list[tuple[float, int]]:
        """(loss, correct) of each token, in order: the same numbers softmax_xent returns."""
        return list(tokens)

    #: how many minibatches a trainer may leave in xent_stash before collecting (1: every one)
    xent_defer = 1

    def capture(self, fn) -> "StepGraph":
        """A replayable record of ``fn()``'s device work (a CUDA graph on cuda).

        ``fn`` must only queue backend work on arrays that stay allocated, with no host reads
        (no softmax_xent, all_finite, to_host); each ``replay()`` redoes that work on the
        arrays' current contents. Host backends, and a device backend that cannot capture,
        return a record that simply calls ``fn`` again. Nothing runs until the first replay.
        """
        return StepGraph(fn)

    @abc.abstractmethod
    def sum_rows(self, x: Array, out: Array, alpha: float = 1.0, beta: float = 0.0) -> None:
        """out[j] = alpha * sum_i x[i, j] + beta * out[j] (the bias gradient)."""

    # ---- parameter updates (nnet1 AffineTransform::Update semantics) ----
    @abc.abstractmethod
    def sgd_update(self, param: Array, grad: Array, velocity: Array, lr: float, momentum: float,
                   l2: float = 0.0, l1: float = 0.0, num_frames: int = 1) -> None:
        """One nnet1 update, in place, all arrays the same shape:

        velocity = momentum * velocity + grad;  param -= lr * l2 * num_frames * param;
        L1 (Kaldi's cu::RegularizeL1 with threshold lr * l1 * num_frames: shrink towards zero,
        never across it);  param -= lr * velocity.
        """

    @abc.abstractmethod
    def max_norm(self, w: Array, max_norm: float) -> None:
        """Rescale each row of w whose L2 norm exceeds max_norm down to max_norm (in place)."""

    # ---- CD-1 ----
    @abc.abstractmethod
    def binarize(self, probs: Array, u: Array, out: Array) -> None:
        """out = 1 where probs > u, else 0 (Bernoulli sampling from given uniforms; u may be a
        host array, and of another float type than probs: compared as the wider type)."""

    @abc.abstractmethod
    def sq_diff_rows(self, a: Array, b: Array, out: Array) -> None:
        """out[i] = sum_j (a[i, j] - b[i, j])^2 in float64 (out: float64 of a's rows)."""

    # ---- reductions and checks ----
    @abc.abstractmethod
    def argmax_rows(self, x: Array, out: Array) -> None:
        """out[i] = argmax_j x[i, j] (int32)."""

    @abc.abstractmethod
    def all_finite(self, a: Array) -> bool:
        """True when a holds no NaN or Inf (the trainer rejects an epoch otherwise)."""

    @abc.abstractmethod
    def synchronize(self) -> None:
        """Wait for queued device work (no-op on cpu); call before timing or MPI on device data."""
