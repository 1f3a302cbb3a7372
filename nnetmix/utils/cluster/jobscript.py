"""The bash script every task of a job runs (Kaldi's log header, the command, accounting, the
done file), and where it and the scheduler's own log go (``q/`` beside the log directory)."""
from __future__ import annotations

import os
import re
import shlex

from nnetmix.utils.cluster.scheduler import Scheduler
from nnetmix.utils.jobs import JobSpec, join_command, mpi_command

__all__ = ["MARK", "queue_paths", "job_script"]

MARK = "__NNETMIX_TASK_ID__"
"""Stands for the task id in the job script's strings until bash puts in $SLURM_ARRAY_TASK_ID."""


def queue_paths(log: str, var: str | None, cwd: str) -> tuple[str, str, str]:
    """(q directory, scheduler log, absolute job script path) for a log name, as slurm.pl."""
    qdir = re.sub(r"/(log|LOG)/*q", "/q", f"{os.path.dirname(log) or '.'}/q", count=1)
    qlog = f"{qdir}/{os.path.basename(log)}"
    if var:
        qlog = re.sub(r"\.?" + re.escape(var), "", qlog, count=1)
    script, n = re.subn(r"\.[a-zA-Z]{1,5}$", ".sh", qlog)
    if not n:
        script += ".sh"
    return qdir, qlog, script if os.path.isabs(script) else os.path.join(cwd, script)


def job_script(spec: JobSpec, sched: Scheduler, cwd: str, done: str, submit: list[str]) -> str:
    """The bash script every task runs: header, the command into the log, accounting, status.

    Strings hold :data:`MARK` where the job variable was, replaced by the task id at run time.
    """
    cmd = join_command(spec.command)
    log = spec.log
    if spec.var:
        cmd, log = spec.substitute(cmd, MARK), spec.substitute(log, MARK)
    shown = cmd
    if spec.num_tasks:
        shown = f"mpiexec -n {spec.num_tasks} {cmd}"
        cmd = mpi_command(cmd, spec.num_tasks, log, spec.num_threads)
    task = f"${{{sched.task_var}}}" if spec.var else str(spec.start)
    q = shlex.quote
    return (
        "#!/bin/bash\n"
        f"cd {q(cwd)}\n"
        "[ -f ./path.sh ] && . ./path.sh\n"
        f"{sched.prelude()}"
        f"task={task}\n"
        f"log={q(log)}; log=${{log//{MARK}/$task}}\n"
        f"cmd={q(cmd)}; cmd=${{cmd//{MARK}/$task}}\n"
        f"shown={q(shown)}; shown=${{shown//{MARK}/$task}}\n"
        f"done_file={q(done)}.$task\n"
        "( echo \"# Running on $(hostname)\"\n"
        "  echo \"# Started at $(LC_ALL=C date)\"\n"
        f"{sched.env_lines()}"
        "  printf '# %s\\n' \"$shown\"\n"
        ") > \"$log\"\n"
        "time1=$(date +%s)\n"
        "bash -c \"$cmd\" < /dev/null >> \"$log\" 2>&1\n"
        "ret=$?\n"
        "sync || true\n"
        "time2=$(date +%s)\n"
        "echo \"# Accounting: begin_time=$time1\" >> \"$log\"\n"
        "echo \"# Accounting: end_time=$time2\" >> \"$log\"\n"
        f"echo \"# Accounting: time=$((time2 - time1)) threads={spec.num_threads}\" >> \"$log\"\n"
        "echo \"# Finished at $(LC_ALL=C date) with status $ret\" >> \"$log\"\n"
        "echo $ret > \"$done_file.tmp\" && mv \"$done_file.tmp\" \"$done_file\"\n"
        "exit $((ret ? 1 : 0))\n"
        "## submitted with:\n"
        f"# {shlex.join(submit)}\n")
