"""Grid Engine: qsub/qstat/qdel, as Kaldi's queue.pl uses them."""
from __future__ import annotations

from nnetmix.utils.cluster.scheduler import Scheduler, run_quietly

__all__ = ["GridEngine", "GRID_ENGINE_DEFAULT_CONFIG"]

GRID_ENGINE_DEFAULT_CONFIG = """\
# Default configuration (Kaldi's queue.pl default)
command qsub -v PATH -cwd -S /bin/bash -j y -l arch=*64*
option mem=* -l mem_free=$0,ram_free=$0
option mem=0          # Do not add anything to qsub_opts
option num_threads=*
option num_threads=1  # Do not add anything to qsub_opts
option max_jobs_run=* -tc $0
default gpu=0
option gpu=0
option gpu=*
"""


class GridEngine(Scheduler):
    """qsub/qstat/qdel, as queue.pl uses them."""

    def __init__(self):
        super().__init__(name="queue", config_path="conf/queue.conf",
                         default_config=GRID_ENGINE_DEFAULT_CONFIG, task_var="SGE_TASK_ID",
                         native_arity={"-V": 0, "-pe": 2}, unknown_option_is_error=False,
                         throttle_in_array=False,
                         job_id_pattern=r"Your job\S* (\d+)[. ].+ has been submitted",
                         sync_subdir="sync")

    def array_options(self, start, end, max_jobs):
        return ["-t", f"{start}:{end}"]

    def submit_command(self, cfg, opts, qlog, array, script):
        return [*cfg.command, "-o", qlog, *opts, *array, script]

    def probe(self, job_id, tasks, array):
        p = run_quietly(["qstat", "-j", job_id])
        if p is None:
            return None
        out = p.stdout + p.stderr
        if p.returncode == 1 and "qmaster" not in out and "gdi request" not in out:
            return {t: "GONE" for t in tasks}
        return None if p.returncode != 0 else {t: "RUNNING" for t in tasks}

    def cancel(self, job_id):
        run_quietly(["qdel", job_id], timeout=15)
