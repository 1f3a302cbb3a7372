"""bin/nnet-train-mpi.py against references: N = 1 is nnet-train-frmshuff; all-reduce after every
minibatch is large-minibatch SGD; BMUF with eta = 0, zeta = 1 is model averaging."""
import json
import numpy as np
import pytest
from helpers import (FRMSHUFF, local_sgd_reference, mpi_env, mpi_net, mpi_utts, mpiexec,
                     rank_gradients, read_params, run_frmshuff, run_mpi, run_mpiexec, write_data)

MB = ["--minibatch-size=16", "--randomizer-size=64"]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("ptrain")
    rng = np.random.default_rng(5)
    utts = mpi_utts(rng)
    data = write_data(d, utts)
    init = d / "init.nnet"
    mpi_net(rng).write(str(init))
    return d, utts, data, init


def _args(data, init, out, *extra):
    return [*MB, f"--utt2num-frames={data['u2nf']}", *extra, data["feats"], data["targets"],
            str(init), str(out)]


def test_one_rank_is_nnet_train_frmshuff_bit_exact(task):
    """At N = 1 the MPI tool reads the same utterances in the same order, seeds the randomizer
    with the same seed (seed + rank 0), scales the learning rate by 1 and its mixes are no-ops:
    the model file is byte-identical. Both run under mpiexec -n 1: Open MPI binds the process to
    a core, and OpenBLAS then rounds some sgemm results differently (1 ulp) from an unbound run."""
    d, _, data, init = task
    p, _ = run_mpi(1, _args(data, init, d / "mpi1.nnet", "--momentum=0.5"))
    assert p.returncode == 0, p.stderr
    import sys
    q = run_mpiexec([mpiexec(), "-n", "1", sys.executable, str(FRMSHUFF), *MB, "--momentum=0.5",
                        data["feats"], data["targets"], str(init), str(d / "frm.nnet")],
                       env=mpi_env(), timeout=120)
    assert q.returncode == 0, q.stderr
    assert (d / "mpi1.nnet").read_bytes() == (d / "frm.nnet").read_bytes()
    # the same AvgLoss / FRAME_ACCURACY lines, printed once
    for key in ("AvgLoss:", "FRAME_ACCURACY >>"):
        a = [ln[ln.index(key):] for ln in p.stderr.splitlines() if key in ln]
        b = [ln[ln.index(key):] for ln in q.stderr.splitlines() if key in ln]
        assert len(a) == 1 and a == b
    assert "MPI summary: 1 ranks" in p.stderr and "optimize" in p.stderr
    # and plain, unbound runs agree to float32 rounding
    r = run_frmshuff([*MB, "--momentum=0.5", data["feats"], data["targets"], init, d / "frm0.nnet"])
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(read_params(d / "frm0.nnet"), read_params(d / "mpi1.nnet"),
                               rtol=0, atol=1e-6)


def _reference_sgd(utts, init_params, n_ranks, mb, lr):
    """float64 large-minibatch SGD: each step, the average over ranks of the summed gradients
    (an exact average after every step of plain SGD)."""
    grad, steps = rank_gradients(utts, n_ranks, mb)
    return local_sgd_reference(grad, init_params, n_ranks, steps, 1, lr), steps


@pytest.mark.parametrize("n", [2, 4])
def test_allreduce_every_minibatch_is_large_minibatch_sgd(task, n):
    """Model averaging after every update of plain SGD (no momentum, lr not scaled) is one SGD
    step on the ranks' average summed gradient (seed 001 section 3): equal to float32 rounding."""
    d, utts, data, init = task
    out = d / f"ar{n}.nnet"
    p, _ = run_mpi(n, _args(data, init, out, "--learn-rate=0.01", "--randomize=false",
                            "--mixing=allreduce", "--average-every=1",
                            "--scale-lr-by-workers=false", "--allreduce=ring"))
    assert p.returncode == 0, p.stderr
    ref, steps = _reference_sgd(utts, read_params(init), n, 16, 0.01)
    assert f"{steps} minibatches agreed" in p.stderr
    got = read_params(out)
    assert np.abs(got - read_params(init)).max() > 1e-2  # it did train
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("n", [2, 4])
def test_bmuf_eta0_zeta1_is_model_averaging(task, n):
    """BMUF with block momentum 0 and block learning rate 1 is model averaging every tau
    minibatches, end to end and bit for bit (same all-reduce, same learning rate)."""
    d, _, data, init = task
    common = ["--learn-rate=0.02", "--momentum=0.5", "--average-every=3", "--allreduce=mpi"]
    p, _ = run_mpi(n, _args(data, init, d / f"ma{n}.nnet", *common, "--mixing=allreduce"))
    assert p.returncode == 0, p.stderr
    q, _ = run_mpi(n, _args(data, init, d / f"bmuf{n}.nnet", *common, "--bmuf=true",
                            "--block-momentum=0", "--block-lr=1", "--scale-lr-by-workers=true",
                            "--reset-momentum-after-block=false",
                            f"--bmuf-state={d}/bmuf{n}.npz"))
    assert q.returncode == 0, q.stderr
    assert (d / f"ma{n}.nnet").read_bytes() == (d / f"bmuf{n}.nnet").read_bytes()
    with np.load(d / f"bmuf{n}.npz") as z:
        np.testing.assert_array_equal(z["W"], read_params(d / f"bmuf{n}.nnet"))


def test_bmuf_default_lr_not_scaled_and_state_resumes(task):
    """--scale-lr-by-workers defaults to true for model averaging and false for BMUF; a BMUF
    checkpoint is taken up by the next epoch only when its W is the model given."""
    d, _, data, init = task
    p, _ = run_mpi(2, _args(data, init, d / "b1.nnet", "--learn-rate=0.01", "--bmuf=true",
                            f"--bmuf-state={d}/b.npz"))
    assert p.returncode == 0, p.stderr
    assert "learning rate 0.01 (x 1)" in p.stderr and "block momentum 0.5" in p.stderr
    q, _ = run_mpi(2, _args(data, d / "b1.nnet", d / "b2.nnet", "--learn-rate=0.01",
                            "--bmuf=true", f"--bmuf-state={d}/b.npz", "--epoch=2"))
    assert q.returncode == 0, q.stderr
    assert "resumed (block" in q.stderr
    r, _ = run_mpi(2, _args(data, init, d / "b3.nnet", "--learn-rate=0.01", "--bmuf=true",
                            f"--bmuf-state={d}/b.npz"))
    assert r.returncode == 0 and "starts afresh" in r.stderr
    m, _ = run_mpi(2, _args(data, init, d / "m.nnet", "--learn-rate=0.01"))
    assert m.returncode == 0 and "learning rate 0.02 (x 2)" in m.stderr


def test_bmuf_state_resumes_from_a_text_model(task):
    """A model written as text (--binary=false) holds its parameters at precision 7, not the
    filter's own W: the next epoch still takes up the BMUF checkpoint written with it."""
    d, _, data, init = task
    p, _ = run_mpi(2, _args(data, init, d / "t1.nnet", "--learn-rate=0.01", "--bmuf=true",
                            "--binary=false", f"--bmuf-state={d}/t.npz"))
    assert p.returncode == 0, p.stderr
    assert (d / "t1.nnet").read_bytes().startswith(b"<Nnet>")
    q, _ = run_mpi(2, _args(data, d / "t1.nnet", d / "t2.nnet", "--learn-rate=0.01",
                            "--bmuf=true", "--binary=false", f"--bmuf-state={d}/t.npz",
                            "--epoch=2"))
    assert q.returncode == 0, q.stderr
    assert "resumed (block" in q.stderr and "starts afresh" not in q.stderr


def test_cross_validation_sums_over_ranks(task):
    """CV over 4 ranks: the same frames as one process (the shards hold whole minibatches
    here) and the same AvgLoss to float rounding, printed once by rank 0."""
    d, utts, data, init = task
    cv = ["--cross-validate=true", "--minibatch-size=1", f"--utt2num-frames={data['u2nf']}",
          data["feats"], data["targets"], str(init)]
    p, _ = run_mpi(4, cv)
    assert p.returncode == 0, p.stderr
    q = run_frmshuff(cv[:2] + cv[3:])
    assert q.returncode == 0, q.stderr
    from nnetmix.train import parse_report
    a, b = parse_report(p.stderr), parse_report(q.stderr)
    assert p.stderr.count("AvgLoss:") == 1
    assert a["avg_loss"] == pytest.approx(b["avg_loss"], rel=1e-5)
    assert a["frame_accuracy"] == pytest.approx(b["frame_accuracy"], abs=1e-3)
    total = sum(f.shape[0] for _, f, _ in utts)
    assert f"Done {len(utts)} files" in p.stderr and f"{total} frames in" in p.stderr


def test_ngsgd_over_mpi(task):
    """--optimizer=ngsgd in the MPI tool: at N = 1 the model and the NG-SGD state equal
    nnet-train-frmshuff.py's byte for byte (same seed, same order), but for the number of ranks
    the MPI tool records in the state's metadata (for --resume-workers); at N = 2 rank 0 saves
    the state beside the model and the next epoch starts from it."""
    d, _, data, init = task
    ng = ["--optimizer=ngsgd", "--ngsgd-rank-in=2", "--ngsgd-rank-out=2", "--learn-rate=0.01"]
    p, _ = run_mpi(1, _args(data, init, d / "ng1.nnet", *ng))
    assert p.returncode == 0, p.stderr
    import sys
    q = run_mpiexec([mpiexec(), "-n", "1", sys.executable, str(FRMSHUFF), *MB, *ng,
                        data["feats"], data["targets"], str(init), str(d / "ngf.nnet")],
                       env=mpi_env(), timeout=120)
    assert q.returncode == 0, q.stderr
    assert (d / "ng1.nnet").read_bytes() == (d / "ngf.nnet").read_bytes()
    with np.load(d / "ng1.nnet.ngsgd.npz") as a, np.load(d / "ngf.nnet.ngsgd.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for k in a.files:
            if k == "meta":
                mpi, one = json.loads(str(a[k])), json.loads(str(b[k]))
                assert mpi.pop("num_ranks") == 1 and "num_ranks" not in one
                assert mpi == one
            else:
                np.testing.assert_array_equal(a[k], b[k])
    r, _ = run_mpi(2, _args(data, init, d / "ng2a.nnet", *ng))
    assert r.returncode == 0, r.stderr
    assert (d / "ng2a.nnet.ngsgd.npz").exists()
    assert np.abs(read_params(d / "ng2a.nnet") - read_params(init)).max() > 1e-3
    assert "NG-SGD starts a fresh Fisher estimate" in r.stderr
    s, _ = run_mpi(2, _args(data, d / "ng2a.nnet", d / "ng2b.nnet", *ng, "--epoch=2"))
    assert s.returncode == 0, s.stderr
    assert f"NG-SGD state read from {d / 'ng2a.nnet.ngsgd.npz'}" in s.stderr
    assert (d / "ng2b.nnet.ngsgd.npz").exists()


def test_the_epoch_log_counts_updates_limited_by_max_change(task):
    """Rank 0's NG-SGD line says how many of its layer updates --max-change-per-sample scaled
    down, of all (minibatches x affine layers), as nnetmix.train.runlog reads it back: every
    one under a tiny limit, none with the limit off."""
    from nnetmix.train.runlog import AGREED, LIMITED
    d, _, data, init = task
    ng = ["--optimizer=ngsgd", "--ngsgd-rank-in=2", "--ngsgd-rank-out=2", "--learn-rate=0.01"]
    from nnetmix.nnet import AffineTransform, Nnet
    layers = sum(isinstance(c, AffineTransform) for c in Nnet.read(str(init)).components)
    counts = {}
    for limit in ("1e-9", "0"):
        p, _ = run_mpi(2, _args(data, init, d / f"mc{limit}.nnet", *ng,
                                f"--max-change-per-sample={limit}"))
        assert p.returncode == 0, p.stderr
        m = LIMITED.search(p.stderr)
        assert m and m.group(2), p.stderr
        minibatches = int(AGREED.search(p.stderr).group(1))
        assert int(m.group(2)) == minibatches * layers > 0
        counts[limit] = int(m.group(1))
    assert counts == {"1e-9": minibatches * layers, "0": 0}


def test_ranks_read_their_shard_of_a_pipeline_in_process(task, tmp_path):
    """pipeline: features (make-feature-pipeline.py's chain, here deltas) train the model the
    same bash chain trains, each rank opening only its own utterances in process (no warning
    about reading the whole table, no --shard-scp)."""
    from nnetmix.feat.pipeline import FeaturePipeline

    d, _, data, _ = task
    init = tmp_path / "init10.nnet"
    mpi_net(np.random.default_rng(9), dim=10).write(str(init))
    scp = data["feats"][len("scp:"):]
    FeaturePipeline(utt_list=scp, delta_opts="--delta-order=1").write(str(tmp_path / "p.json"))
    chain = f"ark:add-deltas.py --print-args=false --delta-order=1 scp:{scp} ark:- |"
    runs = {}
    for name, feats in (("pipeline", f"pipeline:{tmp_path / 'p.json'}"), ("chain", chain)):
        out = tmp_path / f"{name}.nnet"
        p, _ = run_mpi(2, [*MB, f"--utt2num-frames={data['u2nf']}", feats, data["targets"],
                           str(init), str(out)])
        assert p.returncode == 0, p.stderr
        runs[name] = (out.read_bytes(), p.stderr)
    assert runs["pipeline"][0] == runs["chain"][0]
    assert "reads the whole feature table" not in runs["pipeline"][1]
    assert "reads the whole feature table" in runs["chain"][1]
