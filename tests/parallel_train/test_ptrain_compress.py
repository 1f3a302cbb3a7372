"""bin/nnet-train-mpi.py --mix-compression: none is today's mixing bit for bit, one rank is a
no-op, each compression trains to a CV loss near the uncompressed one, and the residuals are
checkpointed beside the model so an interrupted and resumed epoch ends bit for bit as the
uninterrupted one; a resume whose checkpoint lacks them is one error line."""
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import MPI_TOOL, ROOT, mpi_cv_loss, mpi_cv_task, kill_session, mpi_env, mpiexec, run_mpi

MB = ["--minibatch-size=16", "--randomizer-size=64", "--learn-rate=0.02", "--momentum=0.5"]
#: fp16 and bf16: how far the CV loss may be above the uncompressed run's (nats per frame; it
#: falls from 1.56 to 0.53-0.89 in the epoch); measured 0.0000 at 2 ranks
CV_TOLERANCE = 0.005
#: 1bit and topk: the share of the uncompressed run's CV-loss fall they must keep in this one
#: short epoch (7-10 mixes: error feedback hands back what they hold later); measured 0.90
#: (1bit) and 0.91 (topk 0.1) at 2 ranks, 0.94 (BMUF 1bit, 3 ranks), 0.77 (BMUF topk, 4 ranks)
KEEP_SHARE = 0.7


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("pcompress")
    _, tr, cv, init = mpi_cv_task(d)
    return d, tr, cv, init


def _args(tr, init, out, *extra):
    return [*MB, f"--utt2num-frames={tr['u2nf']}", *extra, tr["feats"], tr["targets"],
            str(init), str(out)]


def _train(task, n, name, *extra):
    d, tr, _, init = task
    out = d / f"{name}.nnet"
    p, _ = run_mpi(n, _args(tr, init, out, *extra))
    assert p.returncode == 0, p.stderr
    return out, p


@pytest.mark.parametrize("n, extra", [(2, "--mix-compression=none"), (1, "--mix-compression=1bit")])
def test_none_and_one_rank_are_todays_mixing(task, n, extra):
    """--mix-compression=none is the default, bit for bit; at one rank a compression has nothing
    to mix, writes no residuals and changes nothing."""
    a, _ = _train(task, n, f"plain{n}")
    b, p = _train(task, n, f"opt{n}", extra)
    assert a.read_bytes() == b.read_bytes()
    assert not os.path.exists(f"{b}.mix.npz")
    if n == 1:
        assert "nothing to mix, --mix-compression=1bit does nothing" in p.stderr


@pytest.mark.parametrize("n, how, compression", [
    (2, "allreduce", "fp16"), (2, "allreduce", "bf16"), (2, "allreduce", "1bit"),
    (2, "allreduce", "topk"), (3, "bmuf", "1bit"), (4, "bmuf", "topk")])
def test_compressed_training_cv_loss(task, n, how, compression):
    """One epoch with each compression: all ranks end with one model (the tool checks it), the
    residuals are written beside it, and the CV loss is near the uncompressed run's at the same
    ranks and mixing (CV_TOLERANCE, KEEP_SHARE)."""
    d, _, cv, init = task
    mode = ["--average-every=2"] + (["--bmuf=true"] if how == "bmuf" else [])
    ref = d / f"ref_{n}_{how}.nnet"
    if not ref.exists():
        _train(task, n, ref.stem, *mode)
    out, p = _train(task, n, f"{compression}_{n}_{how}", *mode,
                    f"--mix-compression={compression}", "--mix-compression-topk-fraction=0.1")
    with np.load(f"{out}.mix.npz") as z:
        assert z["residual"].shape[0] == n and np.abs(z["residual"]).max() > 0
        assert str(z["compression"]) == compression
    assert f"--mix-compression={compression}:" in p.stderr and "bytes sent" in p.stderr
    start, base, got = mpi_cv_loss(cv, init), mpi_cv_loss(cv, ref), mpi_cv_loss(cv, out)
    print(f"{n} ranks {how} {compression}: CV loss {start:.4f} -> {got:.4f} "
          f"(uncompressed {base:.4f})")
    assert base < start - 0.5
    if compression in ("fp16", "bf16"):
        assert abs(got - base) <= CV_TOLERANCE, (got, base)
    else:
        assert start - got >= KEEP_SHARE * (start - base), (got, base, start)


def _epoch(tr, model_in, out, state, *extra):
    return _args(tr, model_in, out, "--bmuf=true", "--average-every=3", "--mix-compression=1bit",
                 f"--bmuf-state={state}", "--epoch=2", *extra)


def test_residuals_resume_from_a_text_model(task, tmp_path):
    """A model written as text (--binary=false) holds its parameters at precision 7: the next
    epoch still takes up the residuals saved beside it (and the BMUF state)."""
    d, tr, _, init = task
    opts = ["--bmuf=true", "--average-every=3", "--mix-compression=1bit", "--binary=false",
            f"--bmuf-state={tmp_path}/b.npz"]
    p, _ = run_mpi(2, _args(tr, init, tmp_path / "m1.nnet", *opts))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "m1.nnet").read_bytes().startswith(b"<Nnet>")
    q, _ = run_mpi(2, _args(tr, tmp_path / "m1.nnet", tmp_path / "m2.nnet", "--epoch=2", *opts))
    assert q.returncode == 0, q.stderr
    assert "mixing state" in q.stderr and "resumed (block" in q.stderr


def test_interrupted_epoch_resumes_bit_exactly(task, tmp_path):
    """Epoch 1, then epoch 2 run straight through; elsewhere, the same epoch 2 killed while it
    trains and run again from epoch 1's checkpoint (model, BMUF state, residuals): the same
    model, BMUF state and residuals, byte for byte. Without epoch 1's residuals the resumed
    epoch is one error line and writes nothing."""
    d, tr, _, init = task
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    p, _ = run_mpi(2, _args(tr, init, a / "m1.nnet", "--bmuf=true", "--average-every=3",
                            "--mix-compression=1bit", f"--bmuf-state={a}/b.npz"))
    assert p.returncode == 0, p.stderr
    epoch1_bmuf = (a / "b.npz").read_bytes()
    shutil.copytree(a, b)
    p, _ = run_mpi(2, _epoch(tr, a / "m1.nnet", a / "m2.nnet", a / "b.npz"))
    assert p.returncode == 0 and "mixing state" in p.stderr and "resumed" in p.stderr, p.stderr

    # the interrupted run: killed once its ranks train, then run again
    log = b / "r%d.log"
    cmd = [mpiexec(), "-n", "2", "--oversubscribe", sys.executable, str(MPI_TOOL),
           *map(str, _epoch(tr, b / "m1.nnet", b / "m2.nnet", b / "b.npz", f"--rank-log={log}"))]
    k = subprocess.Popen(cmd, cwd=ROOT, env=mpi_env(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        t0 = time.monotonic()
        while not (os.path.exists(b / "r0.log")
                   and "TRAINING STARTED" in (b / "r0.log").read_text()):
            assert k.poll() is None and time.monotonic() - t0 < 120, "epoch 2 did not start"
            time.sleep(0.05)
    finally:
        kill_session(k.pid)  # mpiexec and its ranks (each in its own process group)
        k.wait()
    if not (b / "m2.nnet").exists():  # killed in time: nothing of epoch 2 is on disk
        assert not (b / "m2.nnet.mix.npz").exists()
        assert (b / "b.npz").read_bytes() == epoch1_bmuf
        q, _ = run_mpi(2, _epoch(tr, b / "m1.nnet", b / "m2.nnet", b / "b.npz"))
        assert q.returncode == 0, q.stderr
    # else the epoch ended before the kill (a loaded machine): its --bmuf-state, read and
    # written in place, is epoch 2's now, so running it again would start from that state
    # (the scheduler keeps one state per epoch's model); what it wrote must be the same
    for f in ("m2.nnet", "m2.nnet.mix.npz", "b.npz"):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f

    # a checkpoint without the residuals
    c = tmp_path / "c"
    shutil.copytree(b, c)
    (c / "m1.nnet.mix.npz").unlink()
    (c / "m2.nnet").unlink()
    (c / "m2.nnet.mix.npz").unlink()
    (c / "b.npz").write_bytes(epoch1_bmuf)        # epoch 1's checkpoint, less its residuals
    before = epoch1_bmuf
    r, _ = run_mpi(2, _epoch(tr, c / "m1.nnet", c / "m2.nnet", c / "b.npz"))
    assert r.returncode == 1
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("ERROR")]
    assert len(errors) >= 1 and f"{c}/m1.nnet.mix.npz: no mixing state" in errors[0], r.stderr
    assert "--mix-compression=1bit" in errors[0]
    assert not (c / "m2.nnet").exists() and not (c / "m2.nnet.mix.npz").exists()
    assert (c / "b.npz").read_bytes() == before
