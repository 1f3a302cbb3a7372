"""The online Fisher estimate and the preconditioning of nnetmix.train.ngsgd (cpu backend)."""
import numpy as np
import pytest

from helpers import gaussian_rows, random_basis, tiny_mlp
from ngsgd_reference import ReferenceFisher
from nnetmix.kernels import get_backend
from nnetmix.train.ngsgd import NaturalGradient, NgsgdError, OnlineNaturalGradient, setup_optimizer
from nnetmix.kernels.ngsgd_cpu import ngsgd_ops
from nnetmix.train.options import OptimizerOptions, TrainError
from nnetmix.nnet import NnetTrainOptions


@pytest.fixture(scope="module")
def cpu():
    return get_backend("cpu")


def run(be, p, X):
    """One preconditioning; returns (gamma * X̂, row norms², gamma)."""
    Xb = be.asarray(X, dtype=X.dtype)
    rows = np.empty(X.shape[0])
    g = p.precondition(be, ngsgd_ops(be), Xb, rows)
    return g * be.to_host(Xb), rows, g


def test_subspace_converges_to_top_eigenvectors(cpu):
    """Known spectrum: 8 large eigenvalues (100 .. 5) over a floor of 1 in 40 dims."""
    rng = np.random.default_rng(0)
    dim, rank = 40, 8
    Q = random_basis(rng, dim)
    lam = np.concatenate([np.geomspace(100, 5, rank), np.ones(dim - rank)])
    p = OnlineNaturalGradient(dim, rank, update_period=1, num_samples_history=2000, alpha=4.0)
    for _ in range(150):
        run(cpu, p, gaussian_rows(rng, 128, lam, Q, np.float32))
    R = np.asarray(p.R, np.float64)
    np.testing.assert_allclose(R @ R.T, np.eye(rank), atol=1e-4)
    cosines = np.linalg.svd(R @ Q[:, :rank], compute_uv=False)   # principal angles
    assert cosines.min() > 0.99, cosines
    np.testing.assert_allclose(p.d + p.rho, lam[:rank], rtol=0.25)
    assert abs(p.rho - 1.0) < 0.1


@pytest.mark.parametrize("alpha", [0.0, 4.0])
def test_full_rank_long_history_is_the_inverse_fisher_direction(cpu, alpha):
    """rank = dim - 1, a history of 100 minibatches, 1000 minibatches: X̂ -> X (S + alpha
    tr(S)/dim I)^-1 (rescaled). (A history far longer than the data seen converges slower:
    the subspace is then rotated by eta-sized steps only.)"""
    rng = np.random.default_rng(1)
    dim = 12
    A = rng.standard_normal((dim, dim))
    S = A @ A.T / dim + 0.05 * np.eye(dim)
    lam, Q = np.linalg.eigh(S)
    p = OnlineNaturalGradient(dim, dim - 1, update_period=1, num_samples_history=1e4, alpha=alpha)
    for _ in range(1000):
        X = gaussian_rows(rng, 100, lam, Q)
        got, _, _ = run(cpu, p, X)
    ref = X @ np.linalg.inv(S + alpha * np.trace(S) / dim * np.eye(dim))
    cos = (ref * got).sum() / np.linalg.norm(ref) / np.linalg.norm(got)
    assert cos > 0.998, cos


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_frobenius_norm_preserved(cpu, dtype):
    rng = np.random.default_rng(2)
    p = OnlineNaturalGradient(30, 7, update_period=2)
    for step in range(14):
        X = (rng.standard_normal((50, 30)) * np.geomspace(0.1, 10, 30)).astype(dtype)
        got, rows, g = run(cpu, p, X)
        np.testing.assert_allclose(np.linalg.norm(got), np.linalg.norm(X.astype(np.float64)),
                                   rtol=1e-5)
        np.testing.assert_allclose(rows.sum() * g * g, np.linalg.norm(got) ** 2, rtol=1e-4)
        assert step < 3 or not np.allclose(got, X, rtol=1e-2)   # it does change the direction


def test_matches_float64_reference(cpu):
    """Backend code vs the numpy equations, over updating and non-updating steps."""
    rng = np.random.default_rng(3)
    dim, rank = 9, 4
    p = OnlineNaturalGradient(dim, rank, update_period=3, num_samples_history=300, alpha=2.0)
    run(cpu, p, rng.standard_normal((20, dim)))   # initialisation from the first minibatch
    ref = ReferenceFisher(p.R, p.d, p.rho, p.t, 3, 300, 2.0)
    for _ in range(16):                             # t = 1 .. 16: eager, then every 3rd
        X = rng.standard_normal((20, dim)) * np.linspace(0.2, 3, dim)
        got, _, _ = run(cpu, p, X)
        np.testing.assert_allclose(got, ref.step(X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(p.R).T @ np.diag(p.d) @ np.asarray(p.R)
                               + p.rho * np.eye(dim), ref.dense(), rtol=1e-6, atol=1e-9)


def test_layer_gradient_and_max_change(cpu):
    """grads = gamma_in gamma_out ĝ^T [x̂ | 1̂]; the step is capped at max-change-per-sample."""
    rng = np.random.default_rng(4)
    nnet = tiny_mlp(rng).to_backend(cpu, dtype=np.float64)
    ng = setup_optimizer(nnet, OptimizerOptions(optimizer="ngsgd", ngsgd_rank_in=3,
                                                ngsgd_rank_out=2, max_change_per_sample=1e-3))
    x = rng.standard_normal((16, 6))
    out = nnet.propagate(x, through_softmax=False)
    dy = rng.standard_normal(out.shape)
    before = nnet.host_params()
    # what the hook does for the last layer, by hand: the same preconditioners, fresh copies
    import copy
    layer = copy.deepcopy(ng.layers[2])
    h = nnet._act_list[2].copy()
    xin, _, _ = run(cpu, layer.inp, np.hstack([h, np.ones((16, 1))]))
    gout, _, _ = run(cpu, layer.out, dy)
    nnet.backpropagate(dy.copy(), input_diff=False)
    g = nnet._views(nnet.grads)[2]
    np.testing.assert_allclose(g["W"], gout.T @ xin[:, :-1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(g["b"], gout.T @ xin[:, -1], rtol=1e-9, atol=1e-12)
    lr = 0.5
    nnet.update(NnetTrainOptions(learn_rate=lr), 16)
    assert ng.num_limited == 2                      # both layers hit the tiny limit
    after = nnet.host_params()
    for c in (0, 2):
        dW = np.concatenate([(after[c]["W"] - before[c]["W"]).ravel()])
        assert np.linalg.norm(dW) <= 1e-3 * 16 * (1 + 1e-9)


def test_state_round_trip(cpu, tmp_path):
    """Save after 7 steps, load into a fresh object: the next steps are identical."""
    rng = np.random.default_rng(5)
    opts = OptimizerOptions(optimizer="ngsgd", ngsgd_rank_in=3, ngsgd_rank_out=2,
                            ngsgd_update_period=2)
    batches = [(rng.standard_normal((12, 6)), rng.integers(0, 5, 12)) for _ in range(12)]

    def train(nnet, bs):
        for x, t in bs:
            logits = nnet.propagate(x, through_softmax=False)
            grad = np.empty_like(logits)
            cpu.softmax_xent(logits, t.astype(np.int32), np.empty_like(logits), grad)
            nnet.backpropagate(grad, input_diff=False)
            nnet.update(NnetTrainOptions(learn_rate=0.05, momentum=0.0), len(t))

    a = tiny_mlp(np.random.default_rng(6)).to_backend(cpu, dtype=np.float64)
    ng_a = setup_optimizer(a, opts)
    train(a, batches[:7])
    path = tmp_path / "nnet.ngsgd.npz"
    ng_a.save(str(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nnet.ngsgd.npz"]   # no temp left
    b = tiny_mlp(np.random.default_rng(6)).to_backend(cpu, dtype=np.float64)
    b.set_params(np.asarray(a.params))
    ng_b = setup_optimizer(b, opts, state_in=str(path))
    assert ng_b.layers[0].inp.t == 7
    train(a, batches[7:])
    train(b, batches[7:])
    np.testing.assert_array_equal(np.asarray(a.params), np.asarray(b.params))
    # a state for other ranks or another network is refused with a message
    with pytest.raises(NgsgdError, match="ngsgd-rank-in"):
        setup_optimizer(b, OptimizerOptions(optimizer="ngsgd", ngsgd_rank_in=4), str(path))
    other = tiny_mlp(np.random.default_rng(6), hid=7).to_backend(cpu)
    with pytest.raises(NgsgdError, match="another model"):
        setup_optimizer(other, opts, str(path))


def test_sgd_leaves_the_network_alone(cpu):
    nnet = tiny_mlp(np.random.default_rng(7)).to_backend(cpu)
    assert setup_optimizer(nnet, OptimizerOptions()) is None and nnet.preconditioner is None
    with pytest.raises(TrainError, match="--optimizer=adam"):
        OptimizerOptions(optimizer="adam").check()
    NaturalGradient(nnet, OptimizerOptions(optimizer="ngsgd")).attach(nnet)
    assert setup_optimizer(nnet, OptimizerOptions(optimizer="sgd")) is None
    assert nnet.preconditioner is None
