"""A plain-numpy Backend: the float64 reference the nnet tests check components against.

Written from backend.py's contract only (not from the cpu backend), so agreement between the
two is a real check. Every method works for float32 and float64.
"""
from __future__ import annotations

import numpy as np

from nnetmix.kernels.backend import Backend


class NumpyBackend(Backend):
    name = "numpy-reference"

    def asarray(self, a, dtype=None):
        return np.array(a, dtype=dtype if dtype is not None else np.asarray(a).dtype, order="C")

    def to_host(self, a):
        return np.array(a)

    def empty(self, shape, dtype=np.float32):
        return np.empty(shape, dtype=dtype)

    def zeros(self, shape, dtype=np.float32):
        return np.zeros(shape, dtype=dtype)

    def copy(self, dst, src):
        dst[...] = src

    def fill(self, a, value):
        a[...] = value

    def gemm(self, a, b, out, trans_a=False, trans_b=False, alpha=1.0, beta=0.0):
        A = a.T if trans_a else a
        B = b.T if trans_b else b
        res = alpha * (A @ B)
        if beta == 0.0:
            out[...] = res
        else:
            out[...] = res + beta * out
        return out

    def axpy(self, alpha, x, y):
        y += alpha * x.reshape(y.shape)

    def scale(self, a, alpha):
        a *= alpha

    def add_bias(self, z, b):
        z += b[None, :]

    def bias_sigmoid(self, z, b, out):
        out[...] = 1.0 / (1.0 + np.exp(-(z + b[None, :])))

    def bias_tanh(self, z, b, out):
        out[...] = np.tanh(z + b[None, :])

    def sigmoid(self, x, out):
        out[...] = 1.0 / (1.0 + np.exp(-x))

    def tanh(self, x, out):
        out[...] = np.tanh(x)

    def softmax(self, x, out):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        out[...] = e / e.sum(axis=1, keepdims=True)

    def sigmoid_backward(self, y, dy, out):
        out[...] = dy * y * (1 - y)

    def tanh_backward(self, y, dy, out):
        out[...] = dy * (1 - y * y)

    def softmax_xent(self, logits, targets, probs_out, grad_out):
        self.softmax(logits, probs_out)
        rows = np.arange(logits.shape[0])
        t = np.asarray(targets)
        loss = float(-np.log(probs_out[rows, t]).sum())
        correct = int((probs_out.argmax(axis=1) == t).sum())
        grad_out[...] = probs_out
        grad_out[rows, t] -= 1.0
        return loss, correct

    def sum_rows(self, x, out, alpha=1.0, beta=0.0):
        out[...] = alpha * x.sum(axis=0) + (beta * out if beta != 0.0 else 0.0)

    def sgd_update(self, param, grad, velocity, lr, momentum, l2=0.0, l1=0.0, num_frames=1):
        velocity[...] = momentum * velocity + grad
        if l2 != 0.0:
            param -= lr * l2 * num_frames * param
        if l1 != 0.0:  # cu::RegularizeL1(param, velocity, lr*l1*N, lr)
            thr = lr * l1 * num_frames
            nz = param != 0.0
            signed = np.where(param < 0.0, -thr, thr)
            after = param - lr * velocity - signed
            cross = nz & ((after > 0.0) ^ (param > 0.0))
            param[...] = np.where(cross, 0.0, np.where(nz, param - signed, param))
            velocity[...] = np.where(cross, 0.0, velocity)
        param -= lr * velocity

    def max_norm(self, w, max_norm):
        norms = np.sqrt((w * w).sum(axis=1))
        scl = np.maximum(norms / max_norm, 1.0)
        w /= scl[:, None]

    def binarize(self, probs, u, out):
        out[...] = probs > u

    def sq_diff_rows(self, a, b, out):
        d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
        out[...] = (d * d).sum(axis=1)

    def argmax_rows(self, x, out):
        out[...] = x.argmax(axis=1)

    def all_finite(self, a):
        return bool(np.all(np.isfinite(a)))

    def synchronize(self):
        pass
