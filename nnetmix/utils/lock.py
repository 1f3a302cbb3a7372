"""One job per experiment directory: the lock every step, the scheduler and the MPI tools take.

Two trainings into one ``exp/`` directory overwrite each other's models and logs and can both
exit 0 (issue 15), and Kaldi has no guard against it. A directory is locked by the file
``<dir>/.lock``, one line of JSON naming the holder::

    {"host": "node1", "pid": 4242, "proc_start": "81723", "start": "2026-11-24 16:50:01",
     "command": "steps/nnet/train.sh ... exp/dnn", "token": "9f1c..."}

* **Taking it** is atomic: the JSON goes to a temporary file that is then hard-linked to
  ``.lock`` (``link`` fails when ``.lock`` exists, also over NFS, and the file is never seen
  half-written, as it could be with ``O_CREAT|O_EXCL`` then a write). Taking over a stale lock
  happens under an ``fcntl.flock`` of ``<dir>/.lock.guard`` so that two newcomers cannot both
  take it.
* **One job, many processes**: the holder's ``token`` is exported as ``$NNETMIX_LOCK_TOKEN``, so
  what the job starts (train.sh -> utils/run.py -> the scheduler -> mpiexec -> the ranks) finds
  the lock its own and goes on (re-entrant); a lock held on a directory above (``exp/dnn`` for
  a model written to ``exp/dnn/nnet/``) covers the directories below it.
* **Stale locks** are taken over with a WARNING only when it is certain that the job is gone:
  same host, the recorded process is gone (or its pid now belongs to a process started at
  another time), and no process on this host carries the lock's token (an orphan of the job,
  e.g. a scheduler whose train.sh was killed, keeps the lock alive). A lock written on another
  host is never taken over: this host cannot see that host's processes, and taking a live
  job's directory is the failure this lock exists to prevent; the error says to remove the
  file by hand once that job is known to be gone.
"""
from __future__ import annotations

import dataclasses
import errno
import json
import logging
import os
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Optional, Sequence

from nnetmix.errors import NnetmixError

__all__ = ["LOCK_NAME", "TOKEN_ENV", "DirLockedError", "Holder", "DirLock", "lock_dir",
           "process_start"]

logger = logging.getLogger(__name__)

LOCK_NAME = ".lock"
GUARD_NAME = ".lock.guard"
#: the lock token of the job this process belongs to (set by the outermost holder)
TOKEN_ENV = "NNETMIX_LOCK_TOKEN"
#: how long the processes of a job whose holder is gone may take to exit before they count as
#: running on (a killed job's MPI ranks end a moment after the killed process)
ORPHAN_WAIT_S = 5.0


class DirLockedError(NnetmixError):
    """The directory is locked by another job (or its lock cannot be read)."""


def process_start(pid: int) -> str:
    """The start time of process ``pid`` in clock ticks since boot (field 22 of
    /proc/<pid>/stat), which with the pid names one process even after the pid is reused;
    "" where /proc is absent or the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2:].split()  # the command name may hold spaces
    return fields[19] if len(fields) > 19 and fields[0] != "Z" else ""


@dataclasses.dataclass
class Holder:
    """The job holding a directory, as written in its lock file."""

    host: str
    pid: int
    start: str
    """Local time the lock was taken, for people."""
    command: str
    token: str
    proc_start: str = ""
    """:func:`process_start` of ``pid`` when it took the lock ("" off Linux)."""

    def describe(self) -> str:
        return (f"host {self.host}, pid {self.pid}, started {self.start}, "
                f"command '{self.command}'")

    def process_alive(self) -> bool:
        """Whether the recorded process (not a later one with the same pid) is running; only
        meaningful on the holder's host."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        now = process_start(self.pid)
        if os.path.isdir("/proc") and not now:
            return False  # a zombie, or gone since
        return not self.proc_start or not now or now == self.proc_start


def _job_process(token: str) -> Optional[int]:
    """A process on this host carrying ``token`` in its environment (None if none is seen)."""
    needle = f"{TOKEN_ENV}={token}".encode()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            continue
        if needle in env and process_start(pid):
            return pid
    return None


def _read_holder(path: Path) -> Optional[Holder]:
    """The holder in ``path``; None when the file is gone; DirLockedError when unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DirLockedError(f"{path}: cannot read the lock ({e.strerror})") from None
    try:
        d = json.loads(text)
        return Holder(host=str(d["host"]), pid=int(d["pid"]), start=str(d["start"]),
                      command=str(d["command"]), token=str(d["token"]),
                      proc_start=str(d.get("proc_start", "")))
    except (ValueError, KeyError, TypeError):
        raise DirLockedError(f"{path}: not a lock file written by nnetmix (remove it if no job "
                             "is using the directory)") from None


class DirLock:
    """The lock of one directory (module docstring); use :func:`lock_dir` or ``with``."""

    def __init__(self, directory: str | os.PathLike, command: Optional[str] = None,
                 pid: Optional[int] = None):
        self.dir = Path(directory)
        self.path = self.dir / LOCK_NAME
        self.pid = os.getpid() if pid is None else int(pid)
        self.command = command if command is not None else " ".join(sys.argv)
        self.token = os.environ.get(TOKEN_ENV) or uuid.uuid4().hex
        self.owner = False
        """True when this object wrote the lock (and so removes it); False when re-entrant."""
        self._set_env = False

    # -- taking and giving back ------------------------------------------------------------
    def acquire(self) -> "DirLock":
        """Take the lock, or join the job holding it (re-entrant), or raise DirLockedError."""
        self.dir.mkdir(parents=True, exist_ok=True)
        for parent in list(self.dir.resolve().parents)[:-1]:  # a lock above covers this one
            above = _read_holder_quiet(parent / LOCK_NAME)
            if above is not None and above.token != self.token and self._live(above):
                raise DirLockedError(self._busy_message(parent, above))
            if above is not None and above.token == self.token:
                return self._joined()
        me = Holder(host=socket.gethostname(), pid=self.pid,
                    start=time.strftime("%Y-%m-%d %H:%M:%S"), command=self.command,
                    token=self.token, proc_start=process_start(self.pid))
        tmp = self.dir / f"{LOCK_NAME}.{me.host}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(dataclasses.asdict(me)) + "\n", encoding="utf-8")
        try:
            while not self._link(tmp):
                held = _read_holder(self.path)
                if held is None:
                    continue  # released between our link and our read: try again
                if held.token == self.token:
                    return self._joined()
                if self._live(held):
                    raise DirLockedError(self._busy_message(self.dir, held))
                self._take_over(held)
        finally:
            tmp.unlink(missing_ok=True)
        self.owner = True
        if not os.environ.get(TOKEN_ENV):
            os.environ[TOKEN_ENV] = self.token  # what this process starts belongs to the job
            self._set_env = True
        return self

    def release(self) -> None:
        """Remove the lock if this object took it and it is still ours."""
        if not self.owner:
            return
        self.owner = False
        if self._set_env:
            os.environ.pop(TOKEN_ENV, None)
            self._set_env = False
        try:
            held = _read_holder(self.path)
        except DirLockedError:
            return
        if held is not None and held.token == self.token and held.pid == self.pid:
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> "DirLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    # -- the parts ---------------------------------------------------------------------------
    def _joined(self) -> "DirLock":
        logger.debug("%s: held by this job already (token %s)", self.dir, self.token)
        self.owner = False
        return self

    def _link(self, tmp: Path) -> bool:
        try:
            os.link(tmp, self.path)
            return True
        except FileExistsError:
            return False
        except OSError as e:
            if e.errno in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):  # no hard links here
                try:
                    fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                except FileExistsError:
                    return False
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(tmp.read_text(encoding="utf-8"))
                return True
            raise DirLockedError(f"{self.path}: cannot create the lock ({e.strerror})") from None

    def _live(self, held: Holder) -> bool:
        """Whether the holding job may still be running (module docstring: the stale rule).
        When only processes of the job other than the holder are left they may be dying (a
        killed job's ranks take a moment), so they get ORPHAN_WAIT_S seconds to go."""
        if held.host != socket.gethostname():
            return True
        if held.process_alive():
            return True
        deadline = time.monotonic() + ORPHAN_WAIT_S
        while _job_process(held.token) is not None:
            if time.monotonic() > deadline:
                return True
            time.sleep(0.2)
        return False

    def _take_over(self, held: Holder) -> None:
        """Remove a stale lock, under the guard so that only one newcomer removes it."""
        import fcntl  # optional: POSIX only; the guard is needed only to take over

        with open(self.dir / GUARD_NAME, "a") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            try:
                again = _read_holder(self.path)
                if again is not None and again.token == held.token and again.pid == held.pid:
                    logger.warning("%s: taking over the lock of a job that is gone (%s)",
                                   self.dir, held.describe())
                    self.path.unlink(missing_ok=True)
            finally:
                fcntl.flock(guard, fcntl.LOCK_UN)

    def _busy_message(self, where: Path, held: Holder) -> str:
        what = f"{where} is in use by another job: {held.describe()}"
        lock = where / LOCK_NAME
        if held.host != socket.gethostname():
            return (f"{what} (on another host, so this one cannot tell whether it still runs; "
                    f"if it does not, remove {lock})")
        orphan = None if held.process_alive() else _job_process(held.token)
        if orphan is not None:
            return (f"{what}; pid {held.pid} is gone but pid {orphan} of that job still runs "
                    f"(stop it, or wait for it to end)")
        return f"{what} (wait for it to end, or stop it)"


def _read_holder_quiet(path: Path) -> Optional[Holder]:
    try:
        return _read_holder(path)
    except DirLockedError:
        return None


def lock_dir(directory: str | os.PathLike, command: Optional[str | Sequence[str]] = None,
             pid: Optional[int] = None) -> DirLock:
    """Take the lock of ``directory`` for this process (``pid``: for another, e.g. the bash
    step that called bin/lock-dir.py); returns the held :class:`DirLock`."""
    if command is not None and not isinstance(command, str):
        command = " ".join(command)
    return DirLock(directory, command, pid).acquire()
