# Copyright 2026 nnetmix authors. Apache 2.0.
"""Pid files of the processes a campaign driver starts (a run's ``run.sh``, the prerequisites'
build), so that a second driver on the same work directory leaves them alone while they live,
and a file left by a driver killed outright does not block them for ever.

A pid file holds ``pid driver-pid stamp``: the stamp is the process's boot and start time
(:func:`process_stamp`), which a later process given the same pid does not share.
"""
from __future__ import annotations

import os
import signal
from pathlib import Path

__all__ = ["process_stamp", "alive", "write_pid", "owner", "end_groups"]


def process_stamp(pid: int) -> str:
    """The boot and the start time of process ``pid`` (Linux's /proc), which a later process
    given the same pid (after a reboot, or a wrap of the pid counter) does not share; '' where
    /proc lacks them."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        stat = Path(f"/proc/{pid}/stat").read_text()
        return f"{boot}:{stat[stat.rindex(')') + 2:].split()[19]}"    # field 22, starttime
    except (OSError, ValueError, IndexError):
        return ""


def write_pid(pid_file: Path, pid: int) -> None:
    """Name process ``pid`` (started by this driver) in ``pid_file``."""
    tmp = pid_file.with_name(pid_file.name + ".tmp")
    tmp.write_text(f"{pid} {os.getpid()} {process_stamp(pid) or '-'}\n")
    tmp.replace(pid_file)


def owner(pid_file: Path) -> int:
    """The pid a pid file names while that process lives (the same one: its stamp, where the
    file has one); 0 when it has ended, or the file is missing or unreadable."""
    try:
        fields = pid_file.read_text().split()
        pid = int(fields[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return 0
    return pid if len(fields) < 3 or fields[2] in ("-", process_stamp(pid)) else 0


def alive(pid_file: Path) -> bool:
    """Whether the process a pid file names still runs (see :func:`owner`)."""
    return owner(pid_file) != 0


def end_groups(procs: list) -> None:
    """SIGTERM to the process groups the ``procs`` lead (each started with
    ``start_new_session``), then wait for each to end. Safe in a signal handler: it waits with
    ``os.waitpid``, not ``Popen.wait``, whose lock the interrupted main code may hold (a second
    signal, or one that came during ``poll``, would wait on it for ever)."""
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for proc in procs:
        try:
            os.waitpid(proc.pid, 0)
        except ChildProcessError:      # reaped already (by a poll the signal interrupted)
            pass
