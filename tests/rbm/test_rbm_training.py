"""train_rbm over structured synthetic data: the reconstruction error falls (Gaussian-Bernoulli
and Bernoulli-Bernoulli), the hook sees every minibatch, the agreed-count and error contracts."""
import numpy as np
import pytest

from nnetmix.kernels import get_backend
from nnetmix.nnet import Nnet
from nnetmix.nnet.init import init_components
from nnetmix.rbm import (Cd1Options, RbmError, RbmRandomizerOptions, RbmTrainOptions,
                         rbm_proto, train_rbm)
from helpers import binary_prototype_utts, low_rank_gauss_utts


def _rbm(vis, hid, vis_type, seed=7):
    return Nnet(init_components(rbm_proto(vis, hid, vis_type, "bern", 0.1), seed=seed)
                ).to_backend(get_backend("cpu"))


@pytest.mark.parametrize("vis_type,utts_fn,lr,iters", [
    ("bern", binary_prototype_utts, 0.4, 3),
    ("gauss", low_rank_gauss_utts, 0.01, 6),
])
def test_reconstruction_error_falls(vis_type, utts_fn, lr, iters):
    utts = utts_fn(np.random.default_rng(11))          # 30 x 60 = 1800 frames, dim 12
    net = _rbm(12, 16, vis_type)
    seen = []
    st = train_rbm(net, lambda it: iter(utts), RbmTrainOptions(learn_rate=lr),
                   Cd1Options(num_iters=iters, loss_report_frames=1000, prefetch=False),
                   RbmRandomizerOptions(randomizer_size=1000),
                   hook=lambda step, nnet: seen.append(step))
    assert st.iterations == iters and st.num_done == 30 * iters
    assert st.minibatches == (1800 * iters) // 100 == len(seen) and seen[-1] == st.minibatches
    prog = st.progress
    assert len(prog) >= 4
    assert prog[-1] < 0.6 * prog[0], prog
    assert st.guard_events == 0
    assert "AvgLoss:" in st.report() and "progress: [" in st.report()


def test_agreed_minibatches_and_errors():
    utts = binary_prototype_utts(np.random.default_rng(0), num_utts=5)   # 300 frames
    net = _rbm(12, 4, "bern")
    st = train_rbm(net, lambda it: iter(utts), cd1_opts=Cd1Options(prefetch=False),
                   num_minibatches=2)
    assert st.minibatches == 2
    with pytest.raises(RbmError, match="ran out after 3 minibatches"):
        train_rbm(_rbm(12, 4, "bern"), lambda it: iter(utts),
                  cd1_opts=Cd1Options(prefetch=False), num_minibatches=5)
    with pytest.raises(RbmError, match="input dim"):
        train_rbm(_rbm(10, 4, "bern"), lambda it: iter(utts), cd1_opts=Cd1Options(prefetch=False))
    with pytest.raises(RbmError, match="no utterance"):
        train_rbm(_rbm(12, 4, "bern"), lambda it: iter(utts),
                  cd1_opts=Cd1Options(prefetch=False, max_frames=10))
    with pytest.raises(RbmError, match="--num-iters"):
        train_rbm(net, lambda it: iter(utts), cd1_opts=Cd1Options(num_iters=0))


def test_reproducible_and_drop_data():
    utts = binary_prototype_utts(np.random.default_rng(4), num_utts=10)
    runs = []
    for _ in range(2):
        net = _rbm(12, 8, "bern")
        train_rbm(net, lambda it: iter(utts), cd1_opts=Cd1Options(num_iters=2, drop_data=0.5))
        runs.append(net.host_params()[0]["W"])
    np.testing.assert_array_equal(runs[0], runs[1])
    net = _rbm(12, 8, "bern")
    st = train_rbm(net, lambda it: iter(utts), cd1_opts=Cd1Options(drop_data=0.5))
    assert 150 <= st.frames + 99 and st.frames <= 400   # about half of 600 frames used


def test_stats_vector_round_trip():
    from nnetmix.rbm import RbmStats
    a = RbmStats(dim=4, frames=300, minibatches=3, mse_sum=12.5, num_done=7)
    b = RbmStats(dim=4)
    b.set_from_vector(a.as_vector() * 2)      # what an all-reduce over two equal ranks gives
    assert (b.frames, b.minibatches, b.num_done, b.mse_sum) == (600, 6, 14, 25.0)
    assert b.avg_loss == a.avg_loss
