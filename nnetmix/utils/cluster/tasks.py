"""Submitting a job and waiting for its tasks: done files polled, the scheduler asked now and
then about the tasks that wrote none, so that a task killed before it could fails the run
instead of hanging it."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time

from nnetmix.utils.cluster.scheduler import Scheduler

__all__ = ["KILLED_GRACE", "ENDED_GRACE", "submit", "wait_for_tasks"]

KILLED_GRACE = 3.0
"""Seconds to wait for the done file of a task the scheduler killed (it will not come)."""
ENDED_GRACE = 60.0
"""Seconds to wait for the done file of a task that ended by itself or that the scheduler no
longer knows: the file was written and the file system (NFS) may be slow to show it; Kaldi's
queue scripts wait about 75 s."""


def _read_done(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None


def _status_in_log(log: str, since: float) -> int | None:
    """The ``with status N`` of a log written after ``since`` (slurm.pl's check of a task whose
    done file never came), else None."""
    try:
        if os.path.getmtime(log) < since:
            return None
        with open(log, encoding="utf-8", errors="replace") as fh:
            tail = fh.readlines()[-10:]
    except OSError:
        return None
    for line in reversed(tail):
        m = re.search(r"with status (\d+)", line)
        if m:
            return int(m.group(1))
    return None


def wait_for_tasks(sched: Scheduler, job_id: str, tasks: dict[int, tuple[str, str]],
                   array: bool, prog: str, since: float,
                   max_wait: float = 1.0) -> dict[int, int | None]:
    """Wait until every task wrote its done file or ended without one; {task: status or None}.

    ``tasks``: task id -> (done file, log). The done files are polled with a growing pause
    (0.1 s up to ``max_wait``); the scheduler is asked about the rest after 1, 3, 7, 15 and 31 s
    and then every 30 s, so that many waiting wrappers do not flood it with squeue/qstat calls.
    A task it reports over is given :data:`KILLED_GRACE` or :data:`ENDED_GRACE` seconds to show
    its done file, then its log's last ``with status N`` line counts (slurm.pl's check).
    """
    codes: dict[int, int | None] = {}
    ended: dict[int, tuple[float, str]] = {}
    pause, next_probe, probe_gap = 0.1, time.monotonic() + 1.0, 1.0
    while True:
        for t, (done, _) in tasks.items():
            if t not in codes:
                code = _read_done(done)
                if code is not None:
                    codes[t] = code
        pending = [t for t in tasks if t not in codes]
        if not pending:
            return codes
        now = time.monotonic()
        for t in pending:
            if t in ended and now - ended[t][0] > (
                    KILLED_GRACE if sched.killed(ended[t][1]) else ENDED_GRACE):
                done, log = tasks[t]
                code = _status_in_log(log, since)
                name = f"{job_id}_{t}" if array else job_id
                if code is not None:
                    sys.stderr.write(f"{prog}: WARNING: job {name} wrote no done file ({done}) "
                                     f"but its log ends with status {code}; is the file system "
                                     "slow to show files?\n")
                else:
                    sys.stderr.write(f"{prog}: job {name} ended ({ended[t][1]}) without writing "
                                     f"its status (time limit? killed? node failure?), log is "
                                     f"in {log}\n")
                codes[t] = code
        if now >= next_probe:
            states = sched.probe(job_id, pending, array) or {}
            for t, state in states.items():
                if t not in ended and sched.finished(state):
                    ended[t] = (now, state)
            probe_gap = min(probe_gap * 2, 30.0)
            next_probe = now + probe_gap
        time.sleep(pause)
        pause = min(pause * 1.2, max_wait)


def submit(argv: list[str], qlog: str, pattern: str) -> str:
    """Run the submit command (its output to ``qlog``); the one job id it printed."""
    with open(qlog, "a", encoding="utf-8") as fh:
        try:
            rc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=fh,
                                stderr=subprocess.STDOUT).returncode
        except OSError as e:
            fh.write(f"{e}\n")
            rc = 127
    with open(qlog, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    ids = re.findall(pattern, text)
    if rc != 0 or len(ids) != 1:
        tail = "".join(text.splitlines(keepends=True)[-10:])
        why = (f"return status was {rc}" if rc != 0 else
               f"found {len(ids)} job ids in the output, expected 1")
        raise OSError(f"error submitting jobs to queue ({why}); queue log file is {qlog}, "
                      f"command was {shlex.join(argv)}\n{tail}")
    return ids[0]
