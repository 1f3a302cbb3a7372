"""When one rank fails, the whole MPI job must end, non-zero, in bounded time, saying which.

Open MPI already ends the job when a rank process DIES (a signal such as SIGKILL or an OOM
kill; measured here: mpiexec exits 137 within about 2 s). It does not when a rank raises a
Python exception: that rank exits, and the others wait forever in their next collective. So:

- :func:`run_ranks` runs a rank's main function; on an exception it writes one Kaldi-style line
  ``ERROR (prog[version]:func():file.py:line) rank R: message`` (with the traceback for errors
  that are not nnetmix user errors) and calls ``comm.Abort(1)``, which ends every rank.
- :func:`install_excepthook` does the same for an uncaught exception anywhere (and in threads).
- :class:`Watchdog` bounds the time between progress marks (``kick()`` after each minibatch and
  utterance read): a rank stuck in a collective whose peer hangs (not dead: SIGSTOP, a deadlock,
  a stalled file system) aborts the job, naming the rank that hung. The limit adapts to the
  measured time per minibatch (:meth:`Watchdog.limit`) unless fixed in seconds.
- :class:`RankStatus` keeps this rank's record (:mod:`nnetmix.utils.rankstatus`) beside its log:
  started, heartbeat and progress (from the watchdog's thread), and how it ended, so that the
  job's first error line can name the rank, its host and its log
  (:func:`~nnetmix.utils.rankstatus.summarise_mpi_failure`), and the watchdog can tell which
  peer stopped.
"""
from __future__ import annotations

import logging
import os
import re
import socket
import sys
import threading
import time
import traceback
from typing import Any, Callable, NoReturn, Optional

from nnetmix import __version__
from nnetmix.errors import NnetmixError
from nnetmix.utils.rankstatus import RankRecord, read_record, write_record

__all__ = ["rank_error_line", "abort_job", "run_ranks", "install_excepthook", "run_job",
           "launcher_rank", "Watchdog", "RankStatus", "open_rank_status", "rank_status"]

_log = logging.getLogger("nnetmix.parallel")


def _prog() -> str:
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"


class RankStatus:
    """This process's record as a rank of an MPI job, and its peers' (read by the watchdog).

    ``path_of(k)`` is rank k's record file; each rank writes only its own, atomically."""

    def __init__(self, comm: Any, path_of: Callable[[int], str], rank_log: str):
        self.path_of = path_of
        self.lock = threading.Lock()
        self.rec = RankRecord(rank=comm.Get_rank(), size=comm.Get_size(),
                              host=socket.gethostname(), pid=os.getpid(), log=rank_log,
                              started=time.time())
        self.rec.alive = self.rec.progress = self.rec.started
        self._write()

    def _write(self) -> None:
        try:
            write_record(self.path_of(self.rec.rank), self.rec)
        except OSError:
            pass  # a full disk must not turn a report into a new failure

    def heartbeat(self, progress: float, marks: int, limit: float) -> None:
        with self.lock:
            if self.rec.state != "running":
                return
            self.rec.alive, self.rec.progress = time.time(), progress
            self.rec.marks, self.rec.limit = marks, limit
            self._write()

    def finish(self, state: str, code: int, error: str = "",
               blame: Optional[dict] = None) -> None:
        """The end of this rank (the first end written stays: a watchdog's report is not
        overwritten by the abort that follows it)."""
        with self.lock:
            if self.rec.state != "running":
                return
            self.rec.state, self.rec.exit, self.rec.error = state, int(code), error
            self.rec.blame = blame
            self.rec.alive = time.time()
            self._write()

    def peer(self, rank: int) -> Optional[RankRecord]:
        """Rank ``rank``'s record of this run (None: absent, or left by an earlier run)."""
        rec = read_record(self.path_of(rank))
        if rec is None or rec.rank != rank or rec.started < self.rec.started - _SAME_RUN_S:
            return None
        return rec

    def blame_entry(self, rec: RankRecord, why: str) -> dict:
        return {"rank": rec.rank, "host": rec.host, "pid": rec.pid, "log": rec.log, "why": why}


#: records started this much earlier than ours are from an earlier run of the same log name
_SAME_RUN_S = 300.0
_STATUS: list[RankStatus] = []


def open_rank_status(comm: Any, path_of: Callable[[int], str], rank_log: str) -> RankStatus:
    """Start this process's record (one per process; a second call replaces the first)."""
    _STATUS[:] = [RankStatus(comm, path_of, rank_log)]
    return _STATUS[0]


def rank_status() -> Optional[RankStatus]:
    """This process's record, when its tool keeps one (rank logs: utils/run.py --num-tasks)."""
    return _STATUS[0] if _STATUS else None


_PREFIX = re.compile(r"^ERROR \(\S+\) (rank \d+: )?")


def _end(state: str, code: int, line: str = "") -> None:
    st = rank_status()
    if st is None:
        return
    msg = _PREFIX.sub("", line.splitlines()[0]) if line else ""
    st.finish(state, code, msg, st.blame_entry(st.rec, f"failed: {msg}") if msg else None)


def rank_error_line(rank: int, exc: BaseException, prog: Optional[str] = None) -> str:
    """``ERROR (prog[version]:func():file:line) rank R: message`` for ``exc`` (where it was
    raised), plus the traceback unless it is an NnetmixError (a user mistake, one line)."""
    tb = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    if tb:
        fr = tb[-1]
        where = f"{fr.name}():{os.path.basename(fr.filename)}:{fr.lineno}"
    else:
        where = "main():?:0"
    msg = str(exc) if isinstance(exc, NnetmixError) else f"{type(exc).__name__}: {exc}"
    line = f"ERROR ({prog or _prog()}[{__version__}]:{where}) rank {rank}: {msg}"
    if not isinstance(exc, NnetmixError) and tb:
        line += "\n" + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
    return line


def abort_job(comm: Any, line: str, code: int = 1) -> NoReturn:
    """Write ``line`` to stderr (and the log handlers, when a file log is set up), then end the
    whole MPI job with ``comm.Abort(code)``; ``os._exit`` if Abort itself returns."""
    try:
        sys.stdout.flush()
    except Exception:
        pass
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except Exception:
        pass
    root = logging.getLogger()
    for h in root.handlers:  # a rank's own log file gets the line too (stderr already has it)
        if getattr(h, "stream", None) not in (sys.stderr, sys.__stderr__):
            try:
                h.stream.write(line + "\n")
                h.flush()
            except Exception:
                pass
    _end("failed", code, line)
    try:
        comm.Abort(code)
    finally:
        os._exit(code)


def run_ranks(comm: Any, fn: Callable[..., Any], *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)`` on this rank; any exception ends the whole job (module docstring).

    ``SystemExit(0)`` passes through; a non-zero SystemExit aborts like an exception, since
    the other ranks may be waiting for this one. Returns fn's result.
    """
    try:
        return fn(*args, **kwargs)
    except SystemExit as e:
        if e.code in (None, 0) or comm.Get_size() == 1:
            raise
        abort_job(comm, f"ERROR ({_prog()}[{__version__}]:run_ranks():failure.py:0) "
                        f"rank {comm.Get_rank()}: exited with {e.code}",
                  e.code if isinstance(e.code, int) else 1)
    except BaseException as e:  # noqa: BLE001 - every failure must end the job
        abort_job(comm, rank_error_line(comm.Get_rank(), e))


def install_excepthook(comm: Any) -> None:
    """Make an uncaught exception (main thread or any thread) abort the job, naming the rank."""
    def hook(exc_type, exc, tb):
        if exc is None:
            exc = exc_type()
        exc.__traceback__ = tb
        abort_job(comm, rank_error_line(comm.Get_rank(), exc))

    def thread_hook(args):
        if args.exc_type is SystemExit:
            return
        hook(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = hook
    threading.excepthook = thread_hook


def run_job(comm: Any, work: Callable[[], int]) -> int:
    """An MPI tool's body: alone, just ``work()``; with peers, any failure aborts the whole job
    naming the rank (excepthook for other threads, run_ranks for this one)."""
    if comm.Get_size() == 1:
        rc = work()
    else:
        install_excepthook(comm)
        rc = run_ranks(comm, work)
    _end("done", int(rc or 0))
    return rc


def launcher_rank() -> int:
    """This process's rank as the launcher (mpiexec, PMIx, Slurm's PMI) tells it, before MPI is
    initialised: tools use it to print their command line once, from rank 0."""
    for v in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"):
        if os.environ.get(v, "").isdigit():
            return int(os.environ[v])
    return 0


class Watchdog:
    """Abort the job, naming the rank that hung, when no :meth:`kick` came for too long.

    ``with Watchdog(comm, -1) as wd: ... wd.kick(step=True)`` after every minibatch (and
    ``wd.kick()`` after every utterance read). ``timeout_s`` > 0 is a fixed limit in seconds,
    0 turns the watchdog off, and a negative value (the default of the tools' --watchdog-timeout)
    adapts the limit to the measured time per minibatch: the first :attr:`WARMUP_STEPS`
    minibatches (reading, compiling the kernels from their cache, the first mixes) may each take
    :attr:`STARTUP_S`; after them the limit is :attr:`FACTOR` times the slowest gap between
    progress marks seen since, and at least :attr:`FLOOR_S`. An honest slow step (a mix waiting
    for a slower peer, a burst of load) only raises the limit; a hang is caught a minute or so
    after it starts on a machine where a minibatch takes milliseconds.

    Time in which the watchdog's own thread did not run (a poll more than :attr:`SKIP_S` late:
    the whole process stopped by Ctrl-Z, SIGSTOP or a batch system's suspend, and continued) is
    not counted: a job suspended and resumed goes on, while a rank that hangs or is stopped
    alone is still caught by its peers, whose watchdogs kept running.

    The thread polls every second (``min(1, timeout/10)`` when fixed) and writes this rank's
    heartbeat into its record (:class:`RankStatus`); when it fires, the peers' records say which
    rank hung: one whose heartbeat stopped (SIGSTOP, frozen, swapped out), else the one whose
    last progress is oldest (a deadlock, a stalled file system); without records it names only
    itself.
    """

    STARTUP_S = 120.0
    WARMUP_STEPS = 10
    FACTOR = 20.0
    FLOOR_S = 60.0
    SKIP_S = 1.0  # a poll this late means the process did not run meanwhile

    def __init__(self, comm: Any, timeout_s: float, what: str = "no progress"):
        self.comm = comm
        self.timeout_s = float(timeout_s)
        self.what = what
        self._last = time.monotonic()
        self._wall_last = time.time()
        self.marks = 0
        self.steps = 0
        self.slowest = 0.0
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    @property
    def adaptive(self) -> bool:
        return self.timeout_s < 0

    def limit(self) -> float:
        """Seconds without progress that end the job now (0: off)."""
        if not self.adaptive:
            return self.timeout_s
        if self.steps <= self.WARMUP_STEPS:
            return self.STARTUP_S
        return max(self.FLOOR_S, self.FACTOR * self.slowest)

    def describe_limit(self) -> str:
        if not self.adaptive:
            return f"watchdog timeout {self.timeout_s:g} s"
        if self.steps <= self.WARMUP_STEPS:
            return f"adaptive watchdog: {self.STARTUP_S:g} s while starting up"
        return (f"adaptive watchdog: {self.limit():.0f} s = max({self.FLOOR_S:g} s, "
                f"{self.FACTOR:g} x the slowest step {self.slowest:.2f} s)")

    def start(self) -> "Watchdog":
        if self.timeout_s != 0 and self._thread is None:
            self._last = time.monotonic()
            self._wall_last = time.time()
            self._thread = threading.Thread(target=self._watch, name="nnetmix-watchdog",
                                            daemon=True)
            self._thread.start()
        return self

    def kick(self, step: bool = False) -> None:
        """A progress mark; ``step``: a minibatch (counts for the warm-up)."""
        now = time.monotonic()
        if step:
            self.steps += 1
        if self.steps > self.WARMUP_STEPS:
            self.slowest = max(self.slowest, now - self._last)
        self.marks += 1
        self._last = now
        self._wall_last = time.time()
        if self.marks == 1 and self._thread is not None:
            # training has begun: say so at once rather than at the next heartbeat (a short
            # epoch can end within one), so a reader of the record knows this rank is watched
            st = rank_status()
            if st is not None:
                st.heartbeat(self._wall_last, self.marks, self.limit())

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "Watchdog":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _watch(self) -> None:
        poll = 1.0 if self.adaptive else min(1.0, self.timeout_s / 10)
        st = rank_status()
        polled = time.monotonic()
        while not self._stop.wait(poll):
            now = time.monotonic()
            lost = now - polled - poll
            polled = now
            if lost > self.SKIP_S:
                # this thread could not run either: the process was stopped (Ctrl-Z, SIGSTOP,
                # Slurm's suspend, a frozen VM) or starved; a hang stops the work, not the
                # watchdog, so the time nothing here ran is no lack of progress
                self._last = min(now, self._last + lost)
            idle = now - self._last
            limit = self.limit()
            if st is not None:
                st.heartbeat(self._wall_last, self.marks, limit)
            if idle > limit:
                self._fire(st, idle, limit, poll)

    def _blame(self, st: Optional[RankStatus], idle: float, limit: float,
               poll: float) -> Optional[dict]:
        """The rank that hung, from the peers' records (None: they cannot tell)."""
        if st is None:
            return None
        now = time.time()
        me = st.rec
        peers = {k: st.peer(k) for k in range(me.size) if k != me.rank}
        known = [r for r in peers.values() if r is not None]
        stale_s = max(3 * poll, min(limit / 2, 30.0))
        stopped = [r for r in known if r.state == "running" and now - r.alive > stale_s]
        if stopped:
            c = min(stopped, key=lambda r: r.alive)
            return st.blame_entry(c, f"hung: no heartbeat for {now - c.alive:.0f} s and no "
                                     f"progress for {now - c.progress:.0f} s (stopped, frozen "
                                     "or swapped out)")
        if len(known) < len(peers):
            missing = [k for k, r in peers.items() if r is None]
            return None if len(missing) > 1 else {
                "rank": missing[0], "host": "?", "pid": "?", "log": "",
                "why": "hung: it never wrote its record (stopped before it started?)"}
        c = min(known + [me], key=lambda r: self._wall_last if r is me else r.progress)
        if c is me:
            return st.blame_entry(me, f"hung: no progress for {idle:.0f} s in its own work "
                                      "while its peers waited")
        return st.blame_entry(c, f"hung: no progress for {now - c.progress:.0f} s while its "
                                 "process is alive (a deadlock, a stalled file system?)")

    def _fire(self, st: Optional[RankStatus], idle: float, limit: float, poll: float) -> None:
        rank = self.comm.Get_rank()
        blame = self._blame(st, idle, limit, poll)
        if blame is None:
            msg = (f"{self.what} for {idle:.0f} s ({self.describe_limit()}; a peer rank may "
                   "have hung or died); aborting the job")
        else:
            waited = (f"its watchdog fired after {idle:.0f} s" if blame["rank"] == rank
                      else f"rank {rank} waited {idle:.0f} s for it")
            blame["why"] = f"{blame['why']}; {waited} ({self.describe_limit()})"
            who = f"MPI rank {blame['rank']} on host {blame['host']} (pid {blame['pid']})"
            msg = f"{who} {blame['why']}; aborting the job" + (
                f"; see {blame['log']}" if blame.get("log") else "")
        if st is not None:
            st.finish("failed", 1, msg, blame)
        abort_job(self.comm, f"ERROR ({_prog()}[{__version__}]:watchdog():failure.py:0) "
                             f"rank {rank}: {msg}")
