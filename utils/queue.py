#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
# Runs a command, or an array of N copies of it, on Grid Engine with Kaldi queue.pl's convention:
#   utils/queue.py [--config conf/queue.conf] [--mem X] [--num-threads T] [--gpu G] \
#       [--max-jobs-run N] [--num-tasks N] [-q queue] JOB=1:4 exp/x/log/name.JOB.log cmd args...
# Options map to qsub options through conf/queue.conf (a built-in default when absent); the jobs
# are one array job (qsub -t 1:N) whose tasks write Kaldi's log lines, and the wrapper waits for
# them and exits 1 with "queue.py: N / M failed, log is in ..." when any failed. Put it in cmd.sh
# in place of utils/run.py. The logic is in nnetmix/utils/cluster/.
import os
import sys

if __name__ != "__main__":
    # Every Python script in utils/ has utils/ as sys.path[0], so the standard library's own
    # `import queue` (concurrent.futures, multiprocessing) finds this file first: become the
    # standard library's queue module there.
    import importlib.util

    _spec = importlib.util.spec_from_file_location(
        __name__, os.path.join(os.path.dirname(os.__file__), "queue.py"))
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[__name__] = _module
    _spec.loader.exec_module(_module)
else:
    try:
        from nnetmix.utils.cluster import main
    except ImportError:  # called without the venv's nnetmix installed: use this checkout's
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
        from nnetmix.utils.cluster import main
    sys.exit(main(scheduler="queue"))
