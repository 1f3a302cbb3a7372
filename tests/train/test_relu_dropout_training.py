"""ReLU DNNs and dropout through the training tools: a ReLU DNN (<ParametricRelu> with alpha 1,
beta 0) and one with <Dropout> after every hidden layer, from make_nnet_proto's options, trained
by nnet-train-frmshuff.py and nnet-train-mpi.py (2 ranks, model averaging) on a tiny task; the
cross-validation frame accuracy must go up. Cross-validation runs without dropout."""
import re

import numpy as np
import pytest
from helpers import mpiexec, run_frmshuff, run_mpi, separable_utts, write_data

from nnetmix.nnet import Dropout, Nnet, ProtoOptions, make_nnet_proto
from nnetmix.nnet.init import init_components

MB = ["--minibatch-size=16", "--randomizer-size=128"]
#: Kaldi's ReLU recipe (egs/rm/s5/local/nnet/run_dnn_fbank_relu.sh): zero biases, no Glorot or
#: input scaling; dropout as its AMI recipe puts it (--with-dropout)
RELU = dict(activation_type="<ParametricRelu>", hid_bias_mean=0.0, hid_bias_range=0.0,
            with_glorot=False, smaller_input_weights=False, param_stddev_factor=0.3)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("relu")
    rng = np.random.default_rng(21)
    utts = separable_utts(rng, num_utts=48, noise=1.2)
    tr = write_data(d, utts[:40], "tr")
    cv = write_data(d, utts[40:], "cv")
    nets = {}
    for name, extra in (("relu", {}), ("dropout", dict(with_dropout=True,
                                                       dropout_opts="<DropoutRate>_0.2"))):
        proto = make_nnet_proto(6, 5, 2, 32, ProtoOptions(**RELU, **extra))
        nets[name] = d / f"{name}.init"
        Nnet(init_components(proto, seed=3)).write(str(nets[name]))
    return d, tr, cv, nets


def _accuracy(proc) -> float:
    assert proc.returncode == 0, proc.stderr
    m = re.findall(r"FRAME_ACCURACY >> ([0-9.]+)% <<", proc.stderr)
    assert len(m) == 1, proc.stderr
    return float(m[0])


def _cv(cv, model):
    return _accuracy(run_frmshuff([*MB, "--cross-validate=true", cv["feats"], cv["targets"],
                                   model]))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["relu", "dropout"])
def test_frmshuff_trains_relu_and_dropout_networks(task, name):
    d, tr, cv, nets = task
    before = _cv(cv, nets[name])
    model = nets[name]
    for epoch in range(3):
        out = d / f"{name}.frm{epoch}"
        _accuracy(run_frmshuff([*MB, "--learn-rate=0.004", "--momentum=0.5", tr["feats"],
                                tr["targets"], model, out]))
        model = out
    after = _cv(cv, model)
    print(f"{name}: CV frame accuracy {before:.2f}% -> {after:.2f}%")
    assert after > before + 10.0, (before, after)


def test_cross_validation_does_not_drop(task):
    """The same CV accuracy twice, and equal to the network with its <Dropout>s removed."""
    d, _, cv, nets = task
    from nnetmix.nnet import read_nnet
    net = read_nnet(str(nets["dropout"]))
    plain = Nnet([c for c in net.copy_components() if not isinstance(c, Dropout)])
    plain.write(str(d / "plain.init"))
    a = run_frmshuff([*MB, "--cross-validate=true", cv["feats"], cv["targets"], nets["dropout"]])
    b = run_frmshuff([*MB, "--cross-validate=true", cv["feats"], cv["targets"], d / "plain.init"])
    loss = [re.findall(r"AvgLoss: (\S+) \(Xent\)", p.stderr) for p in (a, b)]
    assert loss[0] and loss[0] == loss[1]
    assert _accuracy(a) == _accuracy(b)


def test_training_with_dropout_differs_from_without(task):
    """In training the masks are drawn (seeded by --randomizer-seed): the trained model differs
    from the one trained with --dropout-rate 0 (nnet-copy), and a rerun is identical."""
    from helpers import load_bin
    d, tr, _, nets = task
    assert load_bin("nnet-copy.py").main(["--dropout-rate=0", str(nets["dropout"]),
                                          str(d / "rate0.init")]) == 0
    outs = []
    for i, init in enumerate((nets["dropout"], nets["dropout"], d / "rate0.init")):
        _accuracy(run_frmshuff([*MB, tr["feats"], tr["targets"], init, d / f"t{i}.nnet"]))
        outs.append((d / f"t{i}.nnet").read_bytes())
    assert outs[0] == outs[1] and outs[0] != outs[2]


@pytest.mark.slow
def test_mpi_two_ranks_train_a_relu_dropout_network(task):
    mpiexec()
    d, tr, cv, nets = task
    before = _cv(cv, nets["dropout"])
    model = nets["dropout"]
    for epoch in range(3):
        out = d / f"mpi{epoch}.nnet"
        p, _ = run_mpi(2, [*MB, f"--utt2num-frames={tr['u2nf']}", "--average-every=4",
                           "--learn-rate=0.004", "--momentum=0.5", tr["feats"], tr["targets"],
                           str(model), str(out)])
        _accuracy(p)
        model = out
    after = _cv(cv, model)
    print(f"mpi 2 ranks, dropout: CV frame accuracy {before:.2f}% -> {after:.2f}%")
    assert after > before + 10.0


def test_scheduler_dropout_schedule(task, tmp_path):
    """--dropout-schedule=0.2,0.0 (train_scheduler.sh's): epoch 1 trains from
    <best>.dropout_rate0.2, epoch 2 from <best>.dropout_rate0.0, epoch 3 keeps 0.0; a bad rate
    is refused before anything runs."""
    from nnetmix.driver import EpochSpec, ScheduleOptions, run_schedule
    from nnetmix.nnet import NnetTrainOptions, read_nnet
    from nnetmix.train import TrainError, TrainOptions
    d, tr, cv, nets = task
    init = tmp_path / "nnet.init"
    init.write_bytes(nets["dropout"].read_bytes())
    opts = TrainOptions(minibatch_size=16, randomizer_size=128)

    def run(schedule, exp):
        spec = EpochSpec(opts, NnetTrainOptions(learn_rate=0.004))
        return run_schedule(str(init), tr["feats"], cv["feats"], tr["targets"], cv["targets"],
                            str(tmp_path / exp), spec,
                            ScheduleOptions(scheduler="exponential", num_epochs=3,
                                            dropout_schedule=schedule))

    final = run("0.2,0.0", "exp")
    rates = {p.name: [c.dropout_rate for c in read_nnet(str(p)).components
                      if isinstance(c, Dropout)] for p in tmp_path.rglob("*dropout_rate*")}
    assert rates["nnet.init.dropout_rate0.2"] == [np.float32(0.2)] * 2
    (second,) = [n for n in rates if n.startswith("nnet_iter01") and n.endswith("rate0.0")]
    assert rates[second] == [0.0, 0.0]
    assert [c.dropout_rate for c in read_nnet(final).components if isinstance(c, Dropout)] \
        == [0.0, 0.0]
    with pytest.raises(TrainError, match="'1.5' is not a rate"):
        run("0.2,1.5", "bad")
    assert not (tmp_path / "bad").exists()
