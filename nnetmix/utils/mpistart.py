"""An mpiexec that failed to start: recognising it, and knowing that no rank ran.

Open MPI 5's mpiexec on the loaded 2-core machine fails now and then before it starts any rank,
printing only its banner ("The PMIx server's listener thread failed to start. We cannot
continue.", exit code 213; seen in two of the test suite's full runs, stops 24 and 27). Nothing
of the job ran, so the job can simply be started again; a job whose ranks ran must never be (a
real failure fails at once, with its own error). This module holds the one definition of such
start-up failures, for the job wrapper's retry (:mod:`nnetmix.utils.jobs`), its failure summary
(:mod:`nnetmix.utils.rankstatus`) and the tests' own mpiexec launches (tests/helpers.py):

* :data:`START_FAILURES`: the launcher messages that mean "failed before any rank started";
  add a new one here and every user follows;
* :func:`start_failure`: which of them a text holds (the banner is wrapped at 72 columns, so any
  whitespace may be a newline);
* :func:`only_banner`: whether a launch's whole output is such a banner (no rank wrote anything);
* :func:`nothing_ran`: whether a job log shows that no rank ran: the log between the wrapper's
  header and footer holds only the launcher's banner, and no rank log or rank record of the job
  was written since it started;
* :func:`start_retries`: how many times to start a job again (``$NNETMIX_MPI_START_RETRIES``,
  default 1; 0 turns the retry off).
"""
from __future__ import annotations

import glob
import os
import re
from typing import Mapping, Optional

from nnetmix.options import env_number

__all__ = ["START_FAILURES", "RETRIES_ENV", "DEFAULT_RETRIES", "start_failure", "job_output",
           "only_banner", "nothing_ran", "start_retries"]

#: launcher messages printed when mpiexec could not start the job, before any rank ran
START_FAILURES = (
    # Open MPI 5 (PMIx's help-pmix-server.txt, [listener-thread-start]); mpiexec exits 213
    "The PMIx server's listener thread failed to start. We cannot continue.",
)

#: the environment variable that sets how many times a job that failed to start is started again
RETRIES_ENV = "NNETMIX_MPI_START_RETRIES"
DEFAULT_RETRIES = 1

_RULE = re.compile(r"^-{10,}$")  # the banner's rules
_FOOTER = re.compile(r"# Accounting: time=\d+ threads=\d+\n# Ended \([^)]*\) at [^\n]*\n?\Z")


def _squash(text: str) -> str:
    return " ".join(text.split())


def start_failure(text: str) -> Optional[str]:
    """The message of :data:`START_FAILURES` that ``text`` (launcher output) holds, else None."""
    flat = _squash(text)
    for msg in START_FAILURES:
        if _squash(msg) in flat:
            return msg
    return None


def job_output(log_text: str) -> str:
    """What the job itself wrote into a job wrapper's log: the text between utils/run.py's
    header (``# command``, ``# Started at ...``, ``#``) and its footer (``# Accounting: ...``,
    ``# Ended ...``)."""
    lines = log_text.splitlines(keepends=True)
    if len(lines) >= 3 and lines[0].startswith("# ") and lines[1].startswith("# Started at ") \
            and lines[2] == "#\n":
        lines = lines[3:]
    # the footer follows the job's last byte, which need not be a newline
    return _FOOTER.sub("", "".join(lines))


def only_banner(output: str) -> bool:
    """True when ``output`` is nothing but start-up failure banners: the messages and the rules
    of dashes around them."""
    flat = _squash(output)
    found = False
    for msg in START_FAILURES:
        found = found or _squash(msg) in flat
        flat = flat.replace(_squash(msg), " ")
    return found and all(_RULE.match(w) for w in flat.split())


def nothing_ran(job_log: str, since: float) -> bool:
    """Whether the job logging to ``job_log``, started at wall-clock time ``since``, failed to
    start without running any rank: its log holds only a start-up failure's banner between the
    wrapper's header and footer, and no rank log (``<stem>.rankR.log``) or rank record
    (``<stem>.rankR.status``) beside it was written since it started."""
    try:
        with open(job_log, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return False
    if not only_banner(job_output(text)):
        return False
    stem = job_log[:-4] if job_log.endswith(".log") else job_log
    for path in glob.glob(glob.escape(stem) + ".rank*"):
        try:
            if os.path.getmtime(path) >= since - 1.0:
                return False
        except OSError:
            continue
    return True


def start_retries(env: Optional[Mapping[str, str]] = None) -> int:
    """``$NNETMIX_MPI_START_RETRIES`` (a count >= 0), else :data:`DEFAULT_RETRIES`; raises
    UsageError on anything else."""
    return env_number(os.environ if env is None else env, RETRIES_ENV, DEFAULT_RETRIES, int,
                      "a count >= 0")
