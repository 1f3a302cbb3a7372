"""Why an MPI job ended: the record each rank keeps beside its log, and the one-line summary.

When one rank of ``mpiexec -n N tool`` dies, the job log fills with what the others did as they
were torn down (closed pipes, aborted collectives), and the rank that started it is named only in
the launcher's own banner. So every rank of an nnetmix MPI tool keeps a small JSON record beside
its log (``log/iter02.tr.rank1.log`` -> ``log/iter02.tr.rank1.status``, :class:`RankRecord`):
its rank, host, pid and log when it starts, a heartbeat and its last progress while it trains
(the watchdog's thread writes them), and how it ended (exit code, the error, and the rank it
blames: itself, or a peer its watchdog found hung). A rank killed by a signal cannot write its
end; Open MPI's mpiexec names it (``process rank 1 with PID 10570 on node vm exited on signal 9``)
and exits 128 + the signal, and the record with that pid gives the log to read.

:func:`summarise_mpi_failure` turns the records, mpiexec's exit code and its banner into the line
a user reads first (``MPI rank 1 on host vm (pid 10570) was killed by signal 9 (SIGKILL); see
log/iter02.tr.rank1.log``) and the other ERROR lines of the job, marked as consequences. The
job wrapper (utils/run.py --num-tasks), the DNN scheduler and the tools' watchdog use it.
"""
from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
import signal
from typing import Optional

from nnetmix.utils.mpistart import start_failure

__all__ = ["RankRecord", "status_path", "status_pattern", "write_record", "read_record",
           "read_records", "LauncherReport", "launcher_report", "MpiFailure",
           "summarise_mpi_failure", "signal_name"]


@dataclasses.dataclass
class RankRecord:
    """One rank's record (``<rank log stem>.status``, JSON)."""

    rank: int
    size: int
    host: str
    pid: int
    log: str                        #: this rank's log file
    started: float                  #: wall-clock time.time() at start
    state: str = "running"          #: running | done | failed
    alive: float = 0.0              #: last heartbeat (wall clock), written by the watchdog thread
    progress: float = 0.0           #: last progress mark (minibatch, utterance read)
    marks: int = 0                  #: progress marks so far
    limit: float = 0.0              #: the watchdog's limit then (0: no watchdog)
    exit: Optional[int] = None      #: the exit code it ended with (None: it did not say)
    error: str = ""                 #: its error message (failed)
    blame: Optional[dict] = None    #: {rank, host, pid, log, why}: the rank it found at fault

    def who(self) -> str:
        return f"MPI rank {self.rank} on host {self.host} (pid {self.pid})"


def status_path(rank_log: str) -> str:
    """The record beside a rank log: ``x.rank1.log`` -> ``x.rank1.status``."""
    return (rank_log[:-4] if rank_log.endswith(".log") else rank_log) + ".status"


def status_pattern(job_log: str) -> str:
    """The glob of the records of a job run with ``NNETMIX_TASK_LOG=job_log``."""
    stem = job_log[:-4] if job_log.endswith(".log") else job_log
    return glob.escape(stem) + ".rank*.status"


def write_record(path: str, rec: RankRecord) -> None:
    """Rewrite the record atomically (a reader never sees half of one)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(dataclasses.asdict(rec), fh)
        fh.write("\n")
    os.replace(tmp, path)


def read_record(path: str) -> Optional[RankRecord]:
    """The record at ``path``; None when it is absent or not a record (a reader must cope with
    a rank that never started)."""
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        return RankRecord(**{f.name: d[f.name] for f in dataclasses.fields(RankRecord)
                             if f.name in d})
    except (OSError, ValueError, TypeError):
        return None


def read_records(job_log: str, since: float = 0.0) -> dict[int, RankRecord]:
    """The records of the ranks of the job logging to ``job_log``, started at or after ``since``
    (older ones belong to an earlier run of the same log name)."""
    out: dict[int, RankRecord] = {}
    for p in glob.glob(status_pattern(job_log)):
        rec = read_record(p)
        if rec is not None and rec.started >= since - 1.0:
            out[rec.rank] = rec
    return out


def signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


@dataclasses.dataclass
class LauncherReport:
    """What mpiexec's banner says about the rank that ended the job (None: not said)."""

    rank: Optional[int] = None
    pid: Optional[int] = None
    host: str = ""
    signal: Optional[int] = None
    exit: Optional[int] = None


# Open MPI 4 ("mpiexec noticed that ...") and 5 ("prterun noticed that ..."); the banner is
# wrapped at 72 columns, so any whitespace may be a newline.
_SIGNALLED = re.compile(r"process\s+rank\s+(\d+)\s+with\s+PID\s+(\d+)\s+on\s+node\s+(\S+)\s+"
                        r"exited\s+on\s+signal\s+(\d+)")
_EXITED = re.compile(r"Process\s+name:\s+\[[^\]]*?(\d+)\]\s+Exit\s+code:\s+(\d+)")


def launcher_report(text: str) -> LauncherReport:
    """Open MPI's banner about the first rank to die (signal) or exit non-zero, from the job
    log; an empty report for any other launcher."""
    m = _SIGNALLED.search(text)
    if m:
        # "with PID 0": mpiexec did not learn the rank's pid (a rank whose features come
        # through a pipe, under the scheduler); the rank's own record names it
        return LauncherReport(int(m.group(1)), int(m.group(2)) or None, m.group(3),
                              signal=int(m.group(4)))
    m = _EXITED.search(text)
    if m:
        return LauncherReport(int(m.group(1)), exit=int(m.group(2)))
    return LauncherReport()


@dataclasses.dataclass
class MpiFailure:
    """The summary of a failed MPI job: ``line`` first, then ``consequences``."""

    line: str
    rank: Optional[int] = None
    consequences: list[str] = dataclasses.field(default_factory=list)
    records: int = 0                #: ranks that left a record (0: not an nnetmix MPI tool)
    launcher: bool = False          #: mpiexec's banner named a rank

    def text(self) -> str:
        """The line, then each consequence on its own line marked as one."""
        return "\n".join([self.line] + [f"  consequence: {c}" for c in self.consequences])


def _error_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return [ln.rstrip("\n") for ln in fh if ln.startswith("ERROR")]
    except OSError:
        return []


def _see(log: str, job_log: str, rc: int) -> str:
    return f"; see {log} (job log {job_log}, exit code {rc})" if log else \
        f"; see {job_log} (exit code {rc})"


def summarise_mpi_failure(job_log: str, rc: int, since: float = 0.0) -> MpiFailure:
    """The first line of a failed MPI job's error, naming the rank, its host, how it ended and
    its log, from (in this order of trust): a rank killed by a signal as mpiexec reports it
    (128 + the signal is its exit code) matched to that rank's record; the rank a failed record
    blames (a rank's own error, or a peer its watchdog found hung); mpiexec's start-up failure
    (:mod:`nnetmix.utils.mpistart`) when no rank left a record; mpiexec's exit code alone.
    Every ERROR line of the job and rank logs other than the cause's follows as a consequence.
    """
    try:
        with open(job_log, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        text = ""
    recs = read_records(job_log, since)
    rep = launcher_report(text)
    line, rank = "", None
    if rep.rank is not None and (rep.signal is not None or rep.exit is not None):
        rec = recs.get(rep.rank)
        if rec is not None and rep.pid is not None and rec.pid != rep.pid:
            rec = None  # the banner is about another run's process
        host = rec.host if rec is not None else rep.host or "?"
        pid = rec.pid if rec is not None else rep.pid
        how = (f"was killed by signal {rep.signal} ({signal_name(rep.signal)})"
               if rep.signal is not None else f"exited with status {rep.exit}")
        if rec is not None and rec.state == "failed" and rec.error:
            how += f" after: {rec.error}"
        rank = rep.rank
        line = (f"MPI rank {rank} on host {host}" + (f" (pid {pid})" if pid else "") + f" {how}"
                + _see(rec.log if rec is not None else "", job_log, rc))
    if not line:
        failed = sorted((r for r in recs.values() if r.state == "failed"),
                        key=lambda r: (r.blame is None, r.rank))
        if failed:
            f = failed[0]
            b = f.blame or {"rank": f.rank, "host": f.host, "pid": f.pid, "log": f.log,
                            "why": f"failed: {f.error}"}
            rank = int(b["rank"])
            line = (f"MPI rank {rank} on host {b['host']} (pid {b['pid']}) {b['why']}"
                    + _see(b.get("log", ""), job_log, rc))
    if not line and not recs and start_failure(text):
        line = (f"mpiexec failed to start the job (\"{start_failure(text)}\"), no rank ran; "
                f"see {job_log} (exit code {rc})")
    if not line:
        how = (f"a rank was killed by signal {rc - 128} ({signal_name(rc - 128)})"
               if 128 < rc < 160 else f"exit code {rc}")
        unfinished = sorted(r.rank for r in recs.values() if r.state == "running")
        line = (f"the MPI job failed ({how}) and no rank said why"
                + (f" (ranks without an end record: {', '.join(map(str, unfinished))})"
                   if unfinished else "") + f"; see {job_log}")
    # the cause's own words (the failed rank's error, a watchdog's report naming it) are not
    # consequences
    causes = [r.error for r in recs.values() if r.error and rank is not None
              and (r.rank == rank or (r.blame or {}).get("rank") == rank)]
    seen, consequences = set(), []
    for path in [job_log] + [recs[r].log for r in sorted(recs)]:
        for ln in _error_lines(path):
            if ln not in seen and not any(c in ln for c in causes):
                seen.add(ln)
                consequences.append(ln)
    return MpiFailure(line, rank, consequences, len(recs), rep.rank is not None)
