"""numba kernels behind the cpu backend: fused elementwise work, row reductions, updates.

Every kernel is ``@njit(parallel=True, fastmath=True, cache=True)`` over C-contiguous arrays and
is written once for float32 and float64: the element functions ``fexp``/``fsigmoid``/``ftanh``
are numba overloads that pick the implementation from the argument type.

Why a hand-written exp: without Intel SVML numba calls libm's ``expf`` once per element, which
stops LLVM from vectorising the loop (a colleague measured float32 ``scipy.special.expit`` and
numba's ``np.exp`` several times slower than a GEMM-adjacent budget allows). ``_exp32`` is the
Cephes ``expf`` polynomial on a Cody-Waite reduced argument, with the power of two built by
writing the exponent bits (``_i32_as_f32``, an LLVM bitcast): branch-free, so the prange loops
vectorise to AVX2. Accuracy: about 2e-7 relative over [-87, 88] (tests/kernels check 1e-6).
float64 keeps ``math.exp`` (float64 is for gradient checks, where accuracy matters, not speed).

Scalars are passed in the array's dtype (the Python wrappers in cpu.py convert them): a float64
scalar times a float32 array would make LLVM widen every element to double.

Kernels whose result depends on NaN/Inf (``count_nonfinite``) look at the exponent bits of an
unsigned-integer view instead of using float compares, because ``fastmath`` lets LLVM assume
there are no NaNs.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, types
from numba.extending import intrinsic, overload

__all__ = ["fexp", "fsigmoid", "ftanh", "exp_k", "sigmoid_k", "tanh_k", "bias_act_k", "add_bias_k",
           "sigmoid_backward_k", "tanh_backward_k", "softmax_k", "softmax_xent_k", "sum_rows_k",
           "sgd_update_k", "max_norm_k", "argmax_rows_k", "count_nonfinite_k", "axpy_k", "scale_k"]

_JIT = dict(parallel=True, fastmath=True, cache=True)

# float32 constants (a bare Python float literal is float64 in numba and would widen the loop)
_F1 = np.float32(1.0)
_F2 = np.float32(2.0)
_FHALF = np.float32(0.5)
_EXP_LO = np.float32(-87.33654)   # exp(x) underflows below (smallest normal float32)
_EXP_HI = np.float32(88.72283)    # and overflows above
_LOG2E = np.float32(1.44269504088896341)
_LN2_HI = np.float32(0.693359375)     # Cody-Waite split of ln 2 (Cephes expf)
_LN2_LO = np.float32(-2.12194440e-4)
_P0 = np.float32(1.9875691500e-4)
_P1 = np.float32(1.3981999507e-3)
_P2 = np.float32(8.3334519073e-3)
_P3 = np.float32(4.1665795894e-2)
_P4 = np.float32(1.6666665459e-1)
_P5 = np.float32(5.0000001201e-1)
_TANH_SMALL = np.float32(0.1)
_T3 = np.float32(-1.0 / 3.0)
_T5 = np.float32(2.0 / 15.0)
_T7 = np.float32(-17.0 / 315.0)


@intrinsic
def _i32_as_f32(typingctx, x):
    """Reinterpret the low 32 bits of an integer as a float32 (LLVM trunc + bitcast, vectorisable)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        v = args[0]
        if x.bitwidth != 32:
            v = builder.trunc(v, context.get_value_type(types.int32))
        return builder.bitcast(v, context.get_value_type(types.float32))

    return types.float32(x), codegen


@njit(fastmath=True, cache=True, inline="always")
def _exp32(x):
    x = min(max(x, _EXP_LO), _EXP_HI)
    k = math.floor(x * _LOG2E + _FHALF)
    r = x - k * _LN2_HI
    r = r - k * _LN2_LO
    p = _P0
    p = p * r + _P1
    p = p * r + _P2
    p = p * r + _P3
    p = p * r + _P4
    p = p * r + _P5
    p = p * r * r + r + _F1
    # 2^k from its exponent bits; k is in [-126, 128]: split so both factors are normal floats
    ki = np.int32(k)
    k1 = ki >> 1
    s1 = _i32_as_f32((k1 + 127) << 23)
    s2 = _i32_as_f32((ki - k1 + 127) << 23)
    return p * s1 * s2


def fexp(x):
    """exp(x) for a float32 (vectorisable polynomial) or float64 (libm) scalar inside numba."""
    return math.exp(x)


@overload(fexp, inline="always")
def _fexp_ov(x):
    if x == types.float32:
        return lambda x: _exp32(x)
    if x == types.float64:
        return lambda x: math.exp(x)
    return None


def fsigmoid(x):
    """1 / (1 + exp(-x)) inside numba."""
    return 1.0 / (1.0 + math.exp(-x))


@overload(fsigmoid, inline="always")
def _fsigmoid_ov(x):
    if x == types.float32:
        return lambda x: _F1 / (_F1 + _exp32(-x))
    if x == types.float64:
        return lambda x: 1.0 / (1.0 + math.exp(-x))
    return None


def ftanh(x):
    """tanh(x) inside numba."""
    return math.tanh(x)


@overload(ftanh, inline="always")
def _ftanh_ov(x):
    if x == types.float32:
        def impl(x):
            # tanh|x| = (1 - t) / (1 + t), t = exp(-2|x|); below 0.1 that loses relative accuracy
            # to cancellation, so use the odd Taylor series there (next term < 3e-10 relative)
            a = abs(x)
            t = _exp32(-_F2 * a)
            big = (_F1 - t) / (_F1 + t)
            a2 = a * a
            small = a + a * a2 * (_T3 + a2 * (_T5 + a2 * _T7))
            y = small if a < _TANH_SMALL else big
            return y if x >= 0 else -y
        return impl
    if x == types.float64:
        return lambda x: math.tanh(x)
    return None


# ---- flat elementwise (1-D views of C-contiguous arrays) ----

@njit(**_JIT)
def exp_k(x, out):
    for i in prange(x.size):
        out[i] = fexp(x[i])


@njit(**_JIT)
def sigmoid_k(x, out):
    for i in prange(x.size):
        out[i] = fsigmoid(x[i])


@njit(**_JIT)
def tanh_k(x, out):
    for i in prange(x.size):
        out[i] = ftanh(x[i])


@njit(**_JIT)
def sigmoid_backward_k(y, dy, out):
    for i in prange(y.size):
        v = y[i]
        out[i] = dy[i] * v * (1 - v)


@njit(**_JIT)
def tanh_backward_k(y, dy, out):
    for i in prange(y.size):
        v = y[i]
        out[i] = dy[i] * (1 - v * v)


@njit(**_JIT)
def axpy_k(alpha, x, y):
    for i in prange(y.size):
        y[i] += alpha * x[i]


@njit(**_JIT)
def scale_k(a, alpha):
    for i in prange(a.size):
        a[i] *= alpha


@njit(**_JIT)
def sgd_update_k(param, grad, velocity, lr, momentum, decay, l1_thr):
    """nnet1 AffineTransform::Update on flat arrays, one pass over memory.

    decay = 1 - lr*l2*num_frames; l1_thr = lr*l1*num_frames (0 turns L1 off). L1 follows Kaldi's
    cu::RegularizeL1(weight, corr, l1_thr, lr): a non-zero weight whose step would cross zero is
    set to 0 together with its correction (here the velocity); otherwise it shrinks by l1_thr.
    """
    zero = param.dtype.type(0)
    for i in prange(param.size):
        v = momentum * velocity[i] + grad[i]
        p = param[i] * decay
        if l1_thr != 0 and p != 0:
            l1s = l1_thr if p > 0 else -l1_thr
            after = p - lr * v - l1s
            if (after > 0) != (p > 0):
                p = zero
                v = zero
            else:
                p = p - l1s
        velocity[i] = v
        param[i] = p - lr * v


# ---- row-wise (2-D C-contiguous) ----

@njit(**_JIT)
def add_bias_k(z, b):
    n, m = z.shape
    for i in prange(n):
        for j in range(m):
            z[i, j] += b[j]


@njit(**_JIT)
def bias_act_k(z, b, out, kind):
    """out = act(z + b); kind 0 = sigmoid, 1 = tanh, 2 = identity."""
    n, m = z.shape
    for i in prange(n):
        if kind == 0:
            for j in range(m):
                out[i, j] = fsigmoid(z[i, j] + b[j])
        elif kind == 1:
            for j in range(m):
                out[i, j] = ftanh(z[i, j] + b[j])
        else:
            for j in range(m):
                out[i, j] = z[i, j] + b[j]


@njit(**_JIT)
def softmax_k(x, out):
    n, m = x.shape
    for i in prange(n):
        mx = x[i, 0]
        for j in range(1, m):
            mx = max(mx, x[i, j])
        s = x.dtype.type(0)
        for j in range(m):
            e = fexp(x[i, j] - mx)
            out[i, j] = e
            s += e
        inv = 1 / s
        for j in range(m):
            out[i, j] *= inv


@njit(**_JIT)
def softmax_xent_k(x, targets, probs, grad):
    """Row softmax, probs - onehot, and (sum of -log p[target], argmax hits).

    Everything read from x (max, argmax, x[target]) is read before probs/grad are written, so
    either output may alias x.
    """
    n, m = x.shape
    row_loss = np.empty(n)
    correct = 0
    for i in prange(n):
        t = targets[i]
        mx = x[i, 0]
        for j in range(1, m):
            mx = max(mx, x[i, j])
        am = 0
        while am < m - 1 and x[i, am] != mx:   # first index of the max, as numpy argmax
            am += 1
        xt = x[i, t]
        s = x.dtype.type(0)
        for j in range(m):
            e = fexp(x[i, j] - mx)
            probs[i, j] = e
            s += e
        inv = 1 / s
        for j in range(m):
            pj = probs[i, j] * inv
            probs[i, j] = pj
            grad[i, j] = pj
        grad[i, t] -= 1
        row_loss[i] = math.log(float(s)) - float(xt - mx)
        if am == t:
            correct += 1
    loss = 0.0   # summed in row order, not per thread: the same bits for any thread count
    for i in range(n):
        loss += row_loss[i]
    return loss, correct


@njit(**_JIT)
def sum_rows_k(x, out, alpha, beta, nblk):
    """out[j] = alpha * sum_i x[i, j] + beta * out[j].

    The rows are cut into nblk blocks, each summed into its own partial row by one thread
    (contiguous, vectorised inner loop), then the partials are added up column-wise: 10x faster
    than threads owning column chunks, which strides through x. The caller fixes nblk from the
    row count, never from the thread count, so any number of threads gives the same bits.
    """
    n, m = x.shape
    part = np.zeros((nblk, m), dtype=x.dtype)
    rows = (n + nblk - 1) // nblk
    for c in prange(nblk):
        for i in range(c * rows, min(n, (c + 1) * rows)):
            for j in range(m):
                part[c, j] += x[i, j]
    for j in prange(m):
        s = part[0, j]
        for c in range(1, nblk):
            s += part[c, j]
        if beta == 0:   # beta 0 ignores out (it may hold NaN), as BLAS does
            out[j] = alpha * s
        else:
            out[j] = alpha * s + beta * out[j]


@njit(**_JIT)
def max_norm_k(w, max_norm):
    """Kaldi nnet1 <MaxNorm>: rows with L2 norm above max_norm are scaled down onto the sphere."""
    n, m = w.shape
    for i in prange(n):
        s = 0.0
        for j in range(m):
            s += float(w[i, j]) * float(w[i, j])
        norm = math.sqrt(s)
        if norm > max_norm:
            scl = w.dtype.type(max_norm / norm)
            for j in range(m):
                w[i, j] *= scl


@njit(**_JIT)
def argmax_rows_k(x, out):
    n, m = x.shape
    for i in prange(n):
        mx = x[i, 0]
        for j in range(1, m):
            mx = max(mx, x[i, j])
        am = 0
        while am < m - 1 and x[i, am] != mx:
            am += 1
        out[i] = am


@njit(**_JIT)
def count_nonfinite_k(bits, mask):
    """Number of elements whose exponent bits are all ones (Inf or NaN); bits is an uint view."""
    c = 0
    for i in prange(bits.size):
        c += 1 if (bits[i] & mask) == mask else 0
    return c
