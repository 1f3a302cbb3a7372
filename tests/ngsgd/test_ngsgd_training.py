"""NG-SGD in training: faster than plain SGD on an ill-conditioned task; the bin/ tool's options
and the state file beside the model."""
import logging

import numpy as np

from helpers import (ill_conditioned_task, linear_net, load_bin, tiny_mlp, write_feats,
                     write_targets)

from nnetmix.kernels import get_backend
from nnetmix.nnet import NnetTrainOptions
from nnetmix.train import TrainOptions, train_epoch
from nnetmix.train.ngsgd import setup_optimizer
from nnetmix.train.options import OptimizerOptions


def _losses(optimizer: str, utts, epochs: int = 3, lr: float = 0.01):
    nnet = linear_net(16, 4).to_backend(get_backend("cpu"))
    setup_optimizer(nnet, OptimizerOptions(optimizer=optimizer))
    out = []
    for _ in range(epochs):
        st = train_epoch(nnet, utts, TrainOptions(minibatch_size=32, randomizer_size=2048,
                                                  prefetch=False),
                         NnetTrainOptions(learn_rate=lr), log=logging.getLogger("ngsgd-test"))
        out.append(st.xent_sum / st.frames)
    return out


def test_ngsgd_converges_faster_than_sgd():
    """Same learning rate, same data order: NG-SGD after 2 epochs beats SGD after 3."""
    utts = ill_conditioned_task(np.random.default_rng(1))
    sgd = _losses("sgd", utts)
    ng = _losses("ngsgd", utts)
    assert all(np.isfinite(ng)) and ng[0] > ng[1] > ng[2]
    assert ng[1] < sgd[2], (sgd, ng)
    assert ng[2] < sgd[2] - 0.03, (sgd, ng)


def _write_task(tmp, rng):
    utts = []
    means = rng.standard_normal((5, 6)) * 2.0
    for u in range(12):
        labels = rng.integers(0, 5, 40).astype(np.int32)
        utts.append((f"u{u:02d}", (means[labels] + 0.5 * rng.standard_normal((40, 6))
                                   ).astype(np.float32), labels))
    feats = write_feats(tmp, [(k, f) for k, f, _ in utts], "f")
    targets = write_targets(tmp / "p.ark", utts)
    tiny_mlp(rng).write(str(tmp / "nnet.init"))
    return feats, targets


def test_train_tool_ngsgd_state_beside_the_model(tmp_path, capsys):
    feats, post = _write_task(tmp_path, np.random.default_rng(2))
    tool = load_bin("nnet-train-frmshuff.py")
    common = ["--optimizer=ngsgd", "--ngsgd-rank-in=3", "--ngsgd-rank-out=2",
              "--learn-rate=0.01", "--minibatch-size=16", "--randomizer-size=128"]
    assert tool.main(common + [feats, post, str(tmp_path / "nnet.init"),
                               str(tmp_path / "nnet.1")]) == 0
    err = capsys.readouterr().err
    assert "fresh Fisher estimate" in err and "AvgLoss:" in err
    assert (tmp_path / "nnet.1.ngsgd.npz").is_file()
    assert tool.main(common + [feats, post, str(tmp_path / "nnet.1"), str(tmp_path / "nnet.2")]) == 0
    err = capsys.readouterr().err
    assert f"NG-SGD state read from {tmp_path}/nnet.1.ngsgd.npz" in err
    with np.load(tmp_path / "nnet.2.ngsgd.npz") as z:
        assert int(z["c0.in.t"]) == 2 * 480 // 16
    # a state made with other ranks is a one-line error, not a traceback
    assert tool.main(["--optimizer=ngsgd", feats, post, str(tmp_path / "nnet.2"),
                      str(tmp_path / "nnet.3")]) == 1
    assert "ngsgd-rank-in" in capsys.readouterr().err
    assert tool.main(["--optimizer=adam", feats, post, str(tmp_path / "nnet.init"),
                      str(tmp_path / "nnet.4")]) == 1
    assert "--optimizer=adam" in capsys.readouterr().err
    # plain sgd writes no state
    assert tool.main(["--minibatch-size=16", feats, post, str(tmp_path / "nnet.init"),
                      str(tmp_path / "nnet.5")]) == 0
    assert not (tmp_path / "nnet.5.ngsgd.npz").exists()
