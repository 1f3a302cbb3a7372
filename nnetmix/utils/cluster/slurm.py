"""Slurm: sbatch/squeue/sacct/scancel, as Kaldi's slurm.pl uses them."""
from __future__ import annotations

from nnetmix.utils.cluster.scheduler import Scheduler, run_quietly

__all__ = ["Slurm", "SLURM_DEFAULT_CONFIG"]

SLURM_DEFAULT_CONFIG = """\
# Default configuration (Kaldi's slurm.pl default, naming no partition)
command sbatch --export=PATH
option time=* --time $0
option mem=* --mem-per-cpu $0
option mem=0          # Do not add anything
option num_threads=* --cpus-per-task $0
option num_threads=1 --cpus-per-task 1
option num_tasks=* --ntasks $0
default gpu=0
option gpu=0
option gpu=* --gres=gpu:$0
# --max-jobs-run becomes --array a-b%N in slurm.py itself
"""


class Slurm(Scheduler):
    """sbatch/squeue/sacct/scancel, as slurm.pl uses them."""

    def __init__(self):
        super().__init__(name="slurm", config_path="conf/slurm.conf",
                         default_config=SLURM_DEFAULT_CONFIG, task_var="SLURM_ARRAY_TASK_ID",
                         job_id_pattern=r"Submitted batch job (\d+)")

    def array_options(self, start, end, max_jobs):
        return ["--array", f"{start}-{end}" + (f"%{max_jobs}" if max_jobs else "")]

    def submit_command(self, cfg, opts, qlog, array, script):
        return [*cfg.command, *opts, "--open-mode=append", "-e", qlog, "-o", qlog, *array,
                script]

    def env_lines(self):
        return "  set | grep '^SLURM' | while read -r line; do echo \"# $line\"; done\n"

    def prelude(self):
        # job steps (srun, and mpiexec's daemons on other nodes) get the job's environment, not
        # only the PATH of --export=PATH (sbatch's man page recommends this)
        return "export SLURM_EXPORT_ENV=ALL\n"

    def probe(self, job_id, tasks, array):
        p = run_quietly(["squeue", "-h", "-r", "--states=all", "-j", job_id, "-o", "%i %T"])
        if p is None or (p.returncode != 0 and "invalid job id" not in p.stderr.lower()):
            return None  # controller unreachable: conclude nothing
        states = {}
        for line in p.stdout.splitlines() if p.returncode == 0 else []:
            _store_state(states, line.split(), job_id, tasks, array)
        missing = [t for t in tasks if t not in states]
        if missing:  # purged from the controller (MinJobAge): ask the accounting database
            q = run_quietly(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State"])
            if q is not None and q.returncode == 0:
                for line in q.stdout.splitlines():
                    _store_state(states, line.split("|"), job_id, tasks, array)
        return {t: states.get(t, "GONE") for t in tasks}

    def cancel(self, job_id):
        run_quietly(["scancel", job_id], timeout=15)


def _store_state(states: dict, fields: list[str], job_id: str, tasks, array: bool) -> None:
    if len(fields) < 2:
        return
    jid, state = fields[0], fields[1].split()[0] if fields[1].split() else ""
    if array and jid.startswith(job_id + "_") and jid[len(job_id) + 1:].isdigit():
        states[int(jid[len(job_id) + 1:])] = state
    elif not array and jid == job_id and tasks:
        states[tasks[0]] = state
