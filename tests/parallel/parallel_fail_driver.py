"""An MPI job in which rank 1 fails, for test_parallel_failure.py.

    mpiexec -n 3 --oversubscribe python tests/parallel/parallel_fail_driver.py SCENARIO

raise   rank 1 raises an NnetmixError inside run_ranks; the others wait in an all-reduce
hook     rank 1 raises a RuntimeError at top level with install_excepthook in place
kill     rank 1 SIGKILLs itself; the others wait in an all-reduce
hang     rank 1 sleeps; the others wait in an all-reduce under a 3 s Watchdog
mismatch rank 1 has another learning rate: check_same refuses on every rank
Every scenario must end the whole job non-zero within seconds.
"""
from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np
from mpi4py import MPI

from nnetmix.errors import NnetmixError
from nnetmix.parallel import (AllReducer, Watchdog, check_same, install_excepthook, run_ranks)


def main(comm, scenario: str) -> None:
    rank = comm.Get_rank()
    x = np.ones(1000, dtype=np.float32)
    red = AllReducer(comm, "ring", x.size)
    red.average(x)
    comm.Barrier()
    if scenario == "mismatch":
        check_same(comm, "options", {"learn_rate": 0.004 if rank == 1 else 0.008})
    if rank == 1:
        if scenario == "raise":
            raise NnetmixError("data/train/feats.scp: no such file")
        if scenario == "hook":
            raise RuntimeError("kaboom in a helper")
        if scenario == "kill":
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGKILL)
        if scenario == "hang":
            time.sleep(600)
    with Watchdog(comm, 3.0 if scenario == "hang" else 0, "no mix completed"):
        red.average(x)
    print(f"rank {rank} finished", flush=True)


if __name__ == "__main__":
    scenario = sys.argv[1]
    world = MPI.COMM_WORLD
    if scenario == "hook":
        install_excepthook(world)
        main(world, scenario)
    else:
        run_ranks(world, main, world, scenario)
