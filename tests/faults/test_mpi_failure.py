"""Fault injection into MPI training as steps/nnet/train.sh runs it (the scheduler starting
``mpiexec -n N nnet-train-mpi.py`` per epoch): kill -9 of rank 0 or rank k mid-epoch, SIGSTOP of a
rank, a rank that raises. Each asserts the exit status, that the first ERROR line names the rank,
its host, its signal (or the hang) and its log, that nothing half-written remains, and that the
scheduler's resume gives the uninterrupted run's model, byte for byte."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT, kill_session, mpi_env, mpi_net, mpi_utts, mpiexec, write_data

from nnetmix.parallel import Watchdog, partition_utterances
from nnetmix.utils.rankstatus import read_record, status_path

#: generous bounds for a loaded 2-core machine: failures must end the job, not race a clock
JOB_S = 300
WAIT_S = 240


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    """Enough utterances that a training epoch lasts seconds (minibatches of 4, a mix after each),
    so a kill lands mid-epoch."""
    d = tmp_path_factory.mktemp("mpi_failure")
    rng = np.random.default_rng(11)
    utts = mpi_utts(rng, num_utts=900)
    init = d / "nnet.init"
    mpi_net(rng).write(str(init))
    return d, write_data(d, utts[:820], "tr"), write_data(d, utts[820:], "cv"), init


def _schedule(task, exp: Path, ranks: int, *extra) -> list:
    d, tr, cv, init = task
    return [sys.executable, str(ROOT / "bin" / "nnet-train-scheduler.py"), "--minibatch-size=4",
            "--randomizer-size=64", "--learn-rate=0.02", "--max-iters=2",
            f"--train-cmd=utils/run.py --num-tasks {ranks}",
            "--train-tool=nnet-train-mpi.py --average-every=1",
            f"--tr-tool-opts=--utt2num-frames={tr['u2nf']}",
            f"--cv-tool-opts=--utt2num-frames={cv['u2nf']}", *extra,
            str(init), tr["feats"], cv["feats"], tr["targets"], cv["targets"], str(exp)]


def _training_rank(exp: Path, epoch: int, rank: int, proc: subprocess.Popen,
                   started_s: float) -> dict:
    """Rank ``rank``'s record once it is training in ``epoch``: its watchdog's heartbeat has
    counted progress marks, or (``started_s`` > 0, for a kill) it has been running for that
    long: a kill waits only a moment, since a short epoch on a loaded machine can end before a
    1 s heartbeat counts its marks (a kill in the rank's set-up is a kill mid-epoch too)."""
    path = status_path(str(exp / "log" / f"iter{epoch:02d}.tr.rank{rank}.log"))
    t0, seen, rec = time.monotonic(), None, None
    while True:
        rec = read_record(path) or rec
        if rec is not None and rec.state == "running":
            seen = seen or time.monotonic()
            if rec.marks > 0 or 0 < started_s < time.monotonic() - seen:
                return {"pid": rec.pid, "host": rec.host, "log": rec.log}
        assert proc.poll() is None, f"the scheduler ended before epoch {epoch} trained ({rec})"
        assert time.monotonic() - t0 < WAIT_S, f"rank {rank} never trained in epoch {epoch}"
        time.sleep(0.05)


def _fault(task, exp: Path, ranks: int, epoch: int, rank: int, sig: int, *extra):
    """Run the schedule, send ``sig`` to ``rank`` mid-``epoch``; (exit code, stderr, record).
    A stop waits for the rank's progress marks: the watchdog watches training, from the first
    minibatch to the written model."""
    with open(exp.parent / f"{exp.name}.err", "w+") as err:
        p = subprocess.Popen(_schedule(task, exp, ranks, *extra), cwd=ROOT, env=mpi_env(),
                             stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        try:
            rec = _training_rank(exp, epoch, rank, p, 0.0 if sig == signal.SIGSTOP else 0.3)
            os.kill(rec["pid"], sig)
            rc = p.wait(timeout=JOB_S)
        finally:
            if p.poll() is None:  # past its time: mpiexec and its ranks (own process groups)
                kill_session(p.pid)
                p.wait()
        err.seek(0)
        return rc, err.read(), rec


def _first_error(stderr: str) -> str:
    return next(ln for ln in stderr.splitlines() if ln.startswith("ERROR"))


def _gone(pid: int) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def reference(task):
    """The uninterrupted 2-rank run's final model."""
    mpiexec()
    exp = task[0] / "ref"
    p = subprocess.run(_schedule(task, exp, 2), cwd=ROOT, env=mpi_env(), text=True,
                       capture_output=True, timeout=JOB_S)
    assert p.returncode == 0, p.stderr
    return (exp / "final.nnet").resolve()


@pytest.mark.slow
@pytest.mark.parametrize("rank", [0, 1])
def test_kill_rank_mid_epoch_named_then_resumed(task, reference, rank):
    exp = task[0] / f"kill{rank}"
    rc, err, rec = _fault(task, exp, 2, 2, rank, signal.SIGKILL)
    assert rc == 1, err
    log = exp / "log" / f"iter02.tr.rank{rank}.log"
    assert rec["log"] == str(log)
    assert _first_error(err).startswith("ERROR (nnet-train-scheduler.py[")
    assert _first_error(err).endswith(
        f") epoch 2 training: MPI rank {rank} on host {rec['host']} (pid {rec['pid']}) was "
        f"killed by signal 9 (SIGKILL); see {log} (job log {exp / 'log' / 'iter02.tr.log'}, "
        "exit code 137)"), err
    # nothing of epoch 2 was kept; epoch 1 stands
    assert (exp / ".done_iter01").exists() and not (exp / ".done_iter02").exists()
    assert not list((exp / "nnet").glob("nnet_iter02_*")) and not (exp / "final.nnet").exists()
    q = subprocess.run(_schedule(task, exp, 2), cwd=ROOT, env=mpi_env(), text=True,
                       capture_output=True, timeout=JOB_S)
    assert q.returncode == 0, q.stderr
    assert "resuming after epoch 1" in q.stderr
    got = (exp / "final.nnet").resolve()
    assert got.name == reference.name
    assert got.read_bytes() == reference.read_bytes()


@pytest.mark.slow
def test_kill_rank_of_four_oversubscribed(task):
    """4 ranks on 2 cores (utils/run.py adds --oversubscribe): rank 2 killed in epoch 1."""
    exp = task[0] / "kill4"
    rc, err, rec = _fault(task, exp, 4, 1, 2, signal.SIGKILL)
    assert rc == 1, err
    first = _first_error(err)
    assert f") epoch 1 training: MPI rank 2 on host {rec['host']} (pid {rec['pid']}) was killed " \
           f"by signal 9 (SIGKILL); see {exp / 'log' / 'iter01.tr.rank2.log'} " in first, err
    assert not (exp / ".done_iter01").exists() and not list((exp / "nnet").glob("nnet_iter01*"))


@pytest.mark.slow
def test_stopped_rank_ends_job_named(task):
    """SIGSTOP of rank 1: rank 0's watchdog (fixed at 20 s here) finds rank 1's heartbeat
    stopped, names it and aborts the job; the stopped process is ended with it."""
    exp = task[0] / "stop"
    rc, err, rec = _fault(task, exp, 2, 1, 1, signal.SIGSTOP, "--watchdog-timeout=20")
    try:
        assert rc == 1, err
        first = _first_error(err)
        assert (f") epoch 1 training: MPI rank 1 on host {rec['host']} (pid {rec['pid']}) hung: "
                "no heartbeat for ") in first, err
        assert "rank 0 waited" in first and "(watchdog timeout 20 s)" in first
        assert f"see {exp / 'log' / 'iter01.tr.rank1.log'} " in first
        assert _gone(rec["pid"]), "the stopped rank outlived its job"
        r0 = json.loads(Path(status_path(str(exp / "log" / "iter01.tr.rank0.log"))).read_text())
        assert r0["state"] == "failed" and r0["blame"]["rank"] == 1
    finally:
        try:
            os.kill(rec["pid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not (exp / ".done_iter01").exists()


def test_rank_raising_named_by_job_wrapper(task, tmp_path):
    """A bad target in rank 1's shard: utils/run.py --num-tasks 2 names rank 1 and its error
    first, then its own failure line."""
    mpiexec()
    init = task[3]
    utts = mpi_utts(np.random.default_rng(5), num_utts=16)
    bad = partition_utterances({k: f.shape[0] for k, f, _ in utts}, 2, 0, 777).parts[1][-1]
    broken = [(k, f, np.full_like(t, 9) if k == bad else t) for k, f, t in utts]
    data = write_data(tmp_path, broken, "bad")
    log = tmp_path / "log" / "bad.log"
    p = subprocess.run([sys.executable, str(ROOT / "utils" / "run.py"), "--num-tasks", "2",
                        str(log), "nnet-train-mpi.py", "--minibatch-size=4",
                        f"--utt2num-frames={data['u2nf']}", data["feats"], data["targets"],
                        str(init), str(tmp_path / "o.nnet")], env=mpi_env(), text=True,
                       capture_output=True, timeout=JOB_S)
    assert p.returncode == 1
    lines = p.stderr.splitlines()
    assert " failed: " in lines[0], p.stderr
    assert lines[0].startswith("run.py: MPI rank 1 on host ")
    assert f"utterance {bad}: target 9" in lines[0]
    assert f"; see {tmp_path / 'log' / 'bad.rank1.log'} (job log {log}, exit code 1)" in lines[0]
    assert lines[-1] == f"run.py: job failed, log is in {log}"
    assert not (tmp_path / "o.nnet").exists()


def test_watchdog_limit_adapts_to_the_step_time():
    """Adaptive (negative): the start-up allowance for the first minibatches, then 20x the
    slowest step with a floor; a fixed value stays fixed; 0 is off."""
    wd = Watchdog(None, -1)
    assert wd.limit() == Watchdog.STARTUP_S
    for _ in range(Watchdog.WARMUP_STEPS + 1):
        wd.kick(step=True)
    assert wd.limit() == Watchdog.FLOOR_S  # steps of microseconds: the floor
    time.sleep(Watchdog.FLOOR_S / Watchdog.FACTOR + 0.2)  # one step slower than floor / 20
    wd.kick(step=True)
    assert wd.limit() == pytest.approx(Watchdog.FACTOR * wd.slowest)
    assert wd.limit() > Watchdog.FLOOR_S
    assert Watchdog(None, 20).limit() == 20.0
    off = Watchdog(None, 0).start()
    assert off._thread is None


@pytest.mark.parametrize("script", ["steps/nnet/train.sh", "steps/nnet/pretrain_dbn.sh"])
def test_scripts_take_watchdog_timeout(script):
    """Kaldi script syntax (--watchdog-timeout 20): accepted, then the usage (no arguments)."""
    p = subprocess.run(["bash", str(ROOT / script), "--watchdog-timeout", "20"], cwd=ROOT,
                       env=mpi_env(), text=True, capture_output=True, timeout=60)
    assert p.returncode == 1
    assert "invalid option" not in p.stderr and "Usage:" in p.stderr
    assert "--watchdog-timeout <seconds>" in p.stderr
