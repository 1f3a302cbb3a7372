"""MPI_Init under a deadline (nnetmix.utils.mpi_init): a rank whose MPI_Init never returns
ends with one ERROR line instead of hanging, and a healthy start is untouched.

The hang is real: the rank is told (through PMIx's environment) that its launcher listens on a
socket of the test's own, which accepts the connection and never answers, so Open MPI's
MPI_Init waits forever (what a broken mpiexec does to its ranks)."""
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from helpers import MPI_TOOL, ROOT, mpi_env, mpiexec, run_mpiexec

from nnetmix.errors import UsageError
from nnetmix.utils.mpi_init import (DEFAULT_TIMEOUT_S, GRACE_S, TIMEOUT_ENV, init_timeout,
                                       launcher_rank_env)

MARK = "nnetmix-mpi-init-test"


@pytest.fixture
def silent_launcher():
    """The environment of a rank whose launcher (a PMIx server on the test's socket) accepts
    and never answers."""
    pytest.importorskip("mpi4py")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    uri = f"fake.0;tcp4://127.0.0.1:{srv.getsockname()[1]}"
    env = {k: v for k, v in mpi_env().items()
           if not k.startswith(("PMIX_", "OMPI_COMM_WORLD"))}
    env.update(PMIX_NAMESPACE="fake", PMIX_RANK="1",
               **{f"PMIX_SERVER_URI{v}": uri for v in ("2", "21", "3", "4", "41")})
    yield env
    srv.close()


def _leftovers() -> list[int]:
    """Live processes whose command line holds MARK (a rank or its watcher)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as fh:
                cmd = fh.read()
            with open(f"/proc/{p}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        if MARK.encode() in cmd and stat[stat.rfind(b")") + 2:][:1] != b"Z":
            out.append(int(p))
    return out


def _gone(timeout: float = 10.0) -> list[int]:
    end = time.monotonic() + timeout
    while _leftovers() and time.monotonic() < end:
        time.sleep(0.2)
    return _leftovers()


def test_init_timeout_from_environment():
    assert init_timeout({}) == DEFAULT_TIMEOUT_S
    assert init_timeout({TIMEOUT_ENV: " 12.5 "}) == 12.5
    assert init_timeout({TIMEOUT_ENV: "0"}) == 0.0
    for bad in ("-1", "abc", "nan", "inf"):
        with pytest.raises(UsageError, match=f"{TIMEOUT_ENV}={bad}: expected seconds >= 0"):
            init_timeout({TIMEOUT_ENV: bad})


def test_launcher_rank_env():
    assert launcher_rank_env({"OMPI_COMM_WORLD_RANK": "3", "PMIX_RANK": "9"}) == "3"
    assert launcher_rank_env({"PMIX_RANK": "2"}) == "2"
    assert launcher_rank_env({}) == "?"


def test_hung_mpi_init_ends_with_one_line(silent_launcher):
    env = {**silent_launcher, TIMEOUT_ENV: "3"}
    code = f"from nnetmix.utils.mpi_init import MPI; print('initialised')  # {MARK}"
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, text=True,
                       capture_output=True, timeout=60)
    took = time.monotonic() - t0
    assert p.returncode == -signal.SIGTERM, (p.returncode, p.stderr)
    assert "initialised" not in p.stdout
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR (")]
    assert len(errors) == 1, p.stderr
    assert "import_mpi():mpi_init.py) rank 1 (pid " in errors[0]
    assert f"MPI_Init did not complete in 3 s" in errors[0] and TIMEOUT_ENV in errors[0]
    assert 3.0 <= took < 3.0 + GRACE_S + 20.0
    assert _gone() == []  # the watcher left with the rank


def test_ctrl_c_reaches_the_rank_not_its_watcher():
    """Ctrl-C reaches the rank's whole process group, its watcher too (the watcher is forked
    while MPI_Init is still to come): the rank's handler reports it once, the watcher ignores
    it and leaves when the rank ends."""
    code = ("import os, signal, sys, time\n"
            "from nnetmix.utils import mpi_init\n"
            "def said(*_):\n"
            "    sys.stderr.write('interrupted\\n'); sys.stderr.flush()\n"
            "    signal.signal(signal.SIGINT, signal.SIG_DFL); signal.raise_signal(signal.SIGINT)\n"
            "signal.signal(signal.SIGINT, said)\n"
            "wfd = mpi_init._start_watcher(60.0)\n"
            "print('watching', flush=True)\n"
            f"time.sleep(60)  # {MARK}\n")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert p.stdout.readline() == "watching\n"
        assert len(_leftovers()) == 2  # the rank and its watcher
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == -signal.SIGINT, err
    assert err == "interrupted\n"
    assert _gone() == []


def test_the_training_tool_ends_on_a_hung_mpi_init(silent_launcher, tmp_path):
    """The real tool (bin/nnet-train-mpi.py imports MPI through import_mpi): one ERROR line,
    no output written."""
    env = {**silent_launcher, TIMEOUT_ENV: "2"}
    out = tmp_path / "out.nnet"
    p = subprocess.run([sys.executable, str(MPI_TOOL), f"--{MARK}-is-never-parsed",
                        "ark:/nonexistent", "ark:/nonexistent", "in.nnet", str(out)],
                       env=env, cwd=ROOT, text=True, capture_output=True, timeout=90)
    assert p.returncode == -signal.SIGTERM, (p.returncode, p.stderr)
    assert [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR (")] == [
        ln for ln in p.stderr.splitlines() if "MPI_Init did not complete in 2 s" in ln]
    assert "MPI_Init did not complete in 2 s" in p.stderr
    assert not out.exists()
    assert _gone() == []


@pytest.mark.parametrize("n", [2, 3])
def test_healthy_start_is_untouched(n):
    """Under mpiexec, with a deadline well above a start's time: every rank runs, the job ends
    0, and no watcher outlives its rank."""
    code = ("from nnetmix.utils.mpi_init import MPI, import_mpi; c = MPI.COMM_WORLD; "
            "assert import_mpi() is MPI; print('rank', c.Get_rank(), 'of', c.Get_size(), "
            f"c.allreduce(1), flush=True)  # {MARK}")
    env = {**mpi_env(), TIMEOUT_ENV: "120"}
    p = run_mpiexec([mpiexec(), "-n", str(n), "--oversubscribe", sys.executable, "-c", code],
                    env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    assert sorted(ln for ln in p.stdout.splitlines() if ln.startswith("rank ")) == \
        [f"rank {r} of {n} {n}" for r in range(n)]
    assert "MPI_Init did not complete" not in p.stderr
    assert _gone() == []
