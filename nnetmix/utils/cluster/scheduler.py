"""What differs between the Slurm and the Grid Engine wrapper: the :class:`Scheduler` base."""
from __future__ import annotations

import abc
import dataclasses
import subprocess
from typing import Sequence

from nnetmix.utils.cluster.config import QueueConfig

__all__ = ["Scheduler", "run_quietly"]


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


def run_quietly(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess | None:
    """A scheduler query or command: its result, or None when it could not be run at all."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
