"""The process between the job wrapper and a job: when the wrapper dies, the whole job ends.

``kill -9`` of utils/run.py left the scheduler, mpiexec and the MPI ranks running, finishing
the training behind the user's back and racing a resumed run (issue 15). SIGKILL cannot be
caught, so the job has to notice by itself. utils/run.py (:func:`nnetmix.utils.jobs.run_job`)
starts every job as ``python guard.py <fd> -- <command...>``, where ``<fd>`` is the read end of
a pipe whose write end only the wrapper holds: the kernel closes it when the wrapper dies,
however it dies, and the guard sees end-of-file. The guard then ends its whole process tree:
SIGTERM to every descendant (mpiexec passes it to its ranks), SIGKILL to what is left after
GRACE_S seconds.

Why this and not the alternatives: ``PR_SET_PDEATHSIG`` fires when the *thread* that forked
the child ends (utils/run.py forks from pool threads) and reaches only the direct child, not
mpiexec's ranks; a process group is left by processes that call setsid/setpgid and is not
signalled when its leader dies. The guard is a Linux child subreaper
(``PR_SET_CHILD_SUBREAPER``), so processes orphaned inside the job (mpiexec when the scheduler
dies first) stay its descendants, found through /proc. SIGTERM or SIGHUP to the guard ends the
tree the same way, and the wrapper turns its own SIGINT or SIGTERM into a SIGTERM to each
guard, so an interrupted wrapper stops its jobs
cleanly. When the command ends by itself, any process it left behind is ended too. The guard
exits as its command did (the same code, or killed by the same signal). With ``--rmtree DIR``
it removes the job's temporary directory (an MPI job's $TMPDIR, where Open MPI keeps its session
files) once every process is gone, also when the wrapper was killed.

Standard library only, and run as a file (not ``-m``), so it starts fast and needs no
installed nnetmix.
"""
from __future__ import annotations

import os
import select
import signal
import sys
import time

__all__ = ["GRACE_S", "descendants", "main"]

#: seconds between SIGTERM and SIGKILL when ending a job's processes
GRACE_S = 5.0
#: the longest wait between two looks at the job's processes (a signal ends a wait at once)
POLL_S = 0.2
_PR_SET_CHILD_SUBREAPER = 36


def _set_subreaper() -> None:
    try:
        import ctypes  # optional: Linux only; without it orphans escape to init

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def descendants(root: int) -> list[int]:
    """The live (not zombie) descendants of ``root``, from /proc (parents before children)."""
    kids: dict[int, list[int]] = {}
    try:
        entries = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    for p in entries:
        try:
            with open(f"/proc/{p}/stat", "rb") as fh:
                stat = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[0] != "Z":
            kids.setdefault(int(fields[1]), []).append(int(p))
    out, todo = [], [root]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def _drain(fd: int) -> None:
    """Read the non-blocking pipe ``fd`` empty."""
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _signal_all(pids: list[int], sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    scratch = None
    if len(argv) > 3 and argv[1] == "--rmtree":
        scratch, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: guard.py <pipe-fd> [--rmtree <dir>] -- <command> [args...]\n")
        return 2
    fd: int | None = int(argv[0])
    command = argv[2:]
    _set_subreaper()
    me = os.getpid()
    stop: list[str] = []

    def on_signal(signum, frame):
        stop.append(signal.Signals(signum).name)

    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    # every signal (SIGCHLD above all) writes a byte to this pipe, so the select below returns
    # when the command ends instead of at its next timeout: a recipe runs thousands of jobs, and
    # waiting for the timeout made utils/run.py of `true` take 0.31 s against 0.11 s now
    wake, woken = os.pipe()
    os.set_blocking(wake, False)
    os.set_blocking(woken, False)
    signal.set_wakeup_fd(woken, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    # Ctrl-C reaches the command too (same process group) and the wrapper follows with SIGTERM;
    # a handler, not SIG_IGN, which the command would inherit
    signal.signal(signal.SIGINT, lambda signum, frame: None)
    child = os.fork()
    if child == 0:
        os.close(fd)
        try:
            os.execvp(command[0], command)
        except OSError as e:
            sys.stderr.write(f"guard.py: {command[0]}: {e.strerror}\n")
        os._exit(127)
    status = None
    deadline = None
    signalled: set[int] = set()
    killed = False
    while True:
        while True:  # reap the command and any orphan handed to this subreaper
            try:
                pid, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == child:
                status = st
        if deadline is None and (stop or status is not None):
            deadline = time.monotonic() + GRACE_S
        if deadline is not None:
            left = descendants(me)
            if not left and status is not None:
                break
            if time.monotonic() < deadline:
                _signal_all([p for p in left if p not in signalled], signal.SIGTERM)
                signalled.update(left)
            elif not killed:
                _signal_all(left, signal.SIGKILL)
                killed = True
            elif time.monotonic() > deadline + GRACE_S:
                break  # unkillable (in D state): give up, the wrapper is waiting
        ready = select.select([wake] if fd is None else [wake, fd], [], [], POLL_S)[0]
        if wake in ready:
            _drain(wake)
        if fd in ready and not os.read(fd, 1):
            os.close(fd)
            fd = None
            sys.stderr.write("guard.py: the job wrapper is gone (killed?): ending the job\n")
            stop.append("wrapper gone")
    if scratch:  # the job's temporary directory (MPI's session files), however it ended
        import shutil  # optional: only jobs with a scratch directory need it

        shutil.rmtree(scratch, ignore_errors=True)
    if status is None:
        return 128 + signal.SIGKILL
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(me, sig)  # end as the command did, so the wrapper logs the same signal
        return 128 + sig
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
