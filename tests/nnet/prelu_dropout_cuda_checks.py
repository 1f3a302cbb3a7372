"""The cuda kernels of <ParametricRelu> and <Dropout> against numpy and the cpu kernels, on numba's
CUDA simulator (run by test_prelu_dropout_cuda.py) or a real GPU (make test-gpu).

Tiny shapes (the simulator runs each GPU thread as a Python thread), with a row longer than a
block (257 > 128 threads) and a column count that is not a multiple of the 32-column blocks of
the gradient sums. The dropout masks must equal the cpu ones bit for bit (the same hash)."""
import numpy as np
import pytest
from numba import config

from helpers import tiny_net
from nnetmix.kernels.prelu_dropout_cpu import prelu_dropout_ops
from nnetmix.nnet import Dropout, Nnet, NnetTrainOptions, ParametricRelu

pytestmark = pytest.mark.cuda_device

SHAPES = [(1, 1), (3, 257), (37, 11)] + ([] if config.ENABLE_CUDASIM else [(1024, 2048)])


@pytest.fixture(scope="module")
def backends():
    from nnetmix.kernels import get_backend
    return get_backend("cpu"), get_backend("cuda")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_prelu_kernels_against_numpy(backends, dtype, shape):
    _, gpu = backends
    ops = prelu_dropout_ops(gpu)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    x[0, 0] = 0.0  # zero takes beta, as Kaldi's kernel
    dy = rng.standard_normal(shape).astype(dtype)
    a = rng.uniform(0.5, 1.5, shape[1]).astype(dtype)
    b = rng.uniform(-0.5, 0.5, shape[1]).astype(dtype)
    xd, dyd, ad, bd = (gpu.asarray(v) for v in (x, dy, a, b))
    out = gpu.empty(shape, dtype)
    ops.prelu(xd, ad, bd, out)
    np.testing.assert_array_equal(gpu.to_host(out), np.where(x > 0, a * x, b * x))
    ops.prelu_backward(xd, dyd, ad, bd, out)
    np.testing.assert_array_equal(gpu.to_host(out), np.where(x > 0, a * dy, b * dy))
    ga, gb = gpu.zeros(shape[1], dtype), gpu.zeros(shape[1], dtype)
    ops.prelu_grad(xd, dyd, ga, gb)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    np.testing.assert_allclose(gpu.to_host(ga), (np.maximum(x64, 0) * dy64).sum(0), rtol=tol,
                               atol=tol * shape[0])
    np.testing.assert_allclose(gpu.to_host(gb), (np.minimum(x64, 0) * dy64).sum(0), rtol=tol,
                               atol=tol * shape[0])


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_dropout_masks_equal_the_cpu_ones(backends, dtype, shape):
    cpu, gpu = backends
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(dtype)
    outs = []
    for be in (cpu, gpu):
        ops = prelu_dropout_ops(be)
        state = ops.state(12345)
        got = []
        for _ in range(2):
            ops.advance(state)
            y = be.empty(shape, dtype)
            ops.dropout(state, 0.4, be.asarray(x), y)
            got.append(be.to_host(y))
        outs.append(got)
    for c, g in zip(*outs):
        np.testing.assert_array_equal(g, c)
    kept = outs[1][0] != 0
    np.testing.assert_allclose(outs[1][0][kept], x[kept] / dtype(0.6), rtol=1e-6)


def test_network_step_matches_the_cpu(backends):
    """Affine -> ParametricRelu (trained) -> Dropout -> Affine -> Softmax: a training step on
    the cuda backend equals the cpu one (masks included), and test mode is the identity."""
    cpu, gpu = backends
    rng = np.random.default_rng(3)
    base = tiny_net(rng, dim=6, hid=9, num_classes=4)
    comps = base.copy_components()
    comps[1:2] = [ParametricRelu(9, 9, rng.uniform(0.5, 1.5, 9), rng.uniform(-0.2, 0.2, 9),
                                 1.0, 1.0), Dropout(9, 9, 0.25)]
    x = rng.standard_normal((40, 6))
    dy = rng.standard_normal((40, 4))
    res = []
    for be in (cpu, gpu):
        net = Nnet([c.detached(c.params) for c in comps]).to_backend(be, np.float64)
        test_out = be.to_host(net.propagate(be.asarray(x), through_softmax=False))
        net.set_training(True, seed=9)
        out = be.to_host(net.propagate(be.asarray(x), through_softmax=False))
        net.backpropagate(be.asarray(dy), input_diff=False)
        net.update(NnetTrainOptions(learn_rate=0.01, momentum=0.5))
        res.append((test_out, out, be.to_host(net.params)))
    for c, g in zip(*res):
        np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12)
    assert not np.allclose(res[0][0], res[0][1])  # the mask changed the training output
