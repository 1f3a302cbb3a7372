"""Cluster job wrappers: Kaldi's slurm.pl and queue.pl (Grid Engine) with run.pl's convention.

``slurm.py [opts] JOB=1:4 exp/x/log/name.JOB.log cmd args`` and ``queue.py ...`` take what
utils/run.py takes (:func:`nnetmix.utils.jobs.parse_job_args` parses all three and
:func:`~nnetmix.utils.jobs.join_command` joins the command as run.pl does), so cmd.sh changes
one word to move a recipe onto a cluster. As Kaldi's (egs/wsj/s5/utils/parallel/slurm.pl and
queue.pl):

- ``conf/slurm.conf`` / ``conf/queue.conf`` under the current directory (``--config FILE``
  names another; when absent, the built-in default below) holds the submit command
  (``command sbatch --export=PATH``) and maps each ``--name value`` option to scheduler options:
  ``option mem=* --mem-per-cpu $0`` ($0 is the value), ``option gpu=0`` (for that exact value:
  nothing), ``default gpu=0`` (the value when the option is not given). slurm.py refuses an
  option its config does not describe; queue.py ignores it, as queue.pl does.
  ``--max-jobs-run M`` is ``--array a-b%M`` for Slurm and ``option max_jobs_run=* -tc $0`` for
  Grid Engine;
- ``JOB=1:N`` is one array job (``sbatch --array 1-N``, ``qsub -t 1:N``). The job script goes
  to ``q/<name>.sh`` beside the log directory (``.../log/q`` becomes ``.../q``), with the
  scheduler's own output in ``q/<name>.log``; it cds to the current directory, sources
  ./path.sh and writes each task's log: ``# Running on <host>``, ``# Started at <date>``,
  (Slurm) the ``SLURM_*`` variables, ``# <command>``, the command's output, ``# Accounting:
  time=N threads=T`` and ``# Finished at <date> with status N``;
- each task writes its exit status to a done file (``q/done.<pid>.<task>``) that the wrapper
  polls; now and then it asks the scheduler (squeue, then sacct; qstat -j) about the tasks
  that have not written one, so that a task killed before it could (scancel, time limit, node
  failure) fails the run instead of hanging it;
- failure: exit status 1 and ``slurm.py: 1 / 3 failed, log is in exp/x/log/name.*.log``;
- ``--num-tasks N`` (MPI; ``option num_tasks=* --ntasks $0``, Grid Engine ``-pe mpi $0``): an
  allocation of N tasks in which the job runs the command under mpiexec exactly as utils/run.py
  does (:func:`nnetmix.utils.jobs.mpi_command`); Open MPI's mpiexec takes its slots from the
  allocation. ``srun --mpi=pmix`` is not used: Debian's Slurm cannot load PMIx without
  libpmix-dev, and with it the step does not start with the PyPI Open MPI 5 (tried on
  bookworm's 22.05.8).

Where we differ from Kaldi's, and why:

- JOB is replaced by the task id in the command text before bash reads it, as run.pl does;
  Kaldi's queue scripts put ``${SLURM_ARRAY_TASK_ID}`` there, which single quotes leave as is;
- the built-in defaults name no partition or queue (Kaldi's: ``-p shared``/``-p gpu``,
  ``-q all.q``/``g.q``, site names) and the Slurm one drops ``--ntasks-per-node=1``, which
  forbids ``--ntasks N`` on one node;
- no 5-second sleep after making q/ (an NFS work-around), and no ``exit 100`` for a task
  killed with status 137 (it put Grid Engine tasks into the error state, where queue.pl then
  waited for them);
- a task that ends without a status is reported with its scheduler state, and the wrapper
  waits for the other tasks before it sums up (Kaldi's exit at the first).

The package, by responsibility: :mod:`.config` (the conf files and the options they map),
:mod:`.scheduler` (what differs between schedulers), :mod:`.slurm` and :mod:`.gridengine` (the
two), :mod:`.jobscript` (the bash script each task runs and where it goes), :mod:`.tasks`
(submitting and waiting for the tasks) and :mod:`.wrapper` (``main``, the command line of
utils/slurm.py and utils/queue.py).
"""
from nnetmix.utils.cluster.config import QueueConfig, parse_config, read_config, scheduler_options
from nnetmix.utils.cluster.gridengine import GridEngine
from nnetmix.utils.cluster.jobscript import job_script, queue_paths
from nnetmix.utils.cluster.scheduler import Scheduler
from nnetmix.utils.cluster.slurm import Slurm
from nnetmix.utils.cluster.tasks import submit, wait_for_tasks
from nnetmix.utils.cluster.wrapper import SCHEDULERS, main

__all__ = ["QueueConfig", "Scheduler", "Slurm", "GridEngine", "SCHEDULERS", "parse_config",
           "read_config", "scheduler_options", "queue_paths", "job_script", "submit",
           "wait_for_tasks", "main"]
