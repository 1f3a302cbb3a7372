"""A failing rank ends the whole MPI job, non-zero, in bounded time, naming the rank."""
import signal
import subprocess
import sys
import time

import pytest

from nnetmix.errors import NnetmixError
from nnetmix.parallel import Watchdog, rank_error_line, run_ranks
from parallel_testutil import HERE, ROOT, run_mpi, under_mpiexec, world

DRIVER = str(HERE / "parallel_fail_driver.py")
BOUND_S = 60


@pytest.mark.parametrize("scenario,expect", [
    ("raise", "rank 1: data/train/feats.scp: no such file"),
    ("hook", "rank 1: RuntimeError: kaboom in a helper"),
    ("kill", ""),
    ("hang", "no mix completed for"),
    ("mismatch", "check_same: options: rank 1 differs from rank 0"),
])
def test_rank_failure_ends_job(scenario, expect):
    try:
        proc, secs = run_mpi(3, [DRIVER, scenario], timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"scenario {scenario}: the job was still running after {BOUND_S} s")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert secs < BOUND_S
    assert "finished" not in proc.stdout, out
    if expect:
        assert expect in out and "ERROR (" in out, out


def test_run_ranks_passes_results_through():
    assert run_ranks(world(), lambda a, b=0: a + b, 2, b=3) == 5
    with pytest.raises(SystemExit):
        run_ranks(world(), sys.exit, 0)


def test_error_line_format():
    try:
        raise NnetmixError("exp/x/final.nnet: no such file")
    except NnetmixError as e:
        line = rank_error_line(2, e, prog="nnet-train-mpi.py")
    assert line.startswith("ERROR (nnet-train-mpi.py[")
    assert "test_error_line_format():test_parallel_failure.py:" in line
    assert line.endswith(") rank 2: exp/x/final.nnet: no such file")
    try:
        {}["k"]
    except KeyError as e:
        line = rank_error_line(0, e, prog="p")
    assert "rank 0: KeyError: 'k'" in line and "Traceback" in line


def test_size1_raise_exits_nonzero():
    """Without mpiexec (a singleton rank) run_ranks still ends the process non-zero."""
    if under_mpiexec():
        pytest.skip("the child would join this job's MPI environment")
    code = ("from mpi4py import MPI\nfrom nnetmix.parallel import run_ranks\n"
            "def f():\n    raise ValueError('bad value')\n"
            "run_ranks(MPI.COMM_WORLD, f)\nprint('not reached')\n")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, text=True, capture_output=True,
                          timeout=BOUND_S)
    assert proc.returncode != 0 and "not reached" not in proc.stdout
    assert "rank 0: ValueError: bad value" in proc.stderr
    assert time.monotonic() - t0 < BOUND_S


def test_watchdog_kicked_stays_quiet():
    with Watchdog(world(), 0.5) as wd:
        for _ in range(10):
            time.sleep(0.1)
            wd.kick()
    assert wd._thread is None


def test_watchdog_forgives_a_suspended_process():
    """A process stopped as a whole (Ctrl-Z, Slurm's suspend) and continued goes on: its
    watchdog (4 s) does not count the 8 s in which nothing of it ran."""
    if under_mpiexec():
        pytest.skip("the child would join this job's MPI environment")
    code = ("import sys\nfrom mpi4py import MPI\nfrom nnetmix.parallel import Watchdog\n"
            "with Watchdog(MPI.COMM_WORLD, 4.0) as wd:\n"
            "    wd.kick()\n    print('watching', flush=True)\n"
            "    sys.stdin.readline()\n    wd.kick()\n"
            "print('finished', flush=True)\n")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, text=True, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout.readline() == "watching\n"
        p.send_signal(signal.SIGSTOP)
        time.sleep(8)
        p.send_signal(signal.SIGCONT)
        time.sleep(1)
        out, err = p.communicate("go\n", timeout=BOUND_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0 and out == "finished\n", err
