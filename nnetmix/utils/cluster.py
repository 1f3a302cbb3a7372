"""Cluster job wrappers: Kaldi's slurm.pl and queue.pl (Grid Engine) with run.pl's convention.

``slurm.py [opts] JOB=1:4 exp/x/log/name.JOB.log cmd args`` and ``queue.py ...`` take what
utils/run.py takes (:func:`nnetmix.utils.jobs.parse_job_args` parses all three and
:func:`~nnetmix.utils.jobs.join_command` joins the command as run.pl does), so cmd.sh changes
one word to move a recipe onto a cluster. As Kaldi's (egs/wsj/s5/utils/parallel/slurm.pl and
queue.pl):

- ``conf/slurm.conf`` / ``conf/queue.conf`` under the current directory (``--config FILE``
  names another; when absent, the built-in default below) holds the submit command
  (``command sbatch --export=PATH``) and maps each ``--name value`` option to scheduler options:
  ``option mem=* --mem-per-cpu $0`` ($0 is the value), ``option gpu=0`` (for that exact value:
  nothing), ``default gpu=0`` (the value when the option is not given). slurm.py refuses an
  option its config does not describe; queue.py ignores it, as queue.pl does.
  ``--max-jobs-run M`` is ``--array a-b%M`` for Slurm and ``option max_jobs_run=* -tc $0`` for
  Grid Engine;
- ``JOB=1:N`` is one array job (``sbatch --array 1-N``, ``qsub -t 1:N``). The job script goes
  to ``q/<name>.sh`` beside the log directory (``.../log/q`` becomes ``.../q``), with the
  scheduler's own output in ``q/<name>.log``; it cds to the current directory, sources
  ./path.sh and writes each task's log: ``# Running on <host>``, ``# Started at <date>``,
  (Slurm) the ``SLURM_*`` variables, ``# <command>``, the command's output, ``# Accounting:
  time=N threads=T`` and ``# Finished at <date> with status N``;
- each task writes its exit status to a done file (``q/done.<pid>.<task>``) that the wrapper
  polls; now and then it asks the scheduler (squeue, then sacct; qstat -j) about the tasks
  that have not written one, so that a task killed before it could (scancel, time limit, node
  failure) fails the run instead of hanging it;
- failure: exit status 1 and ``slurm.py: 1 / 3 failed, log is in exp/x/log/name.*.log``;
- ``--num-tasks N`` (MPI; ``option num_tasks=* --ntasks $0``, Grid Engine ``-pe mpi $0``): an
  allocation of N tasks in which the job runs the command under mpiexec exactly as utils/run.py
  does (:func:`nnetmix.utils.jobs.mpi_command`); Open MPI's mpiexec takes its slots from the
  allocation. ``srun --mpi=pmix`` is not used: Debian's Slurm cannot load PMIx without
  libpmix-dev, and with it the step does not start with the PyPI Open MPI 5 (tried on
  bookworm's 22.05.8).

Where we differ from Kaldi's, and why:

- JOB is replaced by the task id in the command text before bash reads it, as run.pl does;
  Kaldi's queue scripts put ``${SLURM_ARRAY_TASK_ID}`` there, which single quotes leave as is;
- the built-in defaults name no partition or queue (Kaldi's: ``-p shared``/``-p gpu``,
  ``-q all.q``/``g.q``, site names) and the Slurm one drops ``--ntasks-per-node=1``, which
  forbids ``--ntasks N`` on one node;
- no 5-second sleep after making q/ (an NFS work-around), and no ``exit 100`` for a task
  killed with status 137 (it put Grid Engine tasks into the error state, where queue.pl then
  waited for them);
- a task that ends without a status is reported with its scheduler state, and the wrapper
  waits for the other tasks before it sums up (Kaldi's exit at the first).
"""
from __future__ import annotations

import abc
import dataclasses
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from typing import Sequence

from nnetmix.errors import UsageError
from nnetmix.utils.jobs import JobSpec, failure_message, join_command, mpi_command, parse_job_args

__all__ = ["QueueConfig", "Scheduler", "Slurm", "GridEngine", "SCHEDULERS", "parse_config",
           "read_config", "scheduler_options", "queue_paths", "job_script", "wait_for_tasks",
           "main"]

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

GRID_ENGINE_DEFAULT_CONFIG = """\
# Default configuration (Kaldi's queue.pl default)
command qsub -v PATH -cwd -S /bin/bash -j y -l arch=*64*
option mem=* -l mem_free=$0,ram_free=$0
option mem=0          # Do not add anything to qsub_opts
option num_threads=*
option num_threads=1  # Do not add anything to qsub_opts
option max_jobs_run=* -tc $0
default gpu=0
option gpu=0
option gpu=*
"""

MARK = "__NNETMIX_TASK_ID__"
"""Stands for the task id in the job script's strings until bash puts in $SLURM_ARRAY_TASK_ID."""

KILLED_GRACE = 3.0
"""Seconds to wait for the done file of a task the scheduler killed (it will not come)."""
ENDED_GRACE = 60.0
"""Seconds to wait for the done file of a task that ended by itself or that the scheduler no
longer knows: the file was written and the file system (NFS) may be slow to show it; Kaldi's
queue scripts wait about 75 s."""


@dataclasses.dataclass
class QueueConfig:
    """A parsed conf/slurm.conf or conf/queue.conf."""

    source: str
    command: list[str]
    with_value: dict[str, str] = dataclasses.field(default_factory=dict)
    """``option mem=* ARGS``: option name -> ARGS, where $0 stands for the value."""
    exact: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    """``option gpu=0 ARGS``: (option, value) -> ARGS."""
    defaults: dict[str, str] = dataclasses.field(default_factory=dict)


def parse_config(text: str, source: str, dollar_zero_required: bool = False,
                 prog: str = "slurm.py") -> QueueConfig:
    """Parse Kaldi's queue config lines (``command``, ``option``, ``default``, # comments)."""
    command, with_value, exact, defaults = None, {}, {}, {}
    for n, line in enumerate(text.splitlines(), 1):
        s = re.sub(r"\s*#.*", "", line)
        if not s.strip():
            continue
        m = re.match(r"^command (.+)", s)
        if m:
            command = shlex.split(m.group(1))
            continue
        m = re.match(r"^option ([^=]+)=\* (.+)$", s)
        if m:
            if "$0" not in m.group(2):
                msg = f"{source}:{n}: '{line}' has no substitution variable $0"
                if dollar_zero_required:
                    raise UsageError(msg)
                sys.stderr.write(f"{prog}: WARNING: {msg}\n")
            with_value[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^option ([^=]+)=(\S+)\s?(.*)$", s)
        if m:
            exact[(m.group(1), m.group(2))] = m.group(3)
            continue
        m = re.match(r"^default (\S+)=(\S+)", s)
        if m:
            defaults[m.group(1)] = m.group(2)
            continue
        raise UsageError(f"{source}:{n}: unable to parse line '{line}' (expected 'command ...', "
                         "'option name=value ...' or 'default name=value')")
    if command is None:
        raise UsageError(f'config file ({source}) does not contain the line "command ..."')
    return QueueConfig(source, command, with_value, exact, defaults)


@dataclasses.dataclass
class Scheduler(abc.ABC):
    """What differs between the Slurm and the Grid Engine wrapper (each overrides the abstract
    methods)."""

    name: str = ""
    config_path: str = ""
    default_config: str = ""
    task_var: str = ""
    native_arity: dict[str, int] = dataclasses.field(default_factory=dict)
    unknown_option_is_error: bool = True
    """slurm.pl dies on an option its config does not describe; queue.pl ignores it."""
    throttle_in_array: bool = True
    """--max-jobs-run goes into the array option (Slurm) rather than through the config."""
    job_id_pattern: str = ""
    sync_subdir: str = ""

    @abc.abstractmethod
    def array_options(self, start: int, end: int, max_jobs: int | None) -> list[str]:
        """The scheduler options of a JOB=start:end array (``max_jobs``: --max-jobs-run)."""

    @abc.abstractmethod
    def submit_command(self, cfg: QueueConfig, opts: list[str], qlog: str, array: list[str],
                       script: str) -> list[str]:
        """The command line that submits ``script`` with ``opts`` and the array options."""

    def env_lines(self) -> str:
        """Bash lines that copy scheduler variables into the log header (none by default)."""
        return ""

    def prelude(self) -> str:
        """Bash lines the job script runs after path.sh (none by default)."""
        return ""

    @abc.abstractmethod
    def probe(self, job_id: str, tasks: Sequence[int], array: bool) -> dict[int, str] | None:
        """{task: state} for ``tasks`` ("GONE": the scheduler no longer knows it); None when
        the scheduler could not be asked (then nothing is concluded)."""

    @staticmethod
    def finished(state: str) -> bool:
        """The task is over (Slurm's job states; "GONE" for an unknown task)."""
        return state not in ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED",
                             "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING",
                             "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD")

    @staticmethod
    def killed(state: str) -> bool:
        """The scheduler ended the task before its script could write the done file."""
        return state in ("CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                         "BOOT_FAIL", "DEADLINE", "REVOKED")

    @abc.abstractmethod
    def cancel(self, job_id: str) -> None:
        """Cancel the job (the wrapper was interrupted)."""


def _run(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None


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
        p = _run(["squeue", "-h", "-r", "--states=all", "-j", job_id, "-o", "%i %T"])
        if p is None or (p.returncode != 0 and "invalid job id" not in p.stderr.lower()):
            return None  # controller unreachable: conclude nothing
        states = {}
        for line in p.stdout.splitlines() if p.returncode == 0 else []:
            _store_state(states, line.split(), job_id, tasks, array)
        missing = [t for t in tasks if t not in states]
        if missing:  # purged from the controller (MinJobAge): ask the accounting database
            q = _run(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State"])
            if q is not None and q.returncode == 0:
                for line in q.stdout.splitlines():
                    _store_state(states, line.split("|"), job_id, tasks, array)
        return {t: states.get(t, "GONE") for t in tasks}

    def cancel(self, job_id):
        _run(["scancel", job_id], timeout=15)


def _store_state(states: dict, fields: list[str], job_id: str, tasks, array: bool) -> None:
    if len(fields) < 2:
        return
    jid, state = fields[0], fields[1].split()[0] if fields[1].split() else ""
    if array and jid.startswith(job_id + "_") and jid[len(job_id) + 1:].isdigit():
        states[int(jid[len(job_id) + 1:])] = state
    elif not array and jid == job_id and tasks:
        states[tasks[0]] = state


class GridEngine(Scheduler):
    """qsub/qstat/qdel, as queue.pl uses them."""

    def __init__(self):
        super().__init__(name="queue", config_path="conf/queue.conf",
                         default_config=GRID_ENGINE_DEFAULT_CONFIG, task_var="SGE_TASK_ID",
                         native_arity={"-V": 0, "-pe": 2}, unknown_option_is_error=False,
                         throttle_in_array=False,
                         job_id_pattern=r"Your job\S* (\d+)[. ].+ has been submitted",
                         sync_subdir="sync")

    def array_options(self, start, end, max_jobs):
        return ["-t", f"{start}:{end}"]

    def submit_command(self, cfg, opts, qlog, array, script):
        return [*cfg.command, "-o", qlog, *opts, *array, script]

    def probe(self, job_id, tasks, array):
        p = _run(["qstat", "-j", job_id])
        if p is None:
            return None
        out = p.stdout + p.stderr
        if p.returncode == 1 and "qmaster" not in out and "gdi request" not in out:
            return {t: "GONE" for t in tasks}
        return None if p.returncode != 0 else {t: "RUNNING" for t in tasks}

    def cancel(self, job_id):
        _run(["qdel", job_id], timeout=15)


SCHEDULERS = {"slurm": Slurm, "queue": GridEngine}


def read_config(path: str | None, sched: Scheduler, prog: str) -> QueueConfig:
    """``--config FILE`` (must exist), else conf/<name>.conf when present, else the default."""
    name = path or sched.config_path
    try:
        with open(name, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        if path:
            raise UsageError(f"could not open config file {path}: {e.strerror}") from None
        return parse_config(sched.default_config, "default config file",
                            not sched.unknown_option_is_error, prog)
    return parse_config(text, name, not sched.unknown_option_is_error, prog)


def scheduler_options(cfg: QueueConfig, given: dict[str, str], array_job: bool,
                      sched: Scheduler, prog: str) -> tuple[list[str], int | None]:
    """The scheduler options for the command line's ``--name value`` options, and the array
    throttle (Slurm's --max-jobs-run); raises UsageError for an option slurm.pl refuses."""
    cli = dict(given)
    for name, value in cfg.defaults.items():
        cli.setdefault(name, value)
    opts: list[str] = []
    throttle = None
    for name, value in cli.items():
        if name == "config":
            continue
        if name == "max_jobs_run":
            if not array_job:
                if sched.throttle_in_array:
                    sys.stderr.write(f"{prog}: ignoring max_jobs_run since this is not an "
                                     "array task\n")
                continue
            if sched.throttle_in_array:
                throttle = int(value)
                continue
        if (name, value) in cfg.exact:
            args = cfg.exact[(name, value)]
        elif name in cfg.with_value:
            args = cfg.with_value[name].replace("$0", value)
        elif (name, "*") in cfg.exact:
            args = cfg.exact[(name, "*")]
        elif sched.unknown_option_is_error:
            raise UsageError(f"command line option {name} not described in {cfg.source} "
                             f"(or value '{value}' not allowed)")
        else:
            continue
        opts += shlex.split(args)
    return opts, throttle


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


def _submit(argv: list[str], qlog: str, pattern: str) -> str:
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
    submit = sched.submit_command(cfg, native + opts, qlog, array_opts, script)
    try:
        for _, log in tasks.values():
            os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
        os.makedirs(os.path.dirname(done), exist_ok=True)
        for path in [qlog] + [d for d, _ in tasks.values()]:
            if os.path.exists(path):
                os.remove(path)
        with open(script + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(job_script(spec, sched, cwd, done, submit))
        os.replace(script + ".tmp", script)
        since = time.time()
        job_id = _submit(submit, qlog, sched.job_id_pattern)
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
