"""Finite-difference gradient checks of every component and of a whole network, in float64."""
import numpy as np
import pytest
from helpers import backends, every_component_net
from numpy_backend import NumpyBackend

from nnetmix.nnet import (AddShift, AffineTransform, LinearTransform, Nnet, NnetError, Rbm,
                          Rescale, Sigmoid, Softmax, Splice, Tanh)

EPS = 1e-6
TOL = 1e-6  # relative to the gradient's scale; float64 central differences reach ~1e-9


def _rng():
    return np.random.default_rng(777)


def _single(kind, rng):
    d = 4
    return {
        "affine": AffineTransform(d, 3, rng.standard_normal((3, d)), rng.standard_normal(3)),
        "linear": LinearTransform(d, 5, rng.standard_normal((5, d))),
        "sigmoid": Sigmoid(d, d),
        "tanh": Tanh(d, d),
        "softmax": Softmax(d, d),
        "splice": Splice(d, 4 * d, [-2, -1, 0, 3]),
        "addshift": AddShift(d, d, rng.standard_normal(d)),
        "rescale": Rescale(d, d, rng.standard_normal(d)),
    }[kind]


def _loss(net, be, x, r, through_softmax=True):
    y = be.to_host(net.propagate(be.asarray(x), through_softmax=through_softmax))
    return float((y * r).sum())


def _check(net, be, x, through_softmax=True):
    """Compare dL/dx and dL/dparams of L = sum(R * y) with central differences."""
    rng = _rng()
    y = be.to_host(net.propagate(be.asarray(x), through_softmax=through_softmax))
    r = rng.standard_normal(y.shape)
    net.propagate(be.asarray(x), through_softmax=through_softmax)
    dx = be.to_host(net.backpropagate(be.asarray(r)))
    grads = be.to_host(net.grads).copy()
    num_dx = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += EPS
        xm[idx] -= EPS
        num_dx[idx] = (_loss(net, be, xp, r, through_softmax)
                       - _loss(net, be, xm, r, through_softmax)) / (2 * EPS)
    np.testing.assert_allclose(dx, num_dx, rtol=TOL, atol=TOL * max(1.0, np.abs(num_dx).max()))
    p0 = be.to_host(net.params).copy()
    num_g = np.zeros_like(p0)
    for k in range(p0.size):  # perturbing the FLAT buffer must move the layers' W and b
        for sign in (1, -1):
            p = p0.copy()
            p[k] += sign * EPS
            net.set_params(p)
            num_g[k] += sign * _loss(net, be, x, r, through_softmax) / (2 * EPS)
    net.set_params(p0)
    np.testing.assert_allclose(grads, num_g, rtol=TOL, atol=TOL * max(1.0, np.abs(num_g).max(initial=0)))


@pytest.mark.parametrize("kind", ["affine", "linear", "sigmoid", "tanh", "softmax", "splice",
                                  "addshift", "rescale"])
def test_component_gradient(kind):
    be = NumpyBackend()
    rng = _rng()
    net = Nnet([_single(kind, rng)]).to_backend(be, np.float64)
    x = rng.standard_normal((6, 4))
    _check(net, be, x)


def test_splice_replicates_edges_and_its_gradient_sums_them():
    be = NumpyBackend()
    net = Nnet([Splice(1, 3, [-1, 0, 1])]).to_backend(be, np.float64)
    y = be.to_host(net.propagate(np.array([[1.0], [2.0], [3.0]])))
    np.testing.assert_array_equal(y, [[1, 1, 2], [1, 2, 3], [2, 3, 3]])
    np.testing.assert_array_equal(net.backpropagate(np.ones((3, 3))).ravel(), [3, 3, 3])
    net = Nnet([Splice(1, 2, [-2, 0])]).to_backend(be, np.float64)
    y = be.to_host(net.propagate(np.array([[1.0], [2.0], [3.0]])))
    np.testing.assert_array_equal(y, [[1, 1], [1, 2], [1, 3]])
    dx = net.backpropagate(np.ones((3, 2)))
    np.testing.assert_array_equal(dx.ravel(), [4, 1, 1])  # frame 0 fills four slots


@pytest.mark.parametrize("be", backends())
def test_whole_network_with_softmax_xent(be):
    """Every component in one net; the loss is softmax_xent on the pre-softmax output."""
    rng = _rng()
    net = every_component_net(rng).to_backend(be, np.float64)
    x = rng.standard_normal((7, 3))
    t = rng.integers(0, 6, size=7).astype(np.int32)

    def xent(flat=None, xin=x):
        if flat is not None:
            net.set_params(flat)
        logits = net.propagate(be.asarray(xin), through_softmax=False)
        probs = be.empty(logits.shape, np.float64)
        grad = be.empty(logits.shape, np.float64)
        loss, _ = be.softmax_xent(logits, be.asarray(t), probs, grad)
        return loss, grad

    loss, grad = xent()
    assert net.propagate(be.asarray(x), through_softmax=False).shape == (7, 6)
    xent()
    dx = be.to_host(net.backpropagate(grad))
    g = be.to_host(net.grads).copy()
    p0 = be.to_host(net.params).copy()
    num = np.zeros_like(p0)
    for k in range(p0.size):
        p = p0.copy()
        p[k] += EPS
        lp = xent(p)[0]
        p[k] -= 2 * EPS
        lm = xent(p)[0]
        num[k] = (lp - lm) / (2 * EPS)
    net.set_params(p0)
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-6)
    num_dx = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += EPS
        xm[idx] -= EPS
        num_dx[idx] = (xent(xin=xp)[0] - xent(xin=xm)[0]) / (2 * EPS)
    np.testing.assert_allclose(dx, num_dx, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fuse", [True, False])
def test_fused_affine_sigmoid_matches_unfused(fuse):
    be = NumpyBackend()
    rng = _rng()
    net = every_component_net(rng).to_backend(be, np.float64)
    x = rng.standard_normal((5, 3))
    a = net.propagate(x, fuse=True).copy()
    b = net.propagate(x, fuse=False).copy()
    np.testing.assert_allclose(a, b, rtol=1e-12)
    assert np.allclose(a.sum(axis=1), 1.0)


def test_rbm_forward_and_refusing_backprop():
    be = NumpyBackend()
    rng = _rng()
    W, vb, hb = rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal(3)
    net = Nnet([Rbm(2, 3, W, vb, hb, "gauss", "bern")]).to_backend(be, np.float64)
    x = rng.standard_normal((4, 2))
    y = net.propagate(x)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-(x @ W.T + hb))), rtol=1e-6)
    with pytest.raises(NnetError, match="Rbm"):
        net.backpropagate(np.ones((4, 3)))
    ff = net.rbm_to_feedforward().to_backend(be, np.float64)
    assert [c.marker for c in ff.components] == ["<AffineTransform>", "<Sigmoid>"]
    np.testing.assert_allclose(ff.propagate(x), y, rtol=1e-6)


def test_dimension_and_dtype_errors():
    be = NumpyBackend()
    with pytest.raises(NnetError, match="output dim 3.*input dim 4"):
        Nnet([Sigmoid(3, 3), Sigmoid(4, 4)])
    net = Nnet([Sigmoid(3, 3)]).to_backend(be)
    with pytest.raises(NnetError, match="input dim is 3"):
        net.propagate(np.zeros((2, 4), np.float32))
    with pytest.raises(NnetError, match="float64"):
        net.propagate(np.zeros((2, 3), np.float64))
