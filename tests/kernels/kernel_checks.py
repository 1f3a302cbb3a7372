"""Backend-independent checks: every Backend method against a float64 numpy reference.

Each ``check_*(B, dtype, shape)`` builds seeded inputs on the host, runs the method on backend
B, copies the result back and compares. Tolerances: float32 results within 2e-6 relative
(elementwise) or 1e-5 relative to the operands' scale (GEMM, sums); float64 within 1e-12.
Used by test_kernels_cpu.py (cpu backend) and cuda_checks.py (cuda on the simulator or a GPU).
"""
from __future__ import annotations

import numpy as np

R64 = np.float64


def tol(dtype, loose=False):
    if np.dtype(dtype) == np.float32:
        return 1e-5 if loose else 2e-6
    return 1e-12


def data(shape, dtype, seed=0, scale=3.0):
    return (np.random.default_rng(seed).normal(0, scale, shape)).astype(dtype)


def close(got, ref, dtype, loose=False, what=""):
    """strict: |err| <= tol * (|ref| + 1e-3); loose (sums, cancellation): tol * (|ref| + max|ref|)."""
    got = np.asarray(got, dtype=R64)
    ref = np.asarray(ref, dtype=R64)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    t = tol(dtype, loose)
    floor = max(1.0, float(np.abs(ref).max(initial=0.0))) if loose else 1e-3
    err = np.abs(got - ref)
    bad = ~(err <= t * (np.abs(ref) + floor))
    assert not bad.any(), f"{what}: max err {err.max():.3g} (tol {t:g}) at {np.argwhere(bad)[:3]}"


def sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, R64)))


def softmax64(x):
    x = np.asarray(x, R64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- memory

def check_memory(B, dtype, shape):
    x = data(shape, dtype)
    d = B.asarray(x)
    np.testing.assert_array_equal(B.to_host(d), x)
    assert B.to_host(d).dtype == np.dtype(dtype)
    z = B.zeros(shape, dtype)
    np.testing.assert_array_equal(B.to_host(z), np.zeros(shape))
    e = B.empty(shape, dtype)
    B.copy(e, d)
    np.testing.assert_array_equal(B.to_host(e), x)
    B.fill(e, 2.5)
    np.testing.assert_array_equal(B.to_host(e), np.full(shape, 2.5))
    d32 = B.asarray(x.astype(np.float64), dtype=dtype)
    assert B.to_host(d32).dtype == np.dtype(dtype)
    B.synchronize()


# ---------------------------------------------------------------- BLAS

def check_gemm(B, dtype, shape):
    m, k = shape
    n = max(1, (m * 7 + k) % 19)
    a, b = data((m, k), dtype, 1), data((k, n), dtype, 2)
    c0 = data((m, n), dtype, 3)
    for ta in (False, True):
        for tb in (False, True):
            ah = np.ascontiguousarray(a.T) if ta else a
            bh = np.ascontiguousarray(b.T) if tb else b
            for alpha, beta in ((1.0, 0.0), (2.0, 0.5), (-0.5, 1.0)):
                ref = alpha * (a.astype(R64) @ b.astype(R64)) + beta * c0.astype(R64)
                out = B.asarray(c0 if beta else np.full((m, n), np.nan, dtype))
                r = B.gemm(B.asarray(ah), B.asarray(bh), out, trans_a=ta, trans_b=tb,
                           alpha=alpha, beta=beta)
                assert r is out
                close(B.to_host(out), ref, dtype, loose=True, what=f"gemm ta={ta} tb={tb} a={alpha} b={beta}")


def check_axpy_scale(B, dtype, shape):
    x, y = data(shape, dtype, 1), data(shape, dtype, 2)
    dy = B.asarray(y)
    B.axpy(-0.75, B.asarray(x), dy)
    close(B.to_host(dy), y.astype(R64) - 0.75 * x, dtype, loose=True, what="axpy")
    B.scale(dy, 3.0)
    close(B.to_host(dy), 3.0 * (y.astype(R64) - 0.75 * x), dtype, loose=True, what="scale")


# ---------------------------------------------------------------- forward

def check_bias_activations(B, dtype, shape):
    z, b = data(shape, dtype, 1), data(shape[1], dtype, 2)
    zb = z.astype(R64) + b
    dz = B.asarray(z)
    B.add_bias(dz, B.asarray(b))
    close(B.to_host(dz), zb, dtype, loose=True, what="add_bias")
    out = B.empty(shape, dtype)
    B.bias_sigmoid(B.asarray(z), B.asarray(b), out)
    close(B.to_host(out), sigmoid64(zb), dtype, what="bias_sigmoid")
    dz = B.asarray(z)
    B.bias_tanh(dz, B.asarray(b), dz)            # in place
    close(B.to_host(dz), np.tanh(zb), dtype, loose=True, what="bias_tanh in place")
    dz = B.asarray(z)
    B.sigmoid(dz, dz)
    close(B.to_host(dz), sigmoid64(z), dtype, what="sigmoid in place")
    B.tanh(B.asarray(z), out)
    close(B.to_host(out), np.tanh(z.astype(R64)), dtype, what="tanh")


def check_softmax(B, dtype, shape):
    x = data(shape, dtype, 4, scale=10.0)
    dx = B.asarray(x)
    B.softmax(dx, dx)
    close(B.to_host(dx), softmax64(x), dtype, what="softmax in place")


def check_softmax_xent(B, dtype, shape):
    n, m = shape
    x = data(shape, dtype, 5, scale=4.0)
    rng = np.random.default_rng(6)
    t = rng.integers(0, m, n).astype(np.int32)
    t[::2] = x[::2].argmax(axis=1)              # some rows correct
    if m > 1 and n > 1:
        x[1, :2] = x[1].max() + 1.0             # a tie: argmax is the first index
        t[1] = 1
    p64 = softmax64(x)
    loss_ref = -np.log(p64[np.arange(n), t]).sum()
    correct_ref = int((x.argmax(axis=1) == t).sum())
    grad_ref = p64.copy()
    grad_ref[np.arange(n), t] -= 1.0
    for alias in (False, True):
        dx = B.asarray(x)
        probs = B.empty(shape, dtype)
        grad = dx if alias else B.empty(shape, dtype)
        loss, correct = B.softmax_xent(dx, B.asarray(t) if alias else t, probs, grad)
        assert isinstance(loss, float) and isinstance(correct, int)
        assert abs(loss - loss_ref) <= tol(dtype, loose=True) * max(1.0, abs(loss_ref)), (loss, loss_ref)
        assert correct == correct_ref, (correct, correct_ref)
        close(B.to_host(probs), p64, dtype, what="softmax_xent probs")
        close(B.to_host(grad), grad_ref, dtype, loose=True, what=f"softmax_xent grad alias={alias}")


# ---------------------------------------------------------------- backward

def check_backward(B, dtype, shape):
    y, dy = sigmoid64(data(shape, np.float64, 7)).astype(dtype), data(shape, dtype, 8)
    out = B.empty(shape, dtype)
    B.sigmoid_backward(B.asarray(y), B.asarray(dy), out)
    close(B.to_host(out), dy.astype(R64) * y * (1.0 - y.astype(R64)), dtype, loose=True,
          what="sigmoid_backward")
    ddy = B.asarray(dy)
    B.tanh_backward(B.asarray(y), ddy, ddy)     # in place
    close(B.to_host(ddy), dy.astype(R64) * (1.0 - y.astype(R64) ** 2), dtype, loose=True,
          what="tanh_backward")


def check_sum_rows(B, dtype, shape):
    x, o = data(shape, dtype, 9), data(shape[1], dtype, 10)
    out = B.asarray(np.full(shape[1], np.nan, dtype))
    B.sum_rows(B.asarray(x), out)
    close(B.to_host(out), x.astype(R64).sum(axis=0), dtype, loose=True, what="sum_rows")
    out = B.asarray(o)
    B.sum_rows(B.asarray(x), out, alpha=-2.0, beta=0.5)
    close(B.to_host(out), -2.0 * x.astype(R64).sum(axis=0) + 0.5 * o, dtype, loose=True,
          what="sum_rows alpha beta")


# ---------------------------------------------------------------- updates

def sgd_ref(p, g, v, lr, mom, l2, l1, nf):
    """nnet1 AffineTransform::Update + cu::RegularizeL1 in float64."""
    p, g, v = (np.asarray(a, R64).copy() for a in (p, g, v))
    v = mom * v + g
    p = p - lr * l2 * nf * p
    if l1:
        thr = lr * l1 * nf
        for i in np.ndindex(p.shape):
            if p[i] == 0:
                continue
            s = thr if p[i] > 0 else -thr
            after = p[i] - lr * v[i] - s
            if (after > 0) != (p[i] > 0):
                p[i] = 0.0
                v[i] = 0.0
            else:
                p[i] -= s
    return p - lr * v, v


def check_sgd_update(B, dtype, shape):
    p, g, v = data(shape, dtype, 11, 0.1), data(shape, dtype, 12, 1.0), data(shape, dtype, 13, 1.0)
    p.reshape(-1)[0] = 0.0                      # a zero weight is skipped by L1
    for lr, mom, l2, l1, nf in ((0.01, 0.9, 0.0, 0.0, 1), (0.008, 0.5, 1e-3, 0.0, 4),
                                (0.05, 0.9, 1e-4, 0.2, 3)):
        pr, vr = sgd_ref(p, g, v, lr, mom, l2, l1, nf)
        dp, dv = B.asarray(p), B.asarray(v)
        B.sgd_update(dp, B.asarray(g), dv, lr, mom, l2=l2, l1=l1, num_frames=nf)
        close(B.to_host(dv), vr, dtype, loose=True, what=f"sgd velocity {lr, mom, l2, l1}")
        close(B.to_host(dp), pr, dtype, loose=True, what=f"sgd param {lr, mom, l2, l1}")
    if p.size > 16:
        assert (pr == 0).sum() > 1                 # the L1 case does clip some weights


def check_max_norm(B, dtype, shape):
    w = data(shape, dtype, 14, 1.0)
    norms = np.linalg.norm(w.astype(R64), axis=1)
    limit = float(np.median(norms)) if shape[0] > 1 else float(norms[0]) / 2
    ref = w.astype(R64) / np.maximum(norms / limit, 1.0)[:, None]
    dw = B.asarray(w)
    B.max_norm(dw, limit)
    close(B.to_host(dw), ref, dtype, loose=True, what="max_norm")


# ---------------------------------------------------------------- reductions and checks

def check_argmax(B, dtype, shape):
    x = data(shape, dtype, 15)
    if shape[1] > 3:
        x[0, 3] = x[0, 1] = x[0].max() + 1.0     # tie: first index wins, as numpy
    out = B.empty(shape[0], np.int32)
    B.argmax_rows(B.asarray(x), out)
    np.testing.assert_array_equal(B.to_host(out), x.argmax(axis=1))


def check_all_finite(B, dtype, shape):
    x = data(shape, dtype, 16)
    assert B.all_finite(B.asarray(x)) is True
    for bad in (np.nan, np.inf, -np.inf):
        y = x.copy()
        y.reshape(-1)[-1] = bad
        assert B.all_finite(B.asarray(y)) is False, bad
    big = x.copy()
    big.reshape(-1)[0] = np.finfo(dtype).max     # largest finite is finite
    assert B.all_finite(B.asarray(big)) is True


CHECKS = [check_memory, check_gemm, check_axpy_scale, check_bias_activations, check_softmax,
          check_softmax_xent, check_backward, check_sum_rows, check_sgd_update, check_max_norm,
          check_argmax, check_all_finite]
