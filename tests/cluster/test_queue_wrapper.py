"""utils/queue.py (Kaldi's queue.pl for Grid Engine). Grid Engine cannot run here, so a fake
``qsub`` put on PATH stands in for the scheduler only: it records its arguments, answers as qsub
does and runs the job script's tasks on this machine in the background, as a one-node queue
would; the wrapper's own work (config, script, polling, logs, summary) is real."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from cluster_fixtures import ROOT

QUEUE = ROOT / "utils" / "queue.py"

FAKE_QSUB = r"""#!/usr/bin/env bash
# test double for Grid Engine's qsub: one argument a line to $FAKE_QSUB_ARGS, then each task of
# the script (the last argument; -t a:b for an array) run here with SGE_TASK_ID set
printf '%s\n' "$@" > "$FAKE_QSUB_ARGS"
script=${@: -1}; first=; last=
while [ $# -gt 1 ]; do
  if [ "$1" = -t ]; then first=${2%%:*}; last=${2##*:}; fi
  shift
done
if [ -n "$first" ]; then
  for t in $(seq $first $last); do
    [ "$t" = "${FAKE_QSUB_SKIP:-}" ] && continue   # a task the queue lost
    SGE_TASK_ID=$t setsid bash "$script" > /dev/null 2>&1 < /dev/null &
  done
  echo "Your job-array 4242.$first-$last:1 (\"$(basename $script)\") has been submitted"
else
  SGE_TASK_ID=undefined setsid bash "$script" > /dev/null 2>&1 < /dev/null &
  echo "Your job 4242 (\"$(basename $script)\") has been submitted"
fi
"""

FAKE_QSTAT = r"""#!/usr/bin/env bash
# test double for qstat -j: $FAKE_QSTAT says whether job 4242 exists, is gone or the qmaster is down
case "${FAKE_QSTAT:-gone}" in
  running) echo "job_number:                 4242"; exit 0 ;;
  gone) echo "Following jobs do not exist: "; echo "4242"; exit 1 ;;
  down) echo "error: unable to contact qmaster using port 6444 on host \"q1\""; exit 1 ;;
esac
"""


@pytest.fixture
def queue(tmp_path):
    """(working dir, env with the fake qsub/qstat first on PATH, file with qsub's arguments)."""
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    for name, text in (("qsub", FAKE_QSUB), ("qstat", FAKE_QSTAT)):
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, FAKE_QSUB_ARGS=str(tmp_path / "qsub.args"), LC_ALL="C")
    env["PATH"] = os.pathsep.join([str(bindir), os.path.dirname(sys.executable), str(ROOT / "bin"),
                                   str(ROOT / "utils"), env.get("PATH", "")])
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return work, env, tmp_path / "qsub.args"


def run(queue, args, **env):
    work, e, _ = queue
    return subprocess.run([str(a) for a in args], cwd=work, env=dict(e, **env), text=True,
                          capture_output=True, timeout=120)


def test_array_job_default_config_and_logs(queue):
    work, _, args_file = queue
    p = run(queue, [QUEUE, "--mem", "2G", "-pe", "smp", "2", "-q", "all.q@h1",
                    "--max-jobs-run", "2", "JOB=1:3", "exp/log/x.JOB.log", "echo", "task", "JOB",
                    "|", "tr", "a-z", "A-Z"])
    assert p.returncode == 0 and p.stderr == ""
    args = args_file.read_text().splitlines()
    script = str(work / "exp/q/x.sh")
    assert args == ["-v", "PATH", "-cwd", "-S", "/bin/bash", "-j", "y", "-l", "arch=*64*",
                    "-o", "exp/q/x.log", "-pe", "smp", "2", "-q", "all.q@h1",
                    "-l", "mem_free=2G,ram_free=2G",
                    "-tc", "2", "-t", "1:3", script]
    assert "has been submitted" in (work / "exp/q/x.log").read_text()
    for t in (1, 2, 3):
        lines = (work / f"exp/log/x.{t}.log").read_text().splitlines()
        assert lines[0].startswith("# Running on ") and lines[1].startswith("# Started at ")
        assert lines[2] == f"# echo task {t} | tr a-z A-Z" and lines[3] == f"TASK {t}"
        assert lines[-2].startswith("# Accounting: time=") and lines[-2].endswith(" threads=2")
        assert re.match(r"# Finished at .* \d{4} with status 0$", lines[-1])
    assert not list((work / "exp/q/sync").glob("done.*"))


def test_example_config_failure_summary_and_unknown_option(queue):
    work, _, args_file = queue
    (work / "conf").mkdir()
    shutil.copy(ROOT / "conf" / "queue.conf", work / "conf" / "queue.conf")
    # queue.pl ignores an option its config does not describe (slurm.pl refuses it)
    p = run(queue, [QUEUE, "--num-threads", "4", "--foo", "bar", "-V", "JOB=1:3",
                    "exp/log/f.JOB.log", "[", "JOB", "-ne", "2", "]"])
    assert p.returncode == 1
    assert p.stderr == "queue.py: 1 / 3 failed, log is in exp/log/f.*.log\n"
    args = args_file.read_text().splitlines()
    assert args[9:] == ["-o", "exp/q/f.log", "-V", "-pe", "smp", "4", "-q", "all.q", "-t", "1:3",
                        str(work / "exp/q/f.sh")]
    assert (work / "exp/log/f.2.log").read_text().endswith("with status 1\n")
    # a single job, GPU mapping, through the queue.pl name
    p = run(queue, [ROOT / "utils" / "queue.pl", "--gpu", "1", "exp/log/g.log", "exit", "2"])
    assert p.returncode == 1
    assert p.stderr == "queue.pl: job failed with status 2, log is in exp/log/g.log\n"
    assert args_file.read_text().splitlines()[9:] == ["-o", "exp/q/g.log", "-l", "gpu=1", "-q",
                                                      "g.q", str(work / "exp/q/g.sh")]
    (work / "conf" / "queue.conf").write_text("command qsub\noption mem=* -l mem_free\n")
    p = run(queue, [QUEUE, "l.log", "true"])
    assert p.returncode == 1
    assert "conf/queue.conf:2: 'option mem=* -l mem_free' has no substitution variable $0" \
        in p.stderr


def test_mpi_job_in_a_parallel_environment(queue):
    work, _, args_file = queue
    (work / "conf").mkdir()
    shutil.copy(ROOT / "conf" / "queue.conf", work / "conf" / "queue.conf")
    hello = "from mpi4py import MPI; c = MPI.COMM_WORLD; print('rank', c.rank, 'of', c.size)"
    p = run(queue, [QUEUE, "--num-tasks", "2", "exp/log/mpi.log", sys.executable, "-c", hello])
    log = (work / "exp/log/mpi.log").read_text()
    assert p.returncode == 0, p.stderr + log
    assert "-pe\nmpi\n2\n" in args_file.read_text()
    assert f"\n# mpiexec -n 2 {sys.executable} -c \"{hello}\"\n" in log
    assert "rank 0 of 2" in log and "rank 1 of 2" in log


def test_lost_task_reported_after_qstat_says_gone(queue, monkeypatch, capsys):
    from nnetmix.utils import cluster
    from nnetmix.utils.cluster import tasks

    work, env, _ = queue
    monkeypatch.setenv("PATH", env["PATH"])
    sge = cluster.GridEngine()
    monkeypatch.setenv("FAKE_QSTAT", "running")
    assert sge.probe("4242", [1, 2], True) == {1: "RUNNING", 2: "RUNNING"}
    monkeypatch.setenv("FAKE_QSTAT", "down")
    assert sge.probe("4242", [1, 2], True) is None  # qmaster unreachable: conclude nothing
    monkeypatch.setenv("FAKE_QSTAT", "gone")
    assert sge.probe("4242", [2], True) == {2: "GONE"}
    # the wrapper: task 2 never runs, qstat says the job is gone, the run fails naming task 2
    monkeypatch.setattr(tasks, "ENDED_GRACE", 0.5)
    monkeypatch.chdir(work)
    monkeypatch.setenv("FAKE_QSUB_ARGS", env["FAKE_QSUB_ARGS"])
    monkeypatch.setenv("FAKE_QSUB_SKIP", "2")
    rc = cluster.main(["JOB=1:3", "exp/log/lost.JOB.log", "true"], prog="queue.py",
                      scheduler="queue")
    err = capsys.readouterr().err
    assert rc == 1
    assert err == ("queue.py: job 4242_2 ended (GONE) without writing its status (time limit? "
                   "killed? node failure?), log is in exp/log/lost.2.log\n"
                   "queue.py: 1 / 3 failed, log is in exp/log/lost.*.log\n")


def test_utils_queue_py_does_not_shadow_the_standard_library():
    # every Python script in utils/ has utils/ first on sys.path, where `import queue` (done by
    # concurrent.futures for utils/run.py) finds utils/queue.py
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import queue, concurrent.futures; "
            "print(queue.Queue.__module__, hasattr(queue, 'SimpleQueue'))")
    p = subprocess.run([sys.executable, "-c", code, str(ROOT / "utils")], text=True,
                       capture_output=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "queue True\n", p.stderr
