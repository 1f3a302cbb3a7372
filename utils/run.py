#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
# Runs a command, or N copies of it, on this machine with Kaldi run.pl's convention:
#   utils/run.py [--max-jobs-run N] [--mem X] [--gpu G] [--num-threads T] [--num-tasks N] \
#       JOB=1:4 exp/x/log/name.JOB.log command args...
# JOB (any identifier) is replaced by 1..4 in the command and the log name; each job runs through
# bash with its output in its own log. A queue or Slurm wrapper with the same convention can take
# its place in cmd.sh without any script changing. With --num-tasks N, a job that mpiexec failed
# to start (no rank ran) is started once more, its first log kept as <log>.1
# (NNETMIX_MPI_START_RETRIES=N sets the count). The logic is in nnetmix/utils/jobs.py.
import os
import sys

try:
    from nnetmix.utils.jobs import main
except ImportError:  # called without the venv's nnetmix installed: use this checkout's
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from nnetmix.utils.jobs import main

if __name__ == "__main__":
    sys.exit(main())
