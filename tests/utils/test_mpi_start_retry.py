"""utils/run.py --num-tasks N and the scheduler's MPI epochs start a job again, once, when mpiexec
failed to start it (Open MPI's "The PMIx server's listener thread failed to start") and no rank
ran; a job whose ranks ran fails at once, as before.

The real failure is rare (two in the suite's full runs), so these tests put a fake mpiexec in
front ($NNETMIX_MPIEXEC): a bash script that prints Open MPI's banner and exits 213 the first
FAKE_FAILS times (counted by marker files), then runs the command once per rank, as mpiexec does.
The real mpiexec path stays covered by tests/parallel_train/test_ptrain_launch.py and
tests/faults/test_mpi_failure.py.
"""
import logging
import os
import subprocess
import sys

import pytest

from helpers import ROOT, run_mpiexec
from nnetmix.errors import UsageError
from nnetmix.utils import jobs
from nnetmix.utils.mpistart import (RETRIES_ENV, job_output, nothing_ran, only_banner,
                                    start_failure, start_retries)

RUN = ROOT / "utils" / "run.py"

BANNER = ("--------------------------------------------------------------------------\n"
          "The PMIx server's listener thread failed to start. We cannot\n"
          "continue.\n"
          "--------------------------------------------------------------------------\n")

# FAKE_MODE=start: the first FAKE_FAILS launches fail before any rank runs (banner, exit 213);
# FAKE_MODE=after: the ranks run, then the launch fails with the same banner (must not be retried).
FAKE = r"""#!/bin/bash
if [ "$1" = --version ]; then echo "mpiexec (fake for the tests) 0.0"; exit 0; fi
[ "$1" = -n ] || { echo "fake mpiexec: expected -n N" >&2; exit 2; }
n=$2; shift 2
[ "$1" = --oversubscribe ] && shift
echo launch >> "$FAKE_DIR/launches"
banner() { printf '%s' "$FAKE_BANNER" >&2; exit 213; }
failed=$(ls "$FAKE_DIR" | grep -c '^failed\.')
if [ "${FAKE_MODE:-start}" = start ] && [ "$failed" -lt "${FAKE_FAILS:-1}" ]; then
  touch "$FAKE_DIR/failed.$failed"
  banner
fi
rc=0
for ((r = 0; r < n; r++)); do
  OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$n "$@" || rc=$?
done
[ "${FAKE_MODE:-start}" = after ] && banner
exit $rc
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """The fake mpiexec and its state directory; the environment that selects it."""
    d = tmp_path / "fake"
    d.mkdir()
    exe = d / "mpiexec"
    exe.write_text(FAKE)
    exe.chmod(0o755)
    env = {**os.environ, "NNETMIX_MPIEXEC": str(exe), "FAKE_DIR": str(d), "FAKE_BANNER": BANNER,
           "PYTHONPATH": str(ROOT)}
    env.pop(RETRIES_ENV, None)
    return d, env


def _launches(d) -> int:
    p = d / "launches"
    return len(p.read_text().splitlines()) if p.exists() else 0


def _run(tmp_path, env, command, **extra):
    log = tmp_path / "log" / "job.log"
    p = subprocess.run([sys.executable, str(RUN), "--num-tasks", "2", str(log), *command],
                       env={**env, **extra}, text=True, capture_output=True, timeout=60)
    return p, log


def test_start_failure_is_retried_once_and_first_log_kept(tmp_path, fake):
    d, env = fake
    p, log = _run(tmp_path, env, ["echo", "rank", "$OMPI_COMM_WORLD_RANK", "ran"])
    assert p.returncode == 0, p.stderr
    assert _launches(d) == 2
    text = log.read_text()
    assert "rank 0 ran" in text and "rank 1 ran" in text and "# Ended (code 0)" in text
    assert start_failure(text) is None
    kept = tmp_path / "log" / "job.log.1"
    first = kept.read_text()
    assert "listener thread failed to start" in first and "# Ended (code 213)" in first
    assert "rank 0 ran" not in first
    assert first.rstrip().endswith(f"started again, log {log}")
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("WARNING (run.py[")]
    assert len(warn) == 1, p.stderr
    assert ":run_mpi_attempts():jobs.py:" in warn[0]
    assert f"its log is kept as {kept}" in warn[0] and "(retry 1 of 1)" in warn[0]
    assert "exit code 213" in warn[0] and f"log {log}" in warn[0]


def test_second_start_failure_gives_the_usual_error(tmp_path, fake):
    d, env = fake
    p, log = _run(tmp_path, env, ["echo", "never"], FAKE_FAILS="2")
    assert p.returncode == 1
    assert _launches(d) == 2
    assert (tmp_path / "log" / "job.log.1").exists()
    assert not (tmp_path / "log" / "job.log.2").exists()
    assert "# Ended (code 213)" in log.read_text()
    lines = p.stderr.splitlines()
    assert sum(ln.startswith("WARNING (") for ln in lines) == 1
    assert lines[-2] == (f"run.py: mpiexec failed to start the job (\"The PMIx server's listener "
                         f"thread failed to start. We cannot continue.\"), no rank ran; see {log} "
                         "(exit code 213)")
    assert lines[-1] == f"run.py: job failed, log is in {log}"


def test_ranks_that_ran_are_never_started_again(tmp_path, fake):
    """The ranks wrote output before the launcher printed the banner: a failure of the job."""
    d, env = fake
    p, log = _run(tmp_path, env, ["echo", "trained"], FAKE_MODE="after")
    assert p.returncode == 1
    assert _launches(d) == 1
    assert "WARNING" not in p.stderr
    assert not (tmp_path / "log" / "job.log.1").exists()
    assert "trained" in log.read_text()


def test_a_rank_log_written_means_it_ran(tmp_path, fake):
    """A silent job that still wrote its rank log (what nnetmix's MPI tools do) is not retried."""
    d, env = fake
    p, log = _run(tmp_path, env, ["touch", str(tmp_path / "log" / "job.rank0.log")],
                  FAKE_MODE="after")
    assert p.returncode == 1 and _launches(d) == 1
    assert only_banner(job_output(log.read_text()))
    assert not nothing_ran(str(log), 0.0)


def test_a_real_failure_fails_at_once(tmp_path, fake):
    d, env = fake
    p, log = _run(tmp_path, env, ["exit", "3"], FAKE_FAILS="0")
    assert p.returncode == 1 and _launches(d) == 1
    assert "WARNING" not in p.stderr and "job failed, log is in" in p.stderr


def test_retries_from_the_environment(tmp_path, fake):
    d, env = fake
    p, log = _run(tmp_path, env, ["echo", "ok"], FAKE_FAILS="2", **{RETRIES_ENV: "2"})
    assert p.returncode == 0, p.stderr
    assert _launches(d) == 3
    assert p.stderr.count("WARNING (") == 2 and "(retry 2 of 2)" in p.stderr
    assert (tmp_path / "log" / "job.log.1").exists() and (tmp_path / "log" / "job.log.2").exists()
    q, _ = _run(tmp_path / "off", env, ["echo", "ok"], FAKE_FAILS="3", **{RETRIES_ENV: "0"})
    assert q.returncode == 1 and _launches(d) == 4
    r, _ = _run(tmp_path / "bad", env, ["echo", "ok"], **{RETRIES_ENV: "once"})
    assert r.returncode == 1 and f"{RETRIES_ENV}=once: expected a count >= 0" in r.stderr
    assert _launches(d) == 4
    # the ranks' MPI_Init deadline is checked once, by the wrapper, before anything starts
    t, _ = _run(tmp_path / "bad2", env, ["echo", "ok"], NNETMIX_MPI_INIT_TIMEOUT="soon")
    assert t.returncode == 1 and t.stderr.strip().splitlines() == [
        "run.py: NNETMIX_MPI_INIT_TIMEOUT=soon: expected seconds >= 0 (0: no deadline)"]
    assert _launches(d) == 4


def test_scheduler_path_retries_too(tmp_path, fake, monkeypatch, caplog):
    """run_mpi_job, the scheduler's in-process MPI epoch, goes through the same retry."""
    d, env = fake
    for k in ("NNETMIX_MPIEXEC", "FAKE_DIR", "FAKE_BANNER"):
        monkeypatch.setenv(k, env[k])
    monkeypatch.delenv(RETRIES_ENV, raising=False)
    monkeypatch.setattr(jobs, "_MPIEXEC", {})
    log = tmp_path / "log" / "iter01.tr.log"
    with caplog.at_level(logging.WARNING, logger="nnetmix.utils.jobs"):
        rc = jobs.run_mpi_job(["bash", "-c", "echo rank $OMPI_COMM_WORLD_RANK"], 2, str(log))
    assert rc == 0 and _launches(d) == 2
    assert "rank 1" in log.read_text()
    assert (tmp_path / "log" / "iter01.tr.log.1").exists()
    assert [r.funcName for r in caplog.records] == ["run_mpi_attempts"]


def test_detection():
    assert start_failure("x\n" + BANNER) is not None
    assert start_failure(BANNER.replace("We cannot\ncontinue", "We can continue")) is None
    assert only_banner(BANNER + "\n" + BANNER)
    assert not only_banner("LOG (nnet-train-mpi.py) rank 0\n" + BANNER)
    assert not only_banner("----------------------\n")
    header = "# mpiexec -n 2 x\n# Started at Wed Nov 25 10:00:00 UTC 2026\n#\n"
    footer = "# Accounting: time=0 threads=1\n# Ended (code 213) at ..., elapsed time 0 seconds\n"
    assert job_output(header + "a\n" + footer) == "a\n"
    assert only_banner(job_output(header + BANNER.rstrip("\n") + footer))  # no newline at the end
    assert start_retries({}) == 1 and start_retries({RETRIES_ENV: "3"}) == 3
    with pytest.raises(UsageError):
        start_retries({RETRIES_ENV: "-1"})


def test_tests_own_launches_share_the_detection(tmp_path, fake):
    """helpers.run_mpiexec launches again on the same banner, and only on it."""
    d, env = fake
    cmd = [str(d / "mpiexec"), "-n", "1", "echo", "hi"]
    p = run_mpiexec(cmd, env=env)
    assert p.returncode == 0 and p.stdout == "hi\n" and _launches(d) == 2
    q = run_mpiexec(cmd, env={**env, "FAKE_MODE": "after"})
    assert q.returncode == 213 and _launches(d) == 3
