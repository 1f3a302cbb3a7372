"""Launching: utils/run.py --num-tasks N runs a job under mpiexec with per-rank logs; the
scheduler drives the MPI tool per epoch (as steps/nnet/train.sh --num-workers N does) and a
killed run resumes after the last finished epoch, BMUF checkpoint included."""
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import ROOT, kill_session, mpi_env, mpi_net, mpi_utts, mpiexec, write_data


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("ptrain_launch")
    rng = np.random.default_rng(3)
    utts = mpi_utts(rng, num_utts=30)
    init = d / "nnet.init"
    mpi_net(rng).write(str(init))
    return d, write_data(d, utts[:22], "tr"), write_data(d, utts[22:], "cv"), init


def test_run_py_num_tasks_runs_mpi_with_rank_logs(task):
    mpiexec()
    d, tr, _, init = task
    log = d / "log" / "iter01.tr.log"
    p = subprocess.run([sys.executable, str(ROOT / "utils" / "run.py"), "--num-tasks", "2",
                        str(log), "nnet-train-mpi.py", "--minibatch-size=16",
                        f"--utt2num-frames={tr['u2nf']}", tr["feats"], tr["targets"], str(init),
                        str(d / "out.nnet")], env=mpi_env(), text=True, capture_output=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr + log.read_text()
    text = log.read_text()
    assert text.startswith("# mpiexec -n 2 nnet-train-mpi.py") and "# Ended (code 0)" in text
    assert text.count("AvgLoss:") == 1 and "MPI summary: 2 ranks" in text
    for r in (0, 1):
        rl = (d / "log" / f"iter01.tr.rank{r}.log").read_text()
        assert f"rank {r} of 2:" in rl and f"rank {r}: Done" in rl
    assert "AvgLoss:" not in (d / "log" / "iter01.tr.rank1.log").read_text()
    # a failing MPI job fails the wrapper, log named
    q = subprocess.run([sys.executable, str(ROOT / "utils" / "run.py"), "--num-tasks", "2",
                        str(d / "log" / "bad.log"), "nnet-train-mpi.py", tr["feats"],
                        tr["targets"], str(d / "missing.nnet"), str(d / "o.nnet")], env=mpi_env(),
                       text=True, capture_output=True, timeout=120)
    assert q.returncode == 1 and "log is in" in q.stderr


def _schedule(task, exp, max_iters):
    d, tr, cv, init = task
    return [sys.executable, str(ROOT / "bin" / "nnet-train-scheduler.py"), "--minibatch-size=16",
            "--randomizer-size=64", "--learn-rate=0.02", f"--max-iters={max_iters}",
            "--train-cmd=utils/run.py --num-tasks 2",
            "--train-tool=nnet-train-mpi.py --bmuf=true --average-every=4",
            f"--tr-tool-opts=--utt2num-frames={tr['u2nf']}",
            f"--cv-tool-opts=--utt2num-frames={cv['u2nf']}", "--bmuf-state=true",
            str(init), tr["feats"], cv["feats"], tr["targets"], cv["targets"], str(exp)]


def _kill_after_epoch_one(cmd, exp) -> None:
    """Run the scheduler ``cmd`` and kill it (its whole session) once epoch 1 is done."""
    p = subprocess.Popen(cmd, cwd=ROOT, env=mpi_env(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        t0 = time.monotonic()
        while not (exp / ".done_iter01").exists():
            assert p.poll() is None and time.monotonic() - t0 < 90, "epoch 1 did not finish"
            time.sleep(0.1)
    finally:
        kill_session(p.pid)  # somewhere in epoch 2: the scheduler, mpiexec and its ranks
        p.wait()


@pytest.mark.slow
def test_scheduler_mpi_epochs_killed_and_resumed(task):
    mpiexec()
    d = task[0]
    exp = d / "exp"
    cmd = _schedule(task, exp, 3)
    _kill_after_epoch_one(cmd, exp)
    first = sorted(x.name for x in (exp / "nnet").iterdir())
    done1 = [n for n in first if n.startswith("nnet_iter01_") and not n.endswith(".npz")]
    assert len(done1) == 1 and f"{done1[0]}.bmuf.npz" in first
    mtime = (exp / "nnet" / done1[0]).stat().st_mtime_ns
    q = subprocess.run(cmd, cwd=ROOT, env=mpi_env(), text=True, capture_output=True, timeout=180)
    assert q.returncode == 0, q.stderr
    assert "resuming after epoch 1" in q.stderr
    assert (exp / "nnet" / done1[0]).stat().st_mtime_ns == mtime
    assert (exp / "final.nnet").exists() and (exp / ".done_iter03").exists()
    for it in ("02", "03"):
        assert (exp / "log" / f"iter{it}.tr.rank1.log").exists()
        assert "resumed (block" in (exp / "log" / f"iter{it}.tr.rank0.log").read_text() or \
            "rejected" in q.stderr
    assert "--epoch=2" in (exp / "log" / "iter02.tr.log").read_text().splitlines()[0]


def test_scheduler_single_worker_ngsgd_epochs(task):
    """steps/nnet/train.sh --optimizer ngsgd --num-workers 1 runs each epoch as a job of
    nnet-train-frmshuff.py, which has no --epoch option (--pass-epoch=false)."""
    d, tr, cv, init = task
    exp = d / "exp_ngsgd_w1"
    cmd = [sys.executable, str(ROOT / "bin" / "nnet-train-scheduler.py"), "--minibatch-size=16",
           "--randomizer-size=64", "--learn-rate=0.02", "--max-iters=2",
           "--train-cmd=utils/run.py", "--train-tool=nnet-train-frmshuff.py",
           "--tr-tool-opts=--optimizer=ngsgd --ngsgd-rank-in=3 --ngsgd-rank-out=2",
           "--pass-epoch=false",
           str(init), tr["feats"], cv["feats"], tr["targets"], cv["targets"], str(exp)]
    q = subprocess.run(cmd, cwd=ROOT, env=mpi_env(), text=True, capture_output=True, timeout=180)
    assert q.returncode == 0, q.stderr
    assert (exp / "final.nnet").exists()
    head = (exp / "log" / "iter01.tr.log").read_text().splitlines()[0]
    assert "--optimizer=ngsgd" in head and "--epoch" not in head
    assert any(p.name.endswith(".ngsgd.npz") for p in (exp / "nnet").iterdir())


@pytest.mark.slow
def test_scheduler_run_restarted_with_more_workers(task):
    """A BMUF run at 2 workers killed after its first epoch, restarted at 3 (steps/nnet/
    train.sh --num-workers 3): refused, naming the epoch's BMUF state, unless the tool is given
    --resume-workers=any (train.sh --resume-workers any), and then the epoch says what changed."""
    mpiexec()
    exp = task[0] / "exp_elastic"
    _kill_after_epoch_one(_schedule(task, exp, 2), exp)

    def at_three(*tool_opts):
        cmd = [a.replace("--num-tasks 2", "--num-tasks 3") for a in _schedule(task, exp, 2)]
        cmd = [a + "".join(f" {o}" for o in tool_opts) if a.startswith("--train-tool=") else a
               for a in cmd]
        return subprocess.run(cmd, cwd=ROOT, env=mpi_env(), text=True, capture_output=True,
                              timeout=240)

    q = at_three()
    assert q.returncode != 0
    assert "BMUF state written by 2 ranks, this run has 3 (pass --resume-workers=any" in q.stderr
    assert not (exp / ".done_iter02").exists()
    r = at_three("--resume-workers=any")
    assert r.returncode == 0, r.stderr
    assert "resuming after epoch 1" in r.stderr and (exp / ".done_iter02").exists()
    rank2 = (exp / "log" / "iter02.tr.rank2.log").read_text()
    assert "elastic resume: BMUF state" in rank2 and "block momentum 0.5 -> 0.666667" in rank2
