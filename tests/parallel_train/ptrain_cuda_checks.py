"""The training tools on a real GPU (``make test-gpu``): train_epoch in process,
nnet-train-frmshuff.py and nnet-train-mpi.py with ``--backend=cuda`` train the model
``--backend=cpu`` trains, up to float32 rounding (the GEMMs sum in another order), with plain
SGD and with NG-SGD, on 1 and 2 ranks (both ranks share the one GPU). The file name keeps the
default suite from collecting it: on numba's simulator each epoch would take minutes.
"""
import dataclasses

import numpy as np
import pytest
from helpers import mpi_task, read_params, run_frmshuff, run_mpi, separable_utts, tiny_net

from nnetmix.kernels import get_backend
from nnetmix.nnet import NnetTrainOptions
from nnetmix.train import TrainOptions, train_epoch
from nnetmix.train.ngsgd import setup_optimizer
from nnetmix.train.options import OptimizerOptions

pytestmark = pytest.mark.cuda_device

MB = ["--minibatch-size=16", "--randomizer-size=64", "--learn-rate=0.02"]
NGSGD = ["--optimizer=ngsgd", "--ngsgd-rank-in=3", "--ngsgd-rank-out=2"]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("ptrain_cuda")
    return (d, *mpi_task(d, 11, num_utts=40, hid=40))


def _losses(stderr: str) -> list[float]:
    return [float(ln.split("AvgLoss:")[1].split()[0]) for ln in stderr.splitlines()
            if "AvgLoss:" in ln]


@pytest.mark.parametrize("opt", [[], NGSGD], ids=["sgd", "ngsgd"])
def test_frmshuff_cuda_equals_cpu(task, opt):
    d, data, init = task
    out = {}
    for be in ("cpu", "cuda"):
        p = run_frmshuff([*MB, *opt, f"--backend={be}", data["feats"], data["targets"], init,
                          d / f"frm_{be}_{len(opt)}.nnet"])
        assert p.returncode == 0, p.stderr
        out[be] = (read_params(d / f"frm_{be}_{len(opt)}.nnet"), _losses(p.stderr))
    np.testing.assert_allclose(out["cuda"][0], out["cpu"][0], rtol=0, atol=2e-4)
    np.testing.assert_allclose(out["cuda"][1], out["cpu"][1], rtol=1e-4)
    assert not np.array_equal(read_params(init), out["cuda"][0])       # it did train


@pytest.mark.parametrize("opt", [[], NGSGD], ids=["sgd", "ngsgd"])
def test_mpi_two_ranks_cuda_equals_cpu(task, opt):
    d, data, init = task
    out = {}
    for be in ("cpu", "cuda"):
        p, _ = run_mpi(2, [*MB, *opt, "--average-every=4", f"--backend={be}",
                           f"--utt2num-frames={data['u2nf']}", data["feats"], data["targets"],
                           init, d / f"mpi_{be}_{len(opt)}.nnet"])
        assert p.returncode == 0, p.stderr
        if be == "cuda":
            assert "bound to GPU 0" in p.stderr and "MPI is " in p.stderr
        out[be] = (read_params(d / f"mpi_{be}_{len(opt)}.nnet"), _losses(p.stderr))
    np.testing.assert_allclose(out["cuda"][0], out["cpu"][0], rtol=0, atol=2e-4)
    np.testing.assert_allclose(out["cuda"][1], out["cpu"][1], rtol=1e-4)


@pytest.mark.parametrize("ngsgd", [False, True], ids=["sgd", "ngsgd"])
def test_train_epoch_on_cuda_equals_cpu(ngsgd):
    """train_epoch on the cuda backend (recorded steps on a GPU, with NG-SGD those that update
    no Fisher estimate; losses collected every xent_defer minibatches) gives the cpu backend's
    statistics and model, up to rounding."""
    opts = TrainOptions(minibatch_size=8, randomizer_size=64)
    upd = NnetTrainOptions(learn_rate=0.01, momentum=0.5)
    out = {}
    for name in ("cpu", "cuda"):
        rng = np.random.default_rng(1)
        utts = separable_utts(rng, 12)
        net = tiny_net(rng).to_backend(get_backend(name))
        if ngsgd:
            setup_optimizer(net, OptimizerOptions(optimizer="ngsgd", ngsgd_rank_in=3,
                                                  ngsgd_rank_out=2))
        st = train_epoch(net, utts, dataclasses.replace(opts, prefetch=False), upd)
        cv = train_epoch(net, utts, dataclasses.replace(opts, cross_validate=True))
        out[name] = (st, cv, net.to_backend(get_backend("cpu")).params)
    (a, acv, pa), (b, bcv, pb) = out["cpu"], out["cuda"]
    assert a.minibatches == b.minibatches > get_backend("cuda").xent_defer
    assert (a.frames, a.correct, acv.correct) == (b.frames, b.correct, bcv.correct)
    np.testing.assert_allclose([b.xent_sum, bcv.xent_sum], [a.xent_sum, acv.xent_sum], rtol=1e-5)
    np.testing.assert_allclose(pb, pa, rtol=0, atol=2e-4 if ngsgd else 1e-5)


def test_mpi_ring_without_epoch_average_cuda_equals_cpu(task):
    """--epoch-average=false on the GPU: each rank's model leaves the device for
    <model-out>.ranks.npz and goes back onto it in the next epoch; two epochs of ring mixing
    at 3 ranks give the cpu backend's rows and model, up to rounding."""
    d, data, init = task
    rows = {}
    for be in ("cpu", "cuda"):
        model = init
        for epoch in (1, 2):
            out = d / f"own_{be}_{epoch}.nnet"
            p, _ = run_mpi(3, [*MB, "--mixing=ring", "--average-every=4", "--epoch-average=false",
                               f"--epoch={epoch}", f"--backend={be}",
                               f"--utt2num-frames={data['u2nf']}", data["feats"],
                               data["targets"], model, out])
            assert p.returncode == 0, p.stderr
            model = out
        assert "starts from its own model of the last epoch" in p.stderr
        with np.load(f"{model}.ranks.npz") as z:
            rows[be] = z["params"]
        assert np.array_equal(rows[be][0], read_params(model))
    np.testing.assert_allclose(rows["cuda"], rows["cpu"], rtol=0, atol=2e-4)
    assert np.abs(rows["cpu"][0] - rows["cpu"][1]).max() > 1e-3       # the ranks differ
