"""numba.cuda kernels behind the cuda backend, built once per dtype by ``kernels_for(dtype)``.

A factory per dtype (instead of one generic kernel) so constants and shared-memory arrays have
the array's type: a float64 literal in a float32 kernel would make the GPU compute in double.
Elementwise kernels use grid-stride loops over the flat index; row kernels (softmax, argmax,
max-norm) give each row one block of ``TPB`` threads and reduce in shared memory; ``sum_rows``
uses 32 x 8 blocks (32 columns, 8 row-strides) so reads stay coalesced. Under
``NUMBA_ENABLE_CUDASIM=1`` the same code runs on numba's CPU simulator (the tests do that).
"""
from __future__ import annotations

import math
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
from numba import cuda, float64, from_dtype

__all__ = ["kernels_for", "stash_kernel", "TPB", "blocks_for"]

TPB = 128          # threads per block, a power of two (the shared-memory reductions halve it)
MAX_BLOCKS = 1024  # grid-stride loops cover the rest


def blocks_for(n: int) -> int:
    return max(1, min(MAX_BLOCKS, (n + TPB - 1) // TPB))


@lru_cache(maxsize=None)
def kernels_for(dtype) -> SimpleNamespace:
    """All kernels for float32 or float64 arrays."""
    dtype = np.dtype(dtype)
    nbt = from_dtype(dtype)
    ZERO, ONE = dtype.type(0), dtype.type(1)

    @cuda.jit(fastmath=True)
    def fill(a, value):
        for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
            a[i] = value

    @cuda.jit(fastmath=True)
    def scale(a, alpha):
        for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
            a[i] *= alpha

    @cuda.jit(fastmath=True)
    def axpy(alpha, x, y):
        for i in range(cuda.grid(1), y.size, cuda.gridsize(1)):
            y[i] += alpha * x[i]

    @cuda.jit  # exact expf/tanhf: tanh.approx is off by ~8e-6; these are memory-bound
    def bias_act(z, b, out, kind):
        """out = act(z + b) on flat views; kind 0 sigmoid, 1 tanh, 2 identity."""
        m = b.size
        for i in range(cuda.grid(1), z.size, cuda.gridsize(1)):
            v = z[i] + b[i % m]
            if kind == 0:
                v = ONE / (ONE + math.exp(-v))
            elif kind == 1:
                v = math.tanh(v)
            out[i] = v

    @cuda.jit
    def act(x, out, kind):
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            v = x[i]
            if kind == 0:
                v = ONE / (ONE + math.exp(-v))
            else:
                v = math.tanh(v)
            out[i] = v

    @cuda.jit(fastmath=True)
    def act_backward(y, dy, out, kind):
        for i in range(cuda.grid(1), y.size, cuda.gridsize(1)):
            v = y[i]
            if kind == 0:
                out[i] = dy[i] * v * (ONE - v)
            else:
                out[i] = dy[i] * (ONE - v * v)

    @cuda.jit(fastmath=True)
    def sgd_update(param, grad, velocity, lr, momentum, decay, l1_thr):
        """See cpu_kernels.sgd_update_k: nnet1 momentum, L2 decay, Kaldi RegularizeL1, step."""
        for i in range(cuda.grid(1), param.size, cuda.gridsize(1)):
            v = momentum * velocity[i] + grad[i]
            p = param[i] * decay
            if l1_thr != ZERO and p != ZERO:
                l1s = l1_thr if p > ZERO else -l1_thr
                after = p - lr * v - l1s
                if (after > ZERO) != (p > ZERO):
                    p = ZERO
                    v = ZERO
                else:
                    p = p - l1s
            velocity[i] = v
            param[i] = p - lr * v

    @cuda.jit(device=True)
    def block_max(sh, v):
        """Max of v over the block (every thread gets it); sh: shared array of TPB."""
        t = cuda.threadIdx.x
        sh[t] = v
        cuda.syncthreads()
        s = TPB // 2
        while s > 0:
            if t < s:
                sh[t] = max(sh[t], sh[t + s])
            cuda.syncthreads()
            s //= 2
        r = sh[0]
        cuda.syncthreads()
        return r

    @cuda.jit(device=True)
    def block_sum(sh, v):
        t = cuda.threadIdx.x
        sh[t] = v
        cuda.syncthreads()
        s = TPB // 2
        while s > 0:
            if t < s:
                sh[t] += sh[t + s]
            cuda.syncthreads()
            s //= 2
        r = sh[0]
        cuda.syncthreads()
        return r

    @cuda.jit(device=True)
    def block_argmax(sh, shi, v, idx):
        """(max, first index of the max) over the block."""
        t = cuda.threadIdx.x
        sh[t] = v
        shi[t] = idx
        cuda.syncthreads()
        s = TPB // 2
        while s > 0:
            if t < s:
                a, b = sh[t], sh[t + s]
                if b > a or (b == a and shi[t + s] < shi[t]):
                    sh[t] = b
                    shi[t] = shi[t + s]
            cuda.syncthreads()
            s //= 2
        r = shi[0]
        cuda.syncthreads()
        return r

    @cuda.jit(device=True)
    def row_argmax(x, i, sh, shi):
        """First index of the max of row i; a thread with no column offers (x[i, 0], m)."""
        m = x.shape[1]
        best = x[i, 0]
        bi = m
        for j in range(cuda.threadIdx.x, m, TPB):
            v = x[i, j]
            if bi == m or v > best:
                best = v
                bi = j
        return block_argmax(sh, shi, best, bi)

    @cuda.jit(fastmath=True)
    def softmax(x, out):
        sh = cuda.shared.array(TPB, nbt)
        m = x.shape[1]
        t = cuda.threadIdx.x
        for i in range(cuda.blockIdx.x, x.shape[0], cuda.gridDim.x):
            mx = x[i, 0]
            for j in range(t, m, TPB):
                mx = max(mx, x[i, j])
            mx = block_max(sh, mx)
            s = ZERO
            for j in range(t, m, TPB):
                e = math.exp(x[i, j] - mx)
                out[i, j] = e
                s += e
            inv = ONE / block_sum(sh, s)
            for j in range(t, m, TPB):
                out[i, j] *= inv

    @cuda.jit(fastmath=True)
    def softmax_xent(x, targets, probs, grad, loss_rows, hit_rows):
        """Row softmax, grad = probs - onehot, per-row -log p[target] and argmax hit.

        Reads of x (max, argmax, x[target]) finish before probs/grad are written (a block
        barrier inside each reduction), so either output may alias x.
        """
        sh = cuda.shared.array(TPB, nbt)
        shi = cuda.shared.array(TPB, np.int32)
        m = x.shape[1]
        t = cuda.threadIdx.x
        for i in range(cuda.blockIdx.x, x.shape[0], cuda.gridDim.x):
            tgt = targets[i]
            xt = x[i, tgt]
            am = row_argmax(x, i, sh, shi)
            mx = x[i, am]
            cuda.syncthreads()
            s = ZERO
            for j in range(t, m, TPB):
                e = math.exp(x[i, j] - mx)
                probs[i, j] = e
                s += e
            s = block_sum(sh, s)
            inv = ONE / s
            for j in range(t, m, TPB):
                p = probs[i, j] * inv
                probs[i, j] = p
                grad[i, j] = p - ONE if j == tgt else p
            if t == 0:
                loss_rows[i] = math.log(s) - (xt - mx)
                hit_rows[i] = 1 if am == tgt else 0

    @cuda.jit(fastmath=True)
    def argmax_rows(x, out):
        sh = cuda.shared.array(TPB, nbt)
        shi = cuda.shared.array(TPB, np.int32)
        for i in range(cuda.blockIdx.x, x.shape[0], cuda.gridDim.x):
            am = row_argmax(x, i, sh, shi)
            if cuda.threadIdx.x == 0:
                out[i] = am

    @cuda.jit(fastmath=True)
    def max_norm(w, limit):
        sh = cuda.shared.array(TPB, nbt)
        m = w.shape[1]
        t = cuda.threadIdx.x
        for i in range(cuda.blockIdx.x, w.shape[0], cuda.gridDim.x):
            s = ZERO
            for j in range(t, m, TPB):
                s += w[i, j] * w[i, j]
            norm = math.sqrt(block_sum(sh, s))
            if norm > limit:
                scl = limit / norm
                for j in range(t, m, TPB):
                    w[i, j] *= scl

    @cuda.jit(fastmath=True)
    def sum_rows(x, out, alpha, beta):
        """out[j] = alpha * sum_i x[i, j] + beta * out[j]; blocks of 32 columns x 8 row lanes."""
        sh = cuda.shared.array((8, 32), nbt)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        j = cuda.blockIdx.x * 32 + tx
        n, m = x.shape
        acc = ZERO
        if j < m:
            for i in range(ty, n, 8):
                acc += x[i, j]
        sh[ty, tx] = acc
        cuda.syncthreads()
        if ty == 0 and j < m:
            for k in range(1, 8):
                acc += sh[k, tx]
            if beta == ZERO:
                out[j] = alpha * acc
            else:
                out[j] = alpha * acc + beta * out[j]

    @cuda.jit
    def binarize(probs, u, out):
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
            out[i] = ONE if probs[i] > u[i] else ZERO

    @cuda.jit
    def sq_diff_rows(a, b, out, has_b):
        """out[i] = sum_j (a[i, j] - b[i, j])^2 in float64, one block per row; without b
        (has_b False) the squared row norms of a (NG-SGD's row_sqnorms)."""
        sh = cuda.shared.array(TPB, float64)
        t = cuda.threadIdx.x
        m = a.shape[1]
        for i in range(cuda.blockIdx.x, a.shape[0], cuda.gridDim.x):
            s = 0.0
            for j in range(t, m, TPB):
                d = float64(a[i, j]) - float64(b[i, j]) if has_b else float64(a[i, j])
                s += d * d
            s = block_sum(sh, s)
            if t == 0:
                out[i] = s

    @cuda.jit
    def count_nonfinite(a, flag):
        for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
            if not math.isfinite(a[i]):
                cuda.atomic.add(flag, 0, 1)

    return SimpleNamespace(fill=fill, scale=scale, axpy=axpy, bias_act=bias_act, act=act,
                           act_backward=act_backward, sgd_update=sgd_update, softmax=softmax,
                           softmax_xent=softmax_xent, argmax_rows=argmax_rows, max_norm=max_norm,
                           sum_rows=sum_rows, count_nonfinite=count_nonfinite,
                           block_sum=block_sum, binarize=binarize, sq_diff_rows=sq_diff_rows)


@lru_cache(maxsize=None)
def stash_kernel(dtype):
    """ring_loss[slot, :] = loss; ring_hit[slot, :] = hit (one launch for xent_stash)."""

    @cuda.jit
    def stash(loss, hit, ring_loss, ring_hit, slot):
        for i in range(cuda.grid(1), loss.size, cuda.gridsize(1)):
            ring_loss[slot, i] = loss[i]
            ring_hit[slot, i] = hit[i]

    return stash
