"""MPI_Init under a deadline: a rank that cannot finish MPI_Init ends with one line, not a hang.

Open MPI's MPI_Init can wait forever: a launcher (its PMIx server) that accepts the rank's
connection and never answers, a job whose start-up broke half way (a file-size limit that
breaks Open MPI's shared memory, a daemon stopped under it); mpiexec then prints nothing, or
"Abort is in progress", and never ends (issue 34). The ranks' watchdog
(:class:`nnetmix.parallel.failure.Watchdog`) can only start once MPI runs, and a Python thread
cannot stand in for it here: mpi4py holds the GIL through MPI_Init (checked with mpi4py 4.1.2
and Open MPI 5.0: a ``threading.Timer`` never fires while MPI_Init waits).

So :func:`import_mpi` (the one way nnetmix imports ``mpi4py.MPI``, whose import runs MPI_Init)
first forks a watcher process. The rank tells it through a pipe when MPI_Init has returned;
if that does not come within ``$NNETMIX_MPI_INIT_TIMEOUT`` seconds (default
:data:`DEFAULT_TIMEOUT_S`; 0 turns the watcher off), the watcher writes one ERROR line to the
rank's stderr (the job log) naming the rank, its pid and host and the deadline, then ends the
rank (SIGTERM, SIGKILL :data:`GRACE_S` seconds later). mpiexec ends a job whose rank exited
before MPI_Init completed, and the job wrapper (utils/run.py) names the rank from its log. A
rank that dies on its own closes the pipe, and the watcher leaves quietly. The watcher is a
grandchild (double fork), so no zombie is left for the rank to reap, and it ignores Ctrl-C,
which the terminal sends to the rank's whole process group: the rank reports it, once.
"""
from __future__ import annotations

import os
import select
import signal
import socket
import sys
from typing import Any, Mapping, Optional

from nnetmix import __version__
from nnetmix.options import env_number

__all__ = ["TIMEOUT_ENV", "DEFAULT_TIMEOUT_S", "GRACE_S", "init_timeout", "launcher_rank_env",
           "import_mpi"]

#: the environment variable holding MPI_Init's deadline in seconds (0: no deadline)
TIMEOUT_ENV = "NNETMIX_MPI_INIT_TIMEOUT"
#: MPI_Init's default deadline: a healthy start takes a few seconds even on a loaded machine
DEFAULT_TIMEOUT_S = 300.0
#: seconds between the watcher's SIGTERM and its SIGKILL
GRACE_S = 5.0


def init_timeout(env: Optional[Mapping[str, str]] = None) -> float:
    """``$NNETMIX_MPI_INIT_TIMEOUT`` (seconds >= 0), else :data:`DEFAULT_TIMEOUT_S`; raises
    UsageError on anything else."""
    return env_number(os.environ if env is None else env, TIMEOUT_ENV, DEFAULT_TIMEOUT_S, float,
                      "seconds >= 0 (0: no deadline)")


def launcher_rank_env(env: Optional[Mapping[str, str]] = None) -> str:
    """This process's rank as its launcher set it before MPI_Init (``?`` when not launched)."""
    env = os.environ if env is None else env
    for key in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"):
        if env.get(key, "").strip():
            return env[key].strip()
    return "?"


def _prog() -> str:
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"


def _watch(rfd: int, rank_pid: int, timeout: float, line: str) -> None:
    """The watcher's whole life (in the grandchild): wait for the pipe, else end the rank."""
    ready, _, _ = select.select([rfd], [], [], timeout)
    if ready:  # MPI_Init returned (a byte) or the rank ended (end of file)
        return
    try:
        os.write(2, (line + "\n").encode())
    except OSError:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(rank_pid, sig)
        except OSError:
            return
        ready, _, _ = select.select([rfd], [], [], GRACE_S)
        if ready:  # the rank is gone: its end of the pipe closed
            return


def _start_watcher(timeout: float) -> int:
    """Fork the watcher; returns the write end of the pipe that tells it MPI_Init returned."""
    rank_pid = os.getpid()
    line = (f"ERROR ({_prog()}[{__version__}]:import_mpi():mpi_init.py) rank "
            f"{launcher_rank_env()} (pid {rank_pid} on {socket.gethostname()}): MPI_Init did "
            f"not complete in {timeout:g} s (the launcher or Open MPI's start-up failed; see "
            f"the lines above; {TIMEOUT_ENV} sets the deadline); ending this rank")
    rfd, wfd = os.pipe()
    # Ctrl-C reaches the whole process group: the watcher ignores it (the rank's handler would
    # print the rank's interrupt line a second time); blocked around the forks, so one that
    # comes meanwhile is the rank's alone
    quiet = {signal.SIGINT, signal.SIGQUIT}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, quiet)
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        raise
    if pid == 0:  # child: fork the watcher and leave at once, so the rank reaps us now
        code = 0
        try:
            if os.fork() == 0:
                try:
                    for sig in quiet:
                        signal.signal(sig, signal.SIG_IGN)
                    signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
                    os.close(wfd)
                    os.closerange(3, rfd)
                    os.closerange(rfd + 1, 1 << 16)
                    _watch(rfd, rank_pid, timeout, line)
                finally:
                    os._exit(0)
        except BaseException:
            code = 1
        os._exit(code)
    signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    os.close(rfd)
    os.waitpid(pid, 0)
    return wfd


def import_mpi() -> Any:
    """``mpi4py.MPI`` (importing it runs MPI_Init), with MPI_Init under the deadline of
    :func:`init_timeout` (module docstring). Later calls return the module at once."""
    mod = sys.modules.get("mpi4py.MPI")
    if mod is not None:
        return mod
    timeout = init_timeout()
    wfd = _start_watcher(timeout) if timeout > 0 and hasattr(os, "fork") else -1
    try:
        from mpi4py import MPI
    finally:
        if wfd >= 0:
            try:
                os.write(wfd, b"1")
            except OSError:
                pass
            os.close(wfd)
    return MPI



def __getattr__(name: str) -> Any:
    """``from nnetmix.utils.mpi_init import MPI``: :func:`import_mpi` (PEP 562)."""
    if name == "MPI":
        return import_mpi()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
