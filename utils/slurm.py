#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
# Runs a command, or an array of N copies of it, as a Slurm job with Kaldi slurm.pl's convention:
#   utils/slurm.py [--config conf/slurm.conf] [--mem X] [--num-threads T] [--gpu G] [--time T] \
#       [--max-jobs-run N] [--num-tasks N] JOB=1:4 exp/x/log/name.JOB.log command args...
# Options map to sbatch options through conf/slurm.conf (a built-in default when absent); the
# jobs are one array job whose tasks write Kaldi's log lines, and the wrapper waits for them and
# exits 1 with "slurm.py: N / M failed, log is in ..." when any failed. Put it in cmd.sh in place
# of utils/run.py. The logic is in nnetmix/utils/cluster/.
import os
import sys

try:
    from nnetmix.utils.cluster import main
except ImportError:  # called without the venv's nnetmix installed: use this checkout's
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from nnetmix.utils.cluster import main

if __name__ == "__main__":
    sys.exit(main(scheduler="slurm"))
