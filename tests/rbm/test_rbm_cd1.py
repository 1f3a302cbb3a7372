"""The CD-1 step against float64 numpy references: fixed random numbers, the expected update by
enumerating the hidden states of a 3 x 2 Bernoulli RBM, the momentum schedule and the
weight-explosion guard."""
import itertools
import logging

import numpy as np
import pytest

from nnetmix.kernels import get_backend
from nnetmix.rbm import Cd1, MomentumSchedule, RbmError, RbmTrainOptions, std_all
from helpers import tiny_rbm

sig = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731


def ref_step(W, a, b, cW, ca, cb, v, u, lr, mmt, l2, vis="bern", hid="bern"):
    """Kaldi's RbmUpdate written out in float64 (fixed uniforms / noise u)."""
    act_h = sig if hid == "bern" else (lambda z: z)
    act_v = sig if vis == "bern" else (lambda z: z)
    ph = act_h(v @ W.T + b)
    hs = (ph > u).astype(np.float64) if hid == "bern" else ph + u
    nv = act_v(hs @ W + a)
    nh = act_h(nv @ W.T + b)
    n = v.shape[0]
    cW = mmt * cW - lr / n * nh.T @ nv + lr / n * ph.T @ v - lr * l2 * W
    ca = mmt * ca + lr / n * (v.sum(0) - nv.sum(0))
    cb = mmt * cb + lr / n * (ph.sum(0) - nh.sum(0))
    mse = 0.5 * ((nv - v) ** 2).sum()
    return W + cW, a + ca, b + cb, cW, ca, cb, mse


@pytest.mark.parametrize("types", [("bern", "bern"), ("gauss", "bern"), ("bern", "gauss")])
def test_cd1_steps_match_reference(types):
    rng = np.random.default_rng(1)
    net = tiny_rbm(rng, 3, 2, *types).to_backend(get_backend("cpu"), np.float64)
    h = net.host_params()[0]
    W, a, b = h["W"].copy(), h["vis_bias"].copy(), h["hid_bias"].copy()
    cW, ca, cb = np.zeros_like(W), np.zeros_like(a), np.zeros_like(b)
    cd1 = Cd1(net, learn_rate=0.3, momentum=0.6, l2_penalty=0.01)
    for step in range(3):
        v = rng.random((5, 3)) if types[0] == "bern" else rng.standard_normal((5, 3)) * 0.5
        u = rng.random((5, 2)) if types[1] == "bern" else rng.standard_normal((5, 2))
        res = cd1.step(v, uniforms=u)
        W, a, b, cW, ca, cb, mse = ref_step(W, a, b, cW, ca, cb, v, u, 0.3, 0.6, 0.01, *types)
        got = net.host_params()[0]
        np.testing.assert_allclose(got["W"], W, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got["vis_bias"], a, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got["hid_bias"], b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(res.mse, mse, rtol=1e-12)
        assert not res.guarded


def test_cd1_expected_update_by_enumeration():
    """3 visible x 2 hidden Bernoulli RBM: E[CD-1 gradient] by enumerating h in {0,1}^2 equals
    the average of many sampled steps (lr 1, no momentum, no L2: the increment IS the mean)."""
    rng = np.random.default_rng(2)
    net = tiny_rbm(rng, 3, 2, scale=1.0).to_backend(get_backend("cpu"), np.float64)
    h = net.host_params()[0]
    W, a, b = h["W"], h["vis_bias"], h["hid_bias"]
    v = np.array([1.0, 0.0, 1.0])
    p = sig(W @ v + b)
    expect_W = np.outer(p, v)                       # positive phase: exact
    expect_a = v.copy()
    expect_b = p.copy()
    for hs in itertools.product([0.0, 1.0], repeat=2):
        hs = np.array(hs)
        prob = np.prod(np.where(hs == 1, p, 1 - p))
        nv = sig(W.T @ hs + a)                       # negative phase given the sampled states
        nh = sig(W @ nv + b)
        expect_W -= prob * np.outer(nh, nv)
        expect_a -= prob * nv
        expect_b -= prob * nh
    n = 40000
    cd1 = Cd1(net, learn_rate=1.0, momentum=0.0, l2_penalty=0.0, seed=5)
    cd1.step(np.tile(v, (n, 1)))
    vel = net.components[0].velocity
    # sampling error of a mean of n terms in [-1, 1]: < 4 / sqrt(n) = 0.02
    np.testing.assert_allclose(vel["W"], expect_W, atol=0.02)
    np.testing.assert_allclose(vel["vis_bias"], expect_a, atol=0.02)
    np.testing.assert_allclose(vel["hid_bias"], expect_b, atol=0.02)


def test_momentum_schedule_is_kaldis():
    o = RbmTrainOptions(learn_rate=0.4)
    s = MomentumSchedule(o)
    assert s.initial() == pytest.approx((0.2, 0.5))
    c = s.after(100)                   # first minibatch: n = 0 > n_prev = -1
    assert (c.momentum, c.learn_rate) == pytest.approx((0.9, 0.2))   # --with-bug=true
    assert s.after(200) is None
    c = s.after(500000)                # one step: ramp 0.5 + 0.01
    assert c.momentum_ramp == pytest.approx(0.51) and c.learn_rate == pytest.approx(0.4 * 0.49)
    assert c.momentum == pytest.approx(0.9)
    c = s.after(41 * 500000)           # past the ramp
    assert c.momentum_ramp == pytest.approx(0.9) and c.learn_rate == pytest.approx(0.04)
    s2 = MomentumSchedule(RbmTrainOptions(with_bug=False))
    s2.after(0)
    c = s2.after(2 * 500000)
    assert c.momentum == pytest.approx(0.52) == c.momentum_ramp


def test_weight_explosion_guard(caplog):
    """Gaussian visible units, huge weights: the reconstruction's stddev is far above twice the
    data's, so the weights and biases are rescaled by the ratio, lr *= 0.9, momentum reset."""
    rng = np.random.default_rng(3)
    net = tiny_rbm(rng, 4, 6, "gauss", "bern", scale=5.0).to_backend(get_backend("cpu"), np.float64)
    net.velocity[...] = 0.123
    before = net.host_params()[0]
    v = rng.standard_normal((50, 4)) * 0.1
    u = rng.random((50, 6))
    cd1 = Cd1(net, learn_rate=0.01, momentum=0.9, l2_penalty=0.0002)
    # the expected reconstruction and stds
    ph = sig(v @ before["W"].T + before["hid_bias"])
    nv = (ph > u) @ before["W"] + before["vis_bias"]
    scale = std_all(v) / std_all(nv)
    assert std_all(v) * 2 < std_all(nv)
    with caplog.at_level(logging.WARNING):
        res = cd1.step(v, uniforms=u)
    assert res.guarded
    after = net.host_params()[0]
    for k in ("W", "vis_bias", "hid_bias"):
        np.testing.assert_allclose(after[k], before[k] * scale, rtol=1e-12)
    assert cd1.learn_rate == pytest.approx(0.009)
    assert not np.any(net.velocity)
    assert "danger of weight explosion" in caplog.text
    # a bern-visible RBM with the same weights is never guarded
    net2 = tiny_rbm(np.random.default_rng(3), 4, 6, "bern", "bern", 5.0).to_backend(
        get_backend("cpu"), np.float64)
    assert not Cd1(net2, 0.01, 0.9, 0.0).step(rng.random((50, 4)), uniforms=u).guarded


def test_std_all_and_refusals():
    x = np.arange(12.0).reshape(3, 4)
    assert std_all(x) == pytest.approx(np.std(x))
    assert std_all(np.ones((2, 2))) == 0.0
    from nnetmix.nnet import AffineTransform, Nnet
    with pytest.raises(RbmError, match="exactly one <Rbm>"):
        Cd1(Nnet([AffineTransform(2, 2)]), 0.1, 0.5, 0.0)
    net = tiny_rbm(np.random.default_rng(0)).to_backend(get_backend("cpu"))
    net.params[0] = np.nan
    with pytest.raises(RbmError, match="'nan' or 'inf'"):
        Cd1(net, 0.1, 0.5, 0.0).step(np.ones((4, 3), np.float32))
