"""train_epoch: learning, cross-validation, the hook and minibatch-count contracts, errors."""
import dataclasses
import logging

import numpy as np
import pytest
from helpers import separable_utts, tiny_net

from nnetmix.kernels import get_backend
from nnetmix.nnet import AffineTransform, Nnet, NnetTrainOptions, Sigmoid
from nnetmix.train import TrainError, TrainOptions, num_minibatches, train_epoch

OPTS = TrainOptions(minibatch_size=32, randomizer_size=256)
UPD = NnetTrainOptions(learn_rate=0.01, momentum=0.5)


def _setup(seed=1, n=60):
    rng = np.random.default_rng(seed)
    utts = separable_utts(rng, n)
    return utts, tiny_net(rng).to_backend(get_backend("cpu"))


def test_separable_problem_learns():
    utts, net = _setup()
    cv = dataclasses.replace(OPTS, cross_validate=True)
    before = train_epoch(net, utts, cv)
    for _ in range(3):
        train_epoch(net, utts, OPTS, UPD)
    after = train_epoch(net, utts, cv)
    assert after.avg_loss < 0.5 * before.avg_loss
    assert after.frame_accuracy > 95.0 > before.frame_accuracy + 20
    assert after.frames == num_minibatches(sum(len(u[2]) for u in utts), 32) * 32


def test_cross_validation_leaves_the_model_alone():
    utts, net = _setup()
    p0 = net.host_params()
    st = train_epoch(net, utts, dataclasses.replace(OPTS, cross_validate=True))
    assert not st.randomized and st.frames > 0
    for a, b in zip(p0, net.host_params()):
        for k in a:
            assert np.array_equal(a[k], b[k])


def test_prefetch_gives_the_same_model_and_hook_contract():
    utts, net_a = _setup()
    _, net_b = _setup()
    steps = []
    st_a = train_epoch(net_a, utts, dataclasses.replace(OPTS, prefetch=True), UPD,
                       hook=lambda step, nnet: steps.append((step, nnet is net_a)))
    st_b = train_epoch(net_b, iter(utts), dataclasses.replace(OPTS, prefetch=False), UPD)
    assert np.array_equal(np.asarray(net_a.params), np.asarray(net_b.params))
    assert steps == [(i + 1, True) for i in range(st_a.minibatches)]
    assert st_a.as_vector().tolist() == st_b.as_vector().tolist()
    assert st_a.time_total >= st_a.time_optimize > 0 and st_a.time_io >= 0


def test_agreed_number_of_minibatches():
    utts, net = _setup()
    st = train_epoch(net, utts, OPTS, UPD, num_minibatches=7)
    assert st.minibatches == 7 and st.frames == 7 * 32
    with pytest.raises(TrainError, match="ran out after .* minibatches, 10000 were agreed"):
        train_epoch(net, utts, OPTS, UPD, num_minibatches=10000)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_stops_the_training():
    utts, net = _setup()
    bad = [(k, f.copy(), t) for k, f, t in utts]
    bad[20][1][3, 2] = np.nan
    with pytest.raises(TrainError, match="'nan' or 'inf' loss .*the training stops here"):
        train_epoch(net, bad, OPTS, UPD)
    utts, net = _setup()
    with pytest.raises(TrainError, match="'nan' or 'inf'"):  # a learning rate that explodes
        train_epoch(net, utts, OPTS, NnetTrainOptions(learn_rate=1e38))


def test_missing_targets_and_length_mismatch_are_counted(caplog):
    utts, net = _setup()
    data = list(utts)
    data[3] = (data[3][0], data[3][1], None)
    data[5] = (data[5][0], data[5][1], data[5][2][:-3])    # within tolerance: truncated
    data[7] = (data[7][0], data[7][1], data[7][2][:-9])    # beyond: dropped
    with caplog.at_level(logging.WARNING):
        st = train_epoch(net, data, OPTS, UPD)
    assert (st.num_done, st.num_no_tgt, st.num_other_error) == (58, 1, 1)
    assert f"{data[3][0]}, missing targets" in caplog.text
    assert f"Length mismatch! Targets {len(data[7][2])}, features {len(data[7][1])}, " \
           f"{data[7][0]}" in caplog.text
    assert "Done 58 files, 1 with no tgt_mats, 1 with other errors." in st.summary_line()
    many = [(k, f, None if i % 2 else t) for i, (k, f, t) in enumerate(utts)]
    with pytest.raises(TrainError, match="30 of 60 utterances dropped"):
        train_epoch(net, many, OPTS, UPD)
    with pytest.raises(TrainError, match="no utterance could be used"):
        train_epoch(net, [(k, f, None) for k, f, _ in utts], OPTS, UPD)


def test_target_out_of_range_and_dim_mismatch():
    utts, net = _setup()
    k, f, t = utts[4]
    t = t.copy()
    t[9] = 5
    with pytest.raises(TrainError, match=f"utterance {k}: target 5 at frame 9 is outside the "
                                         r"network's output layer \(dim 5"):
        train_epoch(net, [utts[0], (k, f, t)], OPTS, UPD)
    with pytest.raises(TrainError, match=r"utterance utt0000: feature dim is 7, the network's "
                                         "input dim is 6"):
        train_epoch(net, [(k, np.zeros((len(t), 7), np.float32), t) for k, _, t in utts], OPTS,
                    UPD)
    transf = Nnet([AffineTransform(4, 6, np.eye(6, 4), np.zeros(6)), Sigmoid(6, 6)])
    with pytest.raises(TrainError, match="feature dim 6, the feature transform's input dim is 4"):
        train_epoch(net, utts, OPTS, UPD, feature_transform=transf)
    with pytest.raises(TrainError, match="ending in <Softmax>"):
        train_epoch(net.sub(0, 3), utts, OPTS, UPD)


def test_feature_transform_is_applied_per_utterance():
    utts, net = _setup()
    rng = np.random.default_rng(9)
    A = rng.standard_normal((6, 6))
    transf = Nnet([AffineTransform(6, 6, A, np.zeros(6))])
    mapped = [(k, (f @ A.T).astype(np.float32), t) for k, f, t in utts]
    _, net2 = _setup()
    cv = dataclasses.replace(OPTS, cross_validate=True)
    a = train_epoch(net, utts, cv, feature_transform=transf)
    b = train_epoch(net2, mapped, cv)
    assert a.avg_loss == pytest.approx(b.avg_loss, rel=1e-5)


class _DeferringCpu(type(get_backend("cpu"))):
    """The cpu backend leaving 5 minibatches' losses uncollected, as the cuda backend leaves
    xent_defer of them on the GPU."""

    name = "cpu-deferring"
    xent_defer = 5


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_deferred_loss_collection_changes_nothing():
    """Statistics, model and the minibatch a 'nan' is reported in do not depend on how many
    minibatches the backend keeps before the trainer reads their losses."""
    runs = {}
    for be in (get_backend("cpu"), _DeferringCpu()):
        utts, net = _setup()
        net = net.to_backend(be)
        st = train_epoch(net, utts, OPTS, UPD)
        bad = [(k, f.copy(), t) for k, f, t in utts]
        bad[20][1][3, 2] = np.nan
        with pytest.raises(TrainError) as e:
            train_epoch(net, bad, OPTS, UPD)
        runs[be.name] = (st.as_vector().tolist(), np.asarray(net.params).copy(), str(e.value))
    (sa, pa, ea), (sb, pb, eb) = runs.values()
    assert sa == sb and ea == eb and "in minibatch" in ea
    np.testing.assert_array_equal(pa, pb)
