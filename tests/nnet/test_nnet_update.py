"""nnet1 update semantics against a float64 reference, and the flat-buffer views."""
import numpy as np
import pytest
from helpers import backends, every_component_net
from numpy_backend import NumpyBackend

from nnetmix.nnet import (AddShift, AffineTransform, LinearTransform, Nnet, NnetTrainOptions,
                          Rescale, Sigmoid, Softmax)


def _net(rng, linear_coef):
    return Nnet([
        AddShift(4, 4, rng.standard_normal(4), 0.5),
        Rescale(4, 4, rng.uniform(0.5, 2, 4), 2.0),
        AffineTransform(4, 5, rng.standard_normal((5, 4)) * 2, rng.standard_normal(5), 0.5, 0.1,
                        1.0),
        Sigmoid(5, 5),
        LinearTransform(5, 3, rng.standard_normal((3, 5)) * 0.01, linear_coef),
        Softmax(3, 3),
    ])


def _l1(w, corr, thr, lr):
    """cu::RegularizeL1 (cu-math.cc) on float64 copies."""
    w, corr = w.copy(), corr.copy()
    for idx in np.ndindex(*w.shape):
        if w[idx] == 0.0:
            continue
        s = thr if w[idx] > 0 else -thr
        after = w[idx] - lr * corr[idx] - s
        if (after > 0.0) != (w[idx] > 0.0):
            w[idx], corr[idx] = 0.0, 0.0
        else:
            w[idx] -= s
    return w, corr


def _reference(p, g, v, x_in, opts, n, coefs):
    """AffineTransform/LinearTransform/AddShift/Rescale::Update, in float64."""
    lr, mmt, l2, l1 = opts.learn_rate, opts.momentum, opts.l2_penalty, opts.l1_penalty
    p = [{k: a.astype(np.float64).copy() for k, a in d.items()} for d in p]
    v = [{k: a.astype(np.float64).copy() for k, a in d.items()} for d in v]
    # AddShift, Rescale: plain step, no momentum
    p[0]["shift"] -= lr * 0.5 * g[0]["shift"]
    p[1]["scale"] -= lr * 2.0 * g[1]["scale"]
    # AffineTransform: lr includes the coefficient everywhere
    a_lr, b_lr = lr * 0.5, lr * 0.1
    v[2]["W"] = mmt * v[2]["W"] + g[2]["W"]
    v[2]["b"] = mmt * v[2]["b"] + g[2]["b"]
    W = p[2]["W"]
    W -= a_lr * l2 * n * W
    if l1:
        W, v[2]["W"] = _l1(W, v[2]["W"], a_lr * l1 * n, a_lr)
    W -= a_lr * v[2]["W"]
    p[2]["b"] -= b_lr * v[2]["b"]
    norms = np.sqrt((W * W).sum(1))
    W /= np.maximum(norms / 1.0, 1.0)[:, None]
    p[2]["W"] = W
    # LinearTransform: L2/L1 with the plain lr, the step with lr * coef
    c = coefs
    v[4]["W"] = mmt * v[4]["W"] + g[4]["W"]
    W = p[4]["W"]
    W -= lr * l2 * n * W
    if l1:
        W, v[4]["W"] = _l1(W, v[4]["W"], lr * l1 * n, lr)
    W -= lr * c * v[4]["W"]
    p[4]["W"] = W
    return p, v


@pytest.mark.parametrize("be", backends())
@pytest.mark.parametrize("l2, l1, coef", [(0.0, 0.0, 0.5), (1e-3, 0.0, 0.5), (0.0, 0.05, 1.0),
                                          (1e-3, 0.05, 1.0)])
def test_update_matches_nnet1(be, l2, l1, coef):
    rng = np.random.default_rng(777)
    net = _net(rng, coef).to_backend(be, np.float64)
    opts = NnetTrainOptions(learn_rate=0.05, momentum=0.9, l2_penalty=l2, l1_penalty=l1)
    n = 8
    for step in range(3):  # momentum carries across steps
        x = rng.standard_normal((n, 4))
        t = rng.integers(0, 3, n).astype(np.int32)
        logits = net.propagate(be.asarray(x), through_softmax=False)
        probs = be.empty((n, 3), np.float64)
        grad = be.empty((n, 3), np.float64)
        be.softmax_xent(logits, be.asarray(t), probs, grad)
        net.backpropagate(grad, input_diff=False)
        p0 = net.host_params()
        g = net._views(be.to_host(net.grads))
        v0 = net._views(be.to_host(net.velocity))
        ref_p, ref_v = _reference(p0, g, v0, x, opts, n, coef)
        net.update(opts)
        got_p = net.host_params()
        got_v = net._views(be.to_host(net.velocity))
        for i in (0, 1, 2, 4):
            for k in ref_p[i]:
                np.testing.assert_allclose(got_p[i][k], ref_p[i][k], rtol=1e-10, atol=1e-12,
                                           err_msg=f"step {step} component {i} {k}")
        for i in (2, 4):
            for k in ref_v[i]:
                np.testing.assert_allclose(got_v[i][k], ref_v[i][k], rtol=1e-10, atol=1e-12)
    assert np.sqrt((net.host_params()[2]["W"] ** 2).sum(1)).max() <= 1.0 + 1e-12
    if l1:  # L1 drove some weights to exactly zero, never across
        assert (net.host_params()[4]["W"] == 0).any()


def test_gradient_is_the_sum_over_the_minibatch():
    be = NumpyBackend()
    rng = np.random.default_rng(1)
    net = Nnet([AffineTransform(3, 2, rng.standard_normal((2, 3)), np.zeros(2))])
    net.to_backend(be, np.float64)
    x = rng.standard_normal((5, 3))
    dy = rng.standard_normal((5, 2))
    net.propagate(x)
    net.backpropagate(dy)
    np.testing.assert_allclose(net.components[0].grads["W"], dy.T @ x)
    np.testing.assert_allclose(net.components[0].grads["b"], dy.sum(0))


@pytest.mark.parametrize("be", backends())
def test_flat_buffers_alias_the_layers(be):
    rng = np.random.default_rng(2)
    net = _net(rng, 1.0).to_backend(be, np.float32)
    assert net.num_params == 4 + 4 + 5 * 4 + 5 + 3 * 5
    assert [(b.component, b.name, b.offset, b.shape) for b in net.layout] == [
        (0, "shift", 0, (4,)), (1, "scale", 4, (4,)), (2, "W", 8, (5, 4)), (2, "b", 28, (5,)),
        (4, "W", 33, (3, 5))]
    be.fill(net.params, 0.5)
    assert float(be.to_host(net.components[2].params["W"]).min()) == 0.5
    host = np.arange(net.num_params, dtype=np.float32) / 64
    net.set_params(host)
    np.testing.assert_array_equal(be.to_host(net.components[2].params["W"]),
                                  host[8:28].reshape(5, 4))
    np.testing.assert_array_equal(be.to_host(net.components[4].params["W"]).ravel(), host[33:])
    # writing through a layer's view changes the flat buffer (one all-reduce averages all)
    be.fill(net.components[4].params["W"], -1.0)
    assert (be.to_host(net.params)[33:] == -1).all()
    be.fill(net.grads, 0.0)
    x = be.asarray(rng.standard_normal((3, 4)).astype(np.float32))
    net.propagate(x)
    net.backpropagate(be.asarray(rng.standard_normal((3, 3)).astype(np.float32)))
    g = be.to_host(net.grads)
    np.testing.assert_array_equal(g[8:28].reshape(5, 4), be.to_host(net.components[2].grads["W"]))
    assert np.abs(g[8:28]).sum() > 0
    assert be.to_host(net.velocity).shape == (net.num_params,)
    # a network's parameters survive a move between backends and dtypes
    net.to_backend(NumpyBackend(), np.float64)
    np.testing.assert_array_equal(net.host_params()[4]["W"], -1.0)


def test_buffers_are_reused_across_minibatches():
    be = NumpyBackend()
    net = _net(np.random.default_rng(3), 1.0).to_backend(be, np.float32)
    net.propagate(np.zeros((16, 4), np.float32))
    bufs = {k: id(v) for k, v in net._acts.items() if k > 0}
    out = net.propagate(np.ones((8, 4), np.float32))
    assert out.shape == (8, 3) and {k: id(v) for k, v in net._acts.items() if k > 0} == bufs


def test_float32_training_step_agrees_across_backends():
    """One float32 step (fused affine+sigmoid, host-side Splice/Rescale) on every backend gives
    what the float64 numpy reference gives, to float32 accuracy."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((9, 3))
    t = rng.integers(0, 6, 9).astype(np.int32)
    opts = NnetTrainOptions(learn_rate=0.1, momentum=0.5, l2_penalty=1e-3)
    results = []
    for be, dtype in [(NumpyBackend(), np.float64)] + [(p.values[0], np.float32) for p in backends()]:
        net = every_component_net(np.random.default_rng(4)).to_backend(be, dtype)
        for _ in range(2):
            logits = net.propagate(be.asarray(x.astype(dtype)), through_softmax=False)
            probs, grad = be.empty(logits.shape, dtype), be.empty(logits.shape, dtype)
            loss, _ = be.softmax_xent(logits, be.asarray(t), probs, grad)
            net.backpropagate(grad)
            net.update(opts)
        results.append((loss, be.to_host(net.params).astype(np.float64)))
    for loss, params in results[1:]:
        assert loss == pytest.approx(results[0][0], rel=1e-5)
        np.testing.assert_allclose(params, results[0][1], rtol=1e-4, atol=1e-5)
