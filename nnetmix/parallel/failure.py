"""When one rank fails, the whole MPI job must end, non-zero, in bounded time, saying which.

Open MPI already ends the job when a rank process DIES (a signal such as SIGKILL or an OOM
kill; measured here: mpiexec exits 137 within about 2 s). It does not when a rank raises a
Python exception: that rank exits, and the others wait forever in their next collective. So:

- :func:`run_ranks` runs a rank's main function; on an exception it writes one Kaldi-style line
  ``ERROR (prog[version]:func():file.py:line) rank R: message`` (with the traceback for errors
  that are not nnetmix user errors) and calls ``comm.Abort(1)``, which ends every rank.
- :func:`install_excepthook` does the same for an uncaught exception anywhere (and in threads).
- :class:`Watchdog` bounds the time between progress marks (``kick()`` after each mix): a rank
  stuck in a collective whose peer hangs (not dead: a deadlock, a stalled file system) aborts the
  job after ``timeout_s``, naming itself.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from typing import Any, Callable, NoReturn, Optional

from nnetmix import __version__
from nnetmix.errors import NnetmixError

__all__ = ["rank_error_line", "abort_job", "run_ranks", "install_excepthook", "run_job",
           "launcher_rank", "Watchdog"]

_log = logging.getLogger("nnetmix.parallel")


def _prog() -> str:
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"


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
        return work()
    install_excepthook(comm)
    return run_ranks(comm, work)


def launcher_rank() -> int:
    """This process's rank as the launcher (mpiexec, PMIx, Slurm's PMI) tells it, before MPI is
    initialised: tools use it to print their command line once, from rank 0."""
    for v in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"):
        if os.environ.get(v, "").isdigit():
            return int(os.environ[v])
    return 0


class Watchdog:
    """Abort the job when no :meth:`kick` came for ``timeout_s`` seconds.

    ``with Watchdog(comm, 600) as wd: ... wd.kick()`` after every mix (or minibatch). The timeout
    must exceed the longest honest gap (a validation pass, a slow first minibatch): it only has
    to turn a hang into an error. Runs a daemon thread polling every ``min(1, timeout/10)`` s.
    """

    def __init__(self, comm: Any, timeout_s: float, what: str = "no progress"):
        self.comm = comm
        self.timeout_s = float(timeout_s)
        self.what = what
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> "Watchdog":
        if self.timeout_s > 0 and self._thread is None:
            self._last = time.monotonic()
            self._thread = threading.Thread(target=self._watch, name="nnetmix-watchdog",
                                            daemon=True)
            self._thread.start()
        return self

    def kick(self) -> None:
        self._last = time.monotonic()

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
        poll = min(1.0, self.timeout_s / 10)
        while not self._stop.wait(poll):
            idle = time.monotonic() - self._last
            if idle > self.timeout_s:
                abort_job(self.comm, f"ERROR ({_prog()}[{__version__}]:watchdog():failure.py:0) "
                                     f"rank {self.comm.Get_rank()}: {self.what} for {idle:.0f} s "
                                     f"(timeout {self.timeout_s:g} s; a peer rank may have hung or "
                                     "died); aborting the job")
