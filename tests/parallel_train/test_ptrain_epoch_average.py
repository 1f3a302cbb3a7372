"""bin/nnet-train-mpi.py --epoch-average=false (seed 000's way): over two epochs at 2, 3 and 4
ranks the model written is rank 0's own and <model-out>.ranks.npz every rank's, each equal to
the float64 rule of ring or butterfly mixing with no end-of-epoch average, the second epoch
going on from each rank's own model; a file of another model is left aside with a warning, one
of another number of ranks is refused naming it (or, with --resume-workers=any,
left aside); BMUF and the other one-model options refuse the
option with one error line and write nothing; the default writes no .ranks.npz; the scheduler
keeps each epoch's .ranks.npz with its model."""
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT, mpi_cv_task, mpi_env, rank_gradients, read_params, run_mpi

from nnetmix.parallel.rank_models import read_rank_models, write_rank_models

MB = ["--minibatch-size=16", "--randomizer-size=64"]
LR = 0.01
#: the tool's float32 against the float64 rule over two epochs of 10-20 minibatches
RTOL, ATOL = 1e-4, 2e-5


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("pepochavg")
    return (d, *mpi_cv_task(d))


def _epoch(task, n, model_in, out, epoch, *extra):
    d, _, tr, _, _ = task
    p, _ = run_mpi(n, [*MB, f"--utt2num-frames={tr['u2nf']}", "--randomize=false",
                       f"--learn-rate={LR}", "--scale-lr-by-workers=false", f"--epoch={epoch}",
                       *extra, tr["feats"], tr["targets"], str(model_in), str(out)])
    return p


def _rule(utts, starts, n, epoch, every, mixing):
    """The ranks' float64 models after one epoch of plain SGD from ``starts`` (one per rank),
    mixed every ``every`` minibatches, with no average at the end."""
    grad, steps = rank_gradients(utts, n, 16, epoch=epoch)
    p = [s.astype(np.float64).copy() for s in starts]
    log2 = n.bit_length() - 1
    for t in range(1, steps + 1):
        p = [x - LR * grad(r, t - 1, x) for r, x in enumerate(p)]
        if t % every == 0:
            m = t // every - 1
            p = [(p[r] + p[(r - 1) % n if mixing == "ring" else r ^ (1 << (m % log2))]) / 2
                 for r in range(n)]
    return p


@pytest.mark.parametrize("n, mixing", [(2, "ring"), (3, "ring"), (4, "butterfly")])
def test_each_rank_goes_on_from_its_own_model(task, n, mixing):
    d, utts, _, _, init = task
    every = 3
    opts = [f"--mixing={mixing}", f"--average-every={every}", "--epoch-average=false"]
    one, two = d / f"own{n}{mixing}.1.nnet", d / f"own{n}{mixing}.2.nnet"
    p = _epoch(task, n, init, one, 1, *opts)
    assert p.returncode == 0, p.stderr
    assert "no rank models" in p.stderr
    p = _epoch(task, n, one, two, 2, *opts)
    assert p.returncode == 0, p.stderr
    assert "starts from its own model of the last epoch" in p.stderr
    ref1 = _rule(utts, [read_params(init)] * n, n, 1, every, mixing)
    ref2 = _rule(utts, ref1, n, 2, every, mixing)
    for out, ref in ((one, ref1), (two, ref2)):
        rows = read_rank_models(str(out) + ".ranks.npz")["params"]
        assert rows.shape == (n, ref[0].shape[0])
        np.testing.assert_allclose(read_params(out), ref[0], rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(rows, np.stack(ref), rtol=RTOL, atol=ATOL)
        assert np.array_equal(rows[0], read_params(out))  # rank 0's own model is the one saved
    spread = np.abs(ref2[1] - ref2[0]).max()
    assert spread > 50 * ATOL  # the ranks really differ, so the rows test something
    # the second epoch with the ranks restarted from rank 0's model is another model
    (d / "alone.nnet").write_bytes(one.read_bytes())
    p = _epoch(task, n, d / "alone.nnet", d / "alone.2.nnet", 2, *opts)
    assert p.returncode == 0, p.stderr
    assert np.abs(read_params(d / "alone.2.nnet") - ref2[0]).max() > 50 * ATOL


def test_rank_models_of_a_text_model(task):
    """A model written as text (--binary=false) holds rank 0's parameters at precision 7: the
    next epoch still recognises its rank models."""
    d, _, _, _, init = task
    opts = ["--mixing=ring", "--average-every=3", "--epoch-average=false", "--binary=false"]
    one = d / "text.1.nnet"
    assert _epoch(task, 2, init, one, 1, *opts).returncode == 0
    assert one.read_bytes().startswith(b"<Nnet>")
    p = _epoch(task, 2, one, d / "text.2.nnet", 2, *opts)
    assert p.returncode == 0, p.stderr
    assert "starts from its own model of the last epoch" in p.stderr
    assert "saved with another model" not in p.stderr


def test_rank_models_of_another_model_or_size(task):
    d, utts, _, _, init = task
    opts = ["--mixing=ring", "--average-every=3", "--epoch-average=false"]
    one = d / "size.1.nnet"
    assert _epoch(task, 2, init, one, 1, *opts).returncode == 0
    state = read_rank_models(str(one) + ".ranks.npz")
    # another model: left aside with a warning, every rank starts from <model-in>
    other = d / "other.nnet"
    other.write_bytes(init.read_bytes())
    write_rank_models(str(other) + ".ranks.npz", state)
    p = _epoch(task, 2, other, d / "other.2.nnet", 2, *opts)
    assert p.returncode == 0, p.stderr
    assert "saved with another model than <model-in>" in p.stderr
    ref = _rule(utts, [read_params(init)] * 2, 2, 2, 3, "ring")
    np.testing.assert_allclose(read_params(d / "other.2.nnet"), ref[0], rtol=RTOL, atol=ATOL)
    # another number of ranks: refused, naming the file, nothing written
    out = d / "size.2.nnet"
    p = _epoch(task, 3, one, out, 2, *opts)
    assert p.returncode != 0
    errors = [ln.strip() for ln in p.stderr.splitlines() if ln.strip().startswith("ERROR")]
    assert errors, p.stderr  # each rank finds it: one line each, the same words
    assert (f"{one}.ranks.npz: rank models written by 2 ranks, this run has 3 (pass "
            "--resume-workers=any to resume it at 3 ranks, or run at 2)") in errors[0]
    assert "Traceback" not in p.stderr and not list(d.glob("size.2.nnet*"))


@pytest.mark.parametrize("extra, what", [
    (["--bmuf=true"], "--bmuf=true"),
    (["--mix-compression=fp16"], "--mix-compression=fp16"),
    (["--overlap-mixing=true"], "--overlap-mixing=true")])
def test_one_model_options_refuse_it(task, extra, what):
    d, _, _, _, init = task
    out = d / "bad.nnet"
    p = _epoch(task, 2, init, out, 1, "--epoch-average=false", *extra)
    assert p.returncode != 0
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR")]
    assert len(errors) == 1, p.stderr
    assert f"--epoch-average=false with {what}:" in errors[0]
    assert not list(d.glob("bad.nnet*"))


def test_default_averages_and_writes_no_rank_models(task):
    d, _, _, _, init = task
    out = d / "avg.nnet"
    p = _epoch(task, 2, init, out, 1, "--mixing=ring", "--average-every=3")
    assert p.returncode == 0, p.stderr
    assert out.exists() and not (d / "avg.nnet.ranks.npz").exists()


def test_another_size_left_aside_with_resume_workers_any(task):
    """--resume-workers=any: rank models of 2 ranks at 3 ranks are left aside, logged, and every
    rank starts from <model-in> (rank 0's model)."""
    d, utts, _, _, init = task
    opts = ["--mixing=ring", "--average-every=3", "--epoch-average=false"]
    one = d / "any.1.nnet"
    assert _epoch(task, 2, init, one, 1, *opts).returncode == 0
    out = d / "any.2.nnet"
    p = _epoch(task, 3, one, out, 2, *opts, "--resume-workers=any")
    assert p.returncode == 0, p.stderr
    assert "of 2 ranks cannot be given to 3: every rank starts from <model-in>" in p.stderr
    ref = _rule(utts, [read_params(one)] * 3, 3, 2, 3, "ring")
    np.testing.assert_allclose(read_params(out), ref[0], rtol=RTOL, atol=ATOL)


def test_scheduler_carries_each_epochs_rank_models(task):
    """nnet-train-scheduler.py running the MPI tool per epoch with --epoch-average=false (as
    steps/nnet/train.sh --epoch-average false does): every epoch's model has its .ranks.npz
    beside it, rejected or accepted, and the ranks of epoch 2 start from their own models."""
    d, _, tr, cv, init = task
    exp = d / "sched"
    cmd = [sys.executable, str(ROOT / "bin" / "nnet-train-scheduler.py"), "--minibatch-size=16",
           "--randomizer-size=64", "--learn-rate=0.02", "--max-iters=2",
           "--train-cmd=utils/run.py --num-tasks 2",
           "--train-tool=nnet-train-mpi.py --mixing=ring --average-every=3 --epoch-average=false",
           f"--tr-tool-opts=--utt2num-frames={tr['u2nf']}",
           f"--cv-tool-opts=--utt2num-frames={cv['u2nf']}",
           str(init), tr["feats"], cv["feats"], tr["targets"], cv["targets"], str(exp)]
    p = subprocess.run(cmd, cwd=ROOT, env=mpi_env(), text=True, capture_output=True, timeout=240)
    assert p.returncode == 0, p.stderr
    models = [m for m in (exp / "nnet").iterdir()
              if not m.name.endswith((".npz", "_final_"))]  # _final_: the copy to decode
    assert len(models) == 2
    for m in models:
        rows = read_rank_models(f"{m}.ranks.npz")["params"]
        assert rows.shape[0] == 2 and np.array_equal(rows[0], read_params(m))
    assert "starts from its own model" in (exp / "log" / "iter02.tr.rank1.log").read_text()


def test_move_model_carries_rank_models(tmp_path):
    """The scheduler's rename of a model takes its .ranks.npz along, and a stale one of the
    destination with no counterpart goes."""
    from nnetmix.driver.scheduler import _Run
    (tmp_path / "a").write_text("model a")
    (tmp_path / "a.ranks.npz").write_text("ranks of a")
    _Run.move_model(tmp_path / "a", tmp_path / "b")
    assert (tmp_path / "b.ranks.npz").read_text() == "ranks of a"
    assert not (tmp_path / "a.ranks.npz").exists()
    (tmp_path / "c").write_text("model c")
    _Run.move_model(tmp_path / "c", tmp_path / "b")
    assert (tmp_path / "b").read_text() == "model c" and not (tmp_path / "b.ranks.npz").exists()
