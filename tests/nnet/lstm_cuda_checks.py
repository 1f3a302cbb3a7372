"""LstmProjected/BlstmProjected on the cuda backend against the cpu backend: on numba's CUDA
simulator (test_nnet_lstm.py runs this file in a fresh pytest, NUMBA_ENABLE_CUDASIM=1) or on a
real GPU (``make test-gpu``). Tiny shapes: the simulator runs every GPU thread in Python."""
import numpy as np
import pytest

from nnetmix.kernels import get_backend
from nnetmix.nnet import (AffineTransform, BlstmProjected, LstmProjected, Nnet,
                          NnetTrainOptions)

pytestmark = pytest.mark.cuda_device


def _comps(seed):
    rng = np.random.default_rng(seed)

    def blocks(prefix, I, C, P):
        shapes = {"w_gifo_x": (4 * C, I), "w_gifo_r": (4 * C, P), "bias": (4 * C,),
                  "peephole_i_c": (C,), "peephole_f_c": (C,), "peephole_o_c": (C,),
                  "w_r_m": (P, C)}
        return {prefix + n: rng.standard_normal(s) * 0.5 for n, s in shapes.items()}

    return [LstmProjected(3, 2, 3, blocks("", 3, 3, 2), cell_clip=0.4, diff_clip=0.05,
                          grad_clip=0.5),
            BlstmProjected(2, 4, 2, {**blocks("f_", 2, 2, 2), **blocks("b_", 2, 2, 2)}),
            AffineTransform(4, 2, rng.standard_normal((2, 4)), rng.standard_normal(2))]


def _cpu_and_cuda(dtype) -> tuple[list, dict]:
    """The same network on the cpu and the cuda backend, and the tolerance between them."""
    nets = [Nnet(_comps(7), backend=get_backend(b), dtype=dtype) for b in ("cpu", "cuda")]
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    return nets, tol


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_cuda_matches_cpu(dtype):
    rng = np.random.default_rng(1)
    nets, tol = _cpu_and_cuda(dtype)
    xs = [rng.standard_normal((6, 3)).astype(dtype) for _ in range(2)]
    dy = rng.standard_normal((6, 2)).astype(dtype)
    out = []
    for net in nets:
        be = net.backend
        net.set_seq_lengths([3, 3])
        net.propagate(be.asarray(xs[0]))
        net.reset_streams([0, 1])                 # stream 0 keeps its state, stream 1 restarts
        net.set_seq_lengths([3, 2])
        y = be.to_host(net.propagate(be.asarray(xs[1])))
        dx = be.to_host(net.backpropagate(be.asarray(dy)))
        g = be.to_host(net.grads)
        net.update(NnetTrainOptions(learn_rate=0.1, momentum=0.5))
        info = net.info_gradient()
        out.append((y, dx, g, be.to_host(net.params), info))
    for a, b in zip(out[0][:4], out[1][:4]):
        np.testing.assert_allclose(b, a, **tol)
    assert np.abs(out[0][1]).max() > 1e-3 and (out[1][1][5] == 0).all()   # padded frame: no diff
    assert "YC_BW(-R..R)* " in out[1][4]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_tail_on_some_rows_matches_cpu(dtype):
    """Nnet.propagate(x, rows=...) (the affine tail on the trained rows only, through the
    backend's take_rows/put_rows) on cuda as on cpu: the output rows, the input derivative
    and the gradients."""
    rng = np.random.default_rng(2)
    nets, tol = _cpu_and_cuda(dtype)
    x = rng.standard_normal((6, 3)).astype(dtype)
    keep = np.array([1, 2, 4])
    dy = rng.standard_normal((3, 2)).astype(dtype)
    out = []
    for net in nets:
        be = net.backend
        net.set_seq_lengths([3, 2])
        net.reset_streams([1, 1])
        y = be.to_host(net.propagate(be.asarray(x), rows=keep))
        dx = be.to_host(net.backpropagate(be.asarray(dy)))
        out.append((y, dx, be.to_host(net.grads)))
    assert out[0][0].shape == (3, 2)
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, **tol)
