"""NG-SGD's cuda path against its cpu path, on numba's CUDA simulator (run by test_ngsgd_cuda.py)
or on a real GPU (make test-gpu).

Tiny shapes (the simulator runs each GPU thread as a Python thread), but rows longer than a
block (130 > 128 threads) for the row-norm reduction."""
import numpy as np
import pytest

from helpers import softmax_layer
from nnetmix.nnet import NnetTrainOptions
from nnetmix.train.ngsgd import OnlineNaturalGradient, setup_optimizer
from nnetmix.kernels.ngsgd_cpu import ngsgd_ops
from nnetmix.train.options import OptimizerOptions

pytestmark = pytest.mark.cuda_device


@pytest.fixture(scope="module")
def backends():
    from nnetmix.kernels import get_backend
    return get_backend("cpu"), get_backend("cuda")


def test_helper_kernels(backends, dtype=np.float32):
    cpu, gpu = backends
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 130)).astype(dtype)
    c = rng.standard_normal(130).astype(dtype)
    r = rng.standard_normal(3).astype(dtype)
    for be in (cpu, gpu):
        ops = ngsgd_ops(be)
        xa = be.empty((3, 131), dtype=dtype)
        ops.append_ones(be.asarray(x), xa)
        np.testing.assert_array_equal(be.to_host(xa), np.hstack([x, np.ones((3, 1), dtype)]))
        a = be.asarray(x)
        ops.scale_cols(a, be.asarray(c))
        np.testing.assert_allclose(be.to_host(a), x * c, rtol=1e-6)
        out = be.empty((3, 130), dtype=dtype)
        ops.scale_rows(be.asarray(x), be.asarray(r), out)
        np.testing.assert_allclose(be.to_host(out), x * r[:, None], rtol=1e-6)
        rows = be.empty((3,), dtype=np.float64)
        ops.row_sqnorms(be.asarray(x), rows)
        np.testing.assert_allclose(ops.host(rows), (x.astype(np.float64) ** 2).sum(1), rtol=1e-6)
        xs = np.hstack([x, np.ones((3, 1), dtype)])
        for start, stop in ((0, 130), (130, 131), (5, 9)):
            v = ops.cols(xa, start, stop)
            assert tuple(v.shape) == (3, stop - start)
            np.testing.assert_array_equal(be.to_host(v), xs[:, start:stop])
            g = be.empty((stop - start, 131), dtype=dtype)     # a GEMM reads the strided view
            be.gemm(v, xa, g, trans_a=True)
            np.testing.assert_allclose(be.to_host(g), xs[:, start:stop].T @ xs, rtol=1e-5, atol=1e-4)


def test_preconditioner_matches_cpu(backends, dtype=np.float64):
    """Initialisation, then updating and non-updating minibatches: same X̂ and gamma on both.
    (Few steps: the simulator takes seconds per step.)"""
    rng = np.random.default_rng(1)
    ps = [OnlineNaturalGradient(7, 3, update_period=2, num_samples_history=50) for _ in range(2)]
    for p in ps:
        p.t = 10   # as if past the eager phase, so the 3 steps below update, skip, update
    tol = 1e-9
    for _ in range(3):
        X = (rng.standard_normal((5, 7)) * np.linspace(0.3, 3, 7)).astype(dtype)
        got = []
        for be, p in zip(backends, ps):
            Xb = be.asarray(X)
            rows = np.empty(5)
            g = p.precondition(be, ngsgd_ops(be), Xb, rows)
            got.append((g * be.to_host(Xb), rows))
        np.testing.assert_allclose(got[1][0], got[0][0], rtol=tol, atol=tol)
        np.testing.assert_allclose(got[1][1], got[0][1], rtol=tol, atol=tol)


def test_training_step_matches_cpu(backends, tmp_path):
    """One NG-SGD step of a softmax layer on both backends: same parameters and saved state
    (the weight gradient is a GEMM on a strided view of [x̂ | 1̂]). Two rows, no more than the
    ranks: the initialisation takes its one-iteration path, which keeps the simulator quick."""
    rng = np.random.default_rng(2)
    batches = [(rng.standard_normal((2, 6)), np.array([1, 4], np.int32))]
    opts = OptimizerOptions(optimizer="ngsgd", ngsgd_rank_in=3, ngsgd_rank_out=2)
    params = []
    for be in backends:
        nnet = softmax_layer(np.random.default_rng(3)).to_backend(be, dtype=np.float64)
        ng = setup_optimizer(nnet, opts)
        for x, t in batches:
            logits = nnet.propagate(be.asarray(x), through_softmax=False)
            grad = be.empty(tuple(logits.shape), dtype=np.float64)
            be.softmax_xent(logits, t, be.empty(tuple(logits.shape), dtype=np.float64), grad)
            nnet.backpropagate(grad, input_diff=False)
            nnet.update(NnetTrainOptions(learn_rate=0.1), len(t))
        params.append(be.to_host(nnet.params))
        ng.save(str(tmp_path / f"{be.name}.npz"))
    np.testing.assert_allclose(params[1], params[0], rtol=1e-9, atol=1e-12)
    with np.load(tmp_path / "cpu.npz") as a, np.load(tmp_path / "cuda.npz") as b:
        for k in a.files:
            if k != "meta":
                np.testing.assert_allclose(b[k], a[k], rtol=1e-6, atol=1e-9)


def test_device_path_matches_host_path(backends, dtype=np.float64):
    """A minibatch that updates nothing: precondition_on_device (scalars left on the device)
    gives precondition's X̂, gamma and row norms."""
    cpu, gpu = backends
    rng = np.random.default_rng(4)
    ps = [OnlineNaturalGradient(7, 3, update_period=4, num_samples_history=50) for _ in range(2)]
    X0 = (rng.standard_normal((5, 7)) * np.linspace(0.3, 3, 7)).astype(dtype)
    for p in ps:   # the same estimate on both: initialised on the cpu
        p.precondition(cpu, ngsgd_ops(cpu), X0.copy(), np.empty(5))
        p.t = 11
    X = (rng.standard_normal((5, 7)) * np.linspace(0.3, 3, 7)).astype(dtype)
    rows = np.empty(5)
    g_host = ps[0].precondition(cpu, ngsgd_ops(cpu), Xh := X.copy(), rows)
    ops = ngsgd_ops(gpu)
    assert ps[1].stays_on_device(ops) and not ps[0].stays_on_device(ngsgd_ops(cpu))
    Xd = gpu.asarray(X)
    g_dev, rows_dev = ps[1].precondition_on_device(gpu, ops, Xd)
    np.testing.assert_allclose(gpu.to_host(Xd), Xh, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gpu.to_host(g_dev)[0], g_host, rtol=1e-12)
    np.testing.assert_allclose(gpu.to_host(rows_dev), rows, rtol=1e-12)
    assert ps[0].t == ps[1].t == 12


def test_steps_on_device_match_cpu_with_max_change(backends):
    """Steps past the eager phase that update no estimate run on the device (gamma, the change
    norm and the max-change factor never read back) and give the cpu's parameters and the
    same count of limited updates."""
    rng = np.random.default_rng(5)
    batches = [(rng.standard_normal((2, 6)), np.array([1, 4], np.int32)) for _ in range(3)]
    opts = OptimizerOptions(optimizer="ngsgd", ngsgd_rank_in=3, ngsgd_rank_out=2,
                            ngsgd_update_period=4, max_change_per_sample=1e-3)
    out = []
    for be in backends:
        nnet = softmax_layer(np.random.default_rng(3)).to_backend(be, dtype=np.float64)
        ng = setup_optimizer(nnet, opts)
        for step, (x, t) in enumerate(batches):
            if step >= 1:
                for layer in ng.layers.values():   # past the eager phase; 11, 13: no update
                    layer.inp.t = layer.out.t = 9 + 2 * step
            logits = nnet.propagate(be.asarray(x), through_softmax=False)
            grad = be.empty(tuple(logits.shape), dtype=np.float64)
            be.softmax_xent(logits, t, be.empty(tuple(logits.shape), dtype=np.float64), grad)
            nnet.backpropagate(grad, input_diff=False)
            nnet.update(NnetTrainOptions(learn_rate=0.1), len(t))
            if step >= 1:
                assert all(l.on_device == (be.name == "cuda") for l in ng.layers.values())
        out.append((be.to_host(nnet.params), ng.num_limited))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-9, atol=1e-12)
    assert out[1][1] == out[0][1] > 0
