"""Job wrappers (Kaldi's run.pl convention) and other script-side utilities."""
from nnetmix.utils.jobs import (JobSpec, default_max_jobs, failure_message, join_command,
                                parse_job_args, run_job, run_jobs)

__all__ = ["JobSpec", "default_max_jobs", "failure_message", "join_command", "parse_job_args",
           "run_job", "run_jobs"]
