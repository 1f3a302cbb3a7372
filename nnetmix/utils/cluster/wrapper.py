"""``main``: the whole of utils/slurm.py and utils/queue.py (parse, submit, wait, sum up)."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Sequence

from nnetmix.errors import UsageError
from nnetmix.utils.cluster.config import read_config, scheduler_options
from nnetmix.utils.cluster.gridengine import GridEngine
from nnetmix.utils.cluster.jobscript import job_script, queue_paths
from nnetmix.utils.cluster.slurm import Slurm
from nnetmix.utils.cluster.tasks import submit, wait_for_tasks
from nnetmix.utils.jobs import failure_message, parse_job_args

__all__ = ["SCHEDULERS", "main"]

SCHEDULERS = {"slurm": Slurm, "queue": GridEngine}


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None, prog: str | None = None,
         scheduler: str = "slurm") -> int:
    """The whole of utils/slurm.py or utils/queue.py: parse, submit, wait, sum up."""
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = prog or os.path.basename(sys.argv[0] or f"{scheduler}.py")
    sched = SCHEDULERS[scheduler]()
    try:
        spec = parse_job_args(argv, prog, native_arity=sched.native_arity)
        native = spec.native
        if "-pe" in native:  # queue.pl: -pe smp N sets the accounting's threads
            pe = native[native.index("-pe"):][:3]
            if len(pe) < 3 or not pe[2].isdigit():
                raise UsageError(f"invalid option {' '.join(pe)} "
                                 "(expected -pe <environment> <slots>)")
            spec.num_threads = int(pe[2])
        cfg = read_config(spec.given.get("config"), sched, prog)
        array = spec.var is not None
        opts, throttle = scheduler_options(cfg, spec.given, array, sched, prog)
    except UsageError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 1
    cwd = os.getcwd()
    qdir, qlog, script = queue_paths(spec.log, spec.var, cwd)
    done = os.path.join(qdir, sched.sync_subdir, f"done.{os.getpid()}")
    tasks = {t: (f"{done}.{t}", spec.substitute(spec.log, t))
             for t in range(spec.start, spec.end + 1)}
    array_opts = sched.array_options(spec.start, spec.end, throttle) if array else []
    submit_argv = sched.submit_command(cfg, native + opts, qlog, array_opts, script)
    try:
        for _, log in tasks.values():
            os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
        os.makedirs(os.path.dirname(done), exist_ok=True)
        for path in [qlog] + [d for d, _ in tasks.values()]:
            if os.path.exists(path):
                os.remove(path)
        with open(script + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(job_script(spec, sched, cwd, done, submit_argv))
        os.replace(script + ".tmp", script)
        since = time.time()
        job_id = submit(submit_argv, qlog, sched.job_id_pattern)
    except OSError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 1
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    try:
        codes = wait_for_tasks(sched, job_id, tasks, array, prog, since)
    except KeyboardInterrupt:
        sched.cancel(job_id)
        sys.stderr.write(f"{prog}: interrupted, cancelled job {job_id} (logs in {spec.log})\n")
        return 130
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    for d, _ in tasks.values():
        if os.path.exists(d):
            os.remove(d)
    msg = failure_message(spec, codes, prog, with_status=True)
    if msg:
        sys.stderr.write(msg)
        return 1
    return 0
