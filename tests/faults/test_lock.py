"""Faults around one experiment directory (issue 15, items 1 and 9): two trainings into one
directory, a stale lock, kill -9 / SIGTERM of the job wrapper, temporary files.

The trainings are the scheduler with MPI epochs (what steps/nnet/train.sh --num-workers 2 runs)
on tiny class-run data; every run gets its own empty TMPDIR, which must stay empty."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT, class_run_utts, mpiexec, script_env, write_data

from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax
from nnetmix.utils.guard import descendants
from nnetmix.utils.lock import LOCK_NAME, TOKEN_ENV, DirLock, DirLockedError, process_start


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("lock")
    rng = np.random.default_rng(5)
    utts = class_run_utts(rng, 40, 5, 4, 15, 45, 0.8)
    init = d / "nnet.init"
    Nnet([AffineTransform(5, 6, rng.standard_normal((6, 5)) * 0.3, rng.uniform(-1, 1, 6)),
          Sigmoid(6, 6), AffineTransform(6, 4, rng.standard_normal((4, 6)) * 0.3, np.zeros(4)),
          Softmax(4, 4)]).write(str(init))
    return d, write_data(d, utts[:30], "tr"), write_data(d, utts[30:], "cv"), init


def _env(tmpdir: Path) -> dict:
    tmpdir.mkdir(exist_ok=True)
    e = script_env()
    e.update(TMPDIR=str(tmpdir), PYTHONPATH=os.pathsep.join([str(ROOT), e.get("PYTHONPATH", "")]),
             OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    e.pop(TOKEN_ENV, None)
    e.pop("NNETMIX_TASK_LOG", None)
    return e


def _scheduler(task, exp: Path, lr: float = 0.02, iters: int = 2) -> list:
    _, tr, cv, init = task
    return [sys.executable, str(ROOT / "bin" / "nnet-train-scheduler.py"), "--minibatch-size=16",
            "--randomizer-size=64", f"--learn-rate={lr}", f"--max-iters={iters}",
            "--train-cmd=utils/run.py --num-tasks 2", "--train-tool=nnet-train-mpi.py",
            f"--tr-tool-opts=--utt2num-frames={tr['u2nf']}",
            f"--cv-tool-opts=--utt2num-frames={cv['u2nf']}",
            str(init), tr["feats"], cv["feats"], tr["targets"], cv["targets"], str(exp)]


def _wrapped(task, exp: Path, **kw) -> list:
    """The scheduler under utils/run.py, as steps/nnet/train.sh runs it."""
    return [sys.executable, str(ROOT / "utils" / "run.py"),
            str(exp / "log" / "train_scheduler.log")] + _scheduler(task, exp, **kw)[1:]


def _final_bytes(exp: Path) -> bytes:
    return (exp / "final.nnet").resolve().read_bytes()


def _errors(text: str) -> list:
    return [ln for ln in text.splitlines() if ln.startswith("ERROR")]


def _wait_for(cond, proc, what: str, limit: float = 120) -> None:
    t0 = time.monotonic()
    while not cond():
        assert proc.poll() is None, f"the job ended before {what}"
        assert time.monotonic() - t0 < limit, f"no {what} within {limit} s"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def reference(task):
    """final.nnet of an uninterrupted run, alone in its directory."""
    mpiexec()
    d = task[0]
    exp = d / "ref"
    p = subprocess.run(_wrapped(task, exp), cwd=ROOT, env=_env(d / "tmp_ref"), text=True,
                       capture_output=True, timeout=600)
    assert p.returncode == 0, p.stderr + (exp / "log" / "train_scheduler.log").read_text()
    assert not (exp / LOCK_NAME).exists()
    assert os.listdir(d / "tmp_ref") == [], "temporary files left by a successful run"
    return _final_bytes(exp)


@pytest.mark.slow
def test_second_training_into_one_dir_stops_at_once(task, reference):
    d = task[0]
    exp = d / "exp_two"
    tmp = d / "tmp_two"
    a = subprocess.Popen(_wrapped(task, exp), cwd=ROOT, env=_env(tmp), text=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: (exp / "log" / "iter01.tr.log").exists(), a, "first epoch")
        holder = json.loads((exp / LOCK_NAME).read_text())
        assert holder["pid"] in descendants(a.pid) and holder["host"] == socket.gethostname()
        # the second one straight (not through utils/run.py, which would write its log into
        # exp/log first): the scheduler's own lock stops it
        b = subprocess.run(_scheduler(task, exp, lr=0.005), cwd=ROOT, env=_env(d / "tmp_b"),
                           text=True, capture_output=True, timeout=120)
        running_after_b = a.poll() is None
        a.communicate(timeout=600)
        a_err = (exp / "log" / "train_scheduler.log").read_text()
    finally:
        if a.poll() is None:
            a.kill()
    assert b.returncode == 1 and len(_errors(b.stderr)) == 1, b.stderr
    line = _errors(b.stderr)[0]
    assert f"{exp} is in use by another job: host {socket.gethostname()}, pid {holder['pid']}, " \
           f"started {holder['start']}, command '" in line and "--learn-rate=0.02" in line
    assert "Traceback" not in b.stderr and "lrate0.005" not in a_err
    assert running_after_b, "the second job did not stop before the first ended"
    assert a.returncode == 0, a_err
    assert _final_bytes(exp) == reference
    assert not (exp / LOCK_NAME).exists()
    assert os.listdir(tmp) == [], "temporary files left"
    assert not [n for n in os.listdir(d / "tmp_b") if n.startswith("nnet-train-mpi")]


def _dead_pid() -> tuple[int, str]:
    p = subprocess.Popen(["sleep", "30"])
    start = process_start(p.pid)
    p.kill()
    p.wait()
    return p.pid, start


def _plant(d: Path, host: str, pid: int, start: str, token: str = "gone") -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / LOCK_NAME).write_text(json.dumps({
        "host": host, "pid": pid, "proc_start": start, "start": "2026-01-01 00:00:00",
        "command": "steps/nnet/train.sh old", "token": token}) + "\n")


def test_stale_lock_taken_over_other_host_refused(tmp_path, caplog, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    pid, start = _dead_pid()
    _plant(tmp_path / "a", socket.gethostname(), pid, start)
    with caplog.at_level("WARNING"):
        with DirLock(tmp_path / "a", "me") as lock:
            assert lock.owner and json.loads((tmp_path / "a" / LOCK_NAME).read_text())["pid"] \
                == os.getpid()
            assert os.environ[TOKEN_ENV] == lock.token
            with DirLock(tmp_path / "a" / "nnet", "nested") as inner:  # a lock above: re-entrant
                assert not inner.owner and not (tmp_path / "a" / "nnet" / LOCK_NAME).exists()
    assert "taking over the lock of a job that is gone (host" in caplog.text
    assert f"pid {pid}, started 2026-01-01 00:00:00, command 'steps/nnet/train.sh old'" \
        in caplog.text
    assert not (tmp_path / "a" / LOCK_NAME).exists() and TOKEN_ENV not in os.environ
    # the pid now names another process (its start time differs): stale too
    _plant(tmp_path / "b", socket.gethostname(), os.getpid(), "1")
    DirLock(tmp_path / "b").acquire().release()
    # another host: never taken over
    _plant(tmp_path / "c", "elsewhere", pid, start)
    with pytest.raises(DirLockedError) as e:
        DirLock(tmp_path / "c").acquire()
    assert str(e.value) == (
        f"{tmp_path / 'c'} is in use by another job: host elsewhere, pid {pid}, started "
        "2026-01-01 00:00:00, command 'steps/nnet/train.sh old' (on another host, so this one "
        f"cannot tell whether it still runs; if it does not, remove {tmp_path / 'c' / LOCK_NAME})")
    # a live holder below a directory locked by it: the lock above stops a newcomer too
    _plant(tmp_path / "d", socket.gethostname(), os.getpid(), process_start(os.getpid()))
    with pytest.raises(DirLockedError, match=f"{tmp_path / 'd'} is in use by another job"):
        DirLock(tmp_path / "d" / "nnet").acquire()


def test_step_lock_bash_entry_point(tmp_path):
    """utils/lock_dir.sh as the steps use it: a second script stops at once naming the first,
    the lock goes when the script ends, and a killed script's lock is taken over."""
    script = tmp_path / "step.sh"
    script.write_text("#!/usr/bin/env bash\nset -euo pipefail\n. utils/lock_dir.sh $1\n"
                      "echo locked\nsleep $2\n")
    script.chmod(0o755)
    env = _env(tmp_path / "tmp")
    exp = tmp_path / "exp"
    first = subprocess.Popen([str(script), str(exp), "60"], cwd=ROOT, env=env, text=True,
                             stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert first.stdout.readline() == "locked\n"
        second = subprocess.run([str(script), str(exp), "0"], cwd=ROOT, env=env, text=True,
                                capture_output=True, timeout=120)
        assert second.returncode == 1 and second.stdout == ""
        assert len(second.stderr.splitlines()) == 1 and second.stderr.startswith(
            "ERROR (lock-dir.py[") and f"{exp} is in use by another job: host " \
            f"{socket.gethostname()}, pid {first.pid}, started " in second.stderr
        assert f"command '{script} {exp} 60' (wait for it to end, or stop it)" in second.stderr
        os.killpg(first.pid, signal.SIGKILL)  # the script and its sleep: no EXIT trap runs
        first.wait()
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert (exp / LOCK_NAME).exists()
    third = subprocess.run([str(script), str(exp), "0"], cwd=ROOT, env=env, text=True,
                           capture_output=True, timeout=120)
    assert third.returncode == 0 and third.stdout == "locked\n", third.stderr
    assert third.stderr.startswith("WARNING (lock-dir.py[") and \
        f"{exp}: taking over the lock of a job that is gone (host" in third.stderr
    assert not (exp / LOCK_NAME).exists()  # the EXIT trap gave it back


def _end_of(w: subprocess.Popen, job: list, limit: float = 60) -> str:
    """The wrapper's stderr once it has ended, after waiting up to ``limit`` s for the job's
    processes to go."""
    _, err = w.communicate(timeout=120)
    t0 = time.monotonic()
    while _alive(job) and time.monotonic() - t0 < limit:
        time.sleep(0.2)
    return err


def _alive(pids) -> list:
    return [p for p in pids if process_start(p)]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_the_wrapper_ends_the_whole_job(task, reference, sig):
    """kill -9 (or SIGTERM) of utils/run.py running the scheduler: scheduler, mpiexec and both
    ranks end; the run resumes, taking the lock over, and ends with the uninterrupted bytes."""
    d = task[0]
    exp = d / f"exp_kill{int(sig)}"
    tmp = d / f"tmp_kill{int(sig)}"
    w = subprocess.Popen(_wrapped(task, exp), cwd=ROOT, env=_env(tmp), text=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: (exp / ".done_iter01").exists() and
                  (exp / "log" / "iter02.tr.rank1.log").exists(), w, "epoch 2's ranks")
        job = descendants(w.pid)
        names = " ".join(Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace")
                         for p in _alive(job))
        assert "nnet-train-scheduler.py" in names and "mpiexec" in names, names
        assert names.count("nnet-train-mpi.py") >= 3  # mpiexec's argument and two ranks
        os.kill(w.pid, sig)
        err = _end_of(w, job)
    finally:
        if w.poll() is None:
            w.kill()
    assert _alive(job) == [], f"processes of the job still running after 60 s: {_alive(job)}"
    if sig == signal.SIGTERM:
        assert w.returncode == 130 and err.splitlines()[-1].startswith(
            "run.py: interrupted, jobs stopped (logs in "), err
        assert "# Ended (code 143; signal 15)" in (exp / "log" / "train_scheduler.log").read_text()
    else:
        assert w.returncode == -signal.SIGKILL
        assert "the job wrapper is gone" in (exp / "log" / "train_scheduler.log").read_text()
    assert (exp / LOCK_NAME).exists()  # the scheduler was killed holding it
    q = subprocess.run(_wrapped(task, exp), cwd=ROOT, env=_env(tmp), text=True,
                       capture_output=True, timeout=600)
    text = (exp / "log" / "train_scheduler.log").read_text()
    assert q.returncode == 0, q.stderr + text
    assert "taking over the lock of a job that is gone" in text and "resuming after epoch" in text
    assert _final_bytes(exp) == reference and not (exp / LOCK_NAME).exists()
    assert os.listdir(tmp) == [], "temporary files left"


@pytest.mark.slow
@pytest.mark.parametrize("epoch", [1, 2])
def test_killing_the_scheduler_ends_its_mpi_job(task, reference, epoch):
    """kill -9 of the scheduler itself while epoch 1's or epoch 2's ranks run: the wrapper
    reports the failed job, mpiexec and the ranks it left end too (the guard ends what its
    command leaves behind), and a rerun takes the lock over and ends with the uninterrupted
    bytes (resuming after epoch 1 when that one was done)."""
    d = task[0]
    exp, tmp = d / f"exp_killsched{epoch}", d / f"tmp_killsched{epoch}"
    w = subprocess.Popen(_wrapped(task, exp), cwd=ROOT, env=_env(tmp), text=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: (epoch == 1 or (exp / ".done_iter01").exists()) and
                  (exp / "log" / f"iter{epoch:02d}.tr.rank1.log").exists(), w,
                  f"epoch {epoch}'s ranks")
        job = descendants(w.pid)
        cmds = {p: Path(f"/proc/{p}/cmdline").read_bytes() for p in _alive(job)}
        sched = [p for p, c in cmds.items()   # the scheduler, not the guard that runs it
                 if b"nnet-train-scheduler.py" in c and b"guard.py" not in c]
        assert len(sched) == 1, sched
        os.kill(sched[0], signal.SIGKILL)
        err = _end_of(w, job)
    finally:
        if w.poll() is None:
            w.kill()
    assert _alive(job) == [], f"processes of the job still running after 60 s: {_alive(job)}"
    assert w.returncode == 1 and "job failed" in err, err
    assert not (exp / "final.nnet").exists()
    q = subprocess.run(_wrapped(task, exp), cwd=ROOT, env=_env(tmp), text=True,
                       capture_output=True, timeout=600)
    text = (exp / "log" / "train_scheduler.log").read_text()
    assert q.returncode == 0, q.stderr + text
    assert f"resuming after epoch {epoch - 1}:" in text   # 0: only the initial CV was done
    assert _final_bytes(exp) == reference and not (exp / LOCK_NAME).exists()
