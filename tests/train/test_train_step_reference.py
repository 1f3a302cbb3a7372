"""A train_epoch step equals a float64 numpy reference of nnet1's update semantics."""
import numpy as np
import pytest
from helpers import tiny_net

from nnetmix.kernels import get_backend
from nnetmix.nnet import NnetTrainOptions
from nnetmix.train import TrainOptions, train_epoch


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _reference(params, coefs, max_norm, X, T, mb, lr, mom, l2):
    """nnet1 (nnet-train-frmshuff + AffineTransform::Update) in float64, minibatches in order."""
    W1, b1, W2, b2 = (p.astype(np.float64).copy() for p in params)
    v = [np.zeros_like(a) for a in (W1, b1, W2, b2)]
    loss_sum = 0.0
    for s in range(0, X.shape[0] - mb + 1, mb):
        x, t = X[s:s + mb].astype(np.float64), T[s:s + mb]
        h = _sigmoid(x @ W1.T + b1)
        z = h @ W2.T + b2
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        loss_sum += -np.log(p[np.arange(mb), t]).sum()
        g2 = p.copy()
        g2[np.arange(mb), t] -= 1.0                 # d(sum loss)/dz: the SUM over frames
        dz1 = (g2 @ W2) * h * (1 - h)
        grads = [dz1.T @ x, dz1.sum(0), g2.T @ h, g2.sum(0)]
        f32 = lambda c: float(np.float32(c))  # <LearnRateCoef> is a BaseFloat in the model
        lrs = [lr * f32(coefs[0]), lr * f32(coefs[1]), lr * 1.0, lr * f32(0.1)]
        for i, (a, g) in enumerate(zip((W1, b1, W2, b2), grads)):
            v[i] = mom * v[i] + g
            if i in (0, 2):                          # L2 on weights only, scaled by N
                a -= lrs[i] * l2 * mb * a
            a -= lrs[i] * v[i]
        norms = np.sqrt((W1 * W1).sum(1))
        W1 /= np.maximum(norms / f32(max_norm), 1.0)[:, None]  # max-norm on the hidden layer
    return [W1, b1, W2, b2], loss_sum


@pytest.mark.parametrize("mom, l2", [(0.0, 0.0), (0.9, 1e-3)])
def test_step_matches_float64_reference(mom, l2):
    rng = np.random.default_rng(5)
    coefs, max_norm, mb = (0.5, 0.1), 1.2, 8
    net = tiny_net(rng, max_norm=max_norm, coefs=coefs).to_backend(get_backend("cpu"), np.float64)
    X = rng.standard_normal((4 * mb + 3, 6)).astype(np.float32)
    T = rng.integers(0, 5, X.shape[0]).astype(np.int32)
    h = net.host_params()
    start = [h[0]["W"], h[0]["b"], h[2]["W"], h[2]["b"]]
    opts = TrainOptions(minibatch_size=mb, randomizer_size=64, randomize=False, prefetch=False)
    upd = NnetTrainOptions(learn_rate=0.05, momentum=mom, l2_penalty=l2)
    st = train_epoch(net, [("u1", X, T)], opts, upd)
    ref, ref_loss = _reference(start, coefs, max_norm, X, T, mb, 0.05, mom, l2)
    got = net.host_params()
    for a, b in zip([got[0]["W"], got[0]["b"], got[2]["W"], got[2]["b"]], ref):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert st.minibatches == 4 and st.frames == 4 * mb
    assert st.xent_sum == pytest.approx(ref_loss, rel=1e-9)
    assert np.abs(got[0]["W"] - start[0]).max() > 1e-3  # something happened
