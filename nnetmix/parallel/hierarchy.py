"""Hierarchical averaging (``--mixing=hierarchical``): inside each host, then across hosts.

The ranks of one host are those of ``comm.Split_type(MPI.COMM_TYPE_SHARED)`` (what the MPI
library knows of where it placed them; never an option). Host h has N_h ranks, rank 0 of each
host is its leader, N = sum_h N_h. One average of the flat buffers theta_i is

    S_h   = sum_{i on h} theta_i                 MPI_Reduce to the leader, inside the host
    S     = sum_h S_h                            the leaders' all-reduce (--allreduce algorithm)
    theta_i <- S / N                             on the leaders, then MPI_Bcast inside the host

which is the exact average of all N models (sum_h S_h / N; the mean of the host means only when
every host has the same number of ranks), so it replaces the flat all-reduce wherever an exact
average is asked for: model averaging's every mix and end of epoch, and BMUF's W_bar(t)
(:class:`~nnetmix.parallel.bmuf.BMUF` then filters it as usual on every rank). Only the leaders
put the model on the network between hosts, once each way; the other ranks talk over shared
memory. Every rank ends with the leader's bytes (the broadcast), so all models stay bitwise
one. The bracketing of the sum is (in-host sums) then (the leaders' algorithm), so it agrees
with a flat all-reduce to rounding, and bitwise where the brackets match (2 hosts x 2 ranks
against ``recursive-doubling`` on 4: ((t0 + t1) + (t2 + t3)) / 4 both ways).

On one host (or one rank per host) there is nothing to split: :class:`HierarchicalReducer` is
then the plain :class:`~nnetmix.parallel.allreduce.AllReducer` over ``comm``, bit for bit.

Compressed mixing (``--mix-compression``) is not built on this: the residuals of error feedback
belong to ranks, and which of the two steps would compress is an open choice.
"""
from __future__ import annotations

import logging
import socket
import time
from typing import Any, Optional

import numpy as np

from nnetmix.parallel.allreduce import ALGORITHMS, AllReducer, Reducer
from nnetmix.parallel.buffers import BufferAccess, ParallelError

__all__ = ["HierarchicalReducer", "host_communicator", "make_reducer"]

logger = logging.getLogger(__name__)


def host_communicator(comm: Any) -> Any:
    """The ranks of ``comm`` that share this rank's host (``MPI.COMM_TYPE_SHARED``); free it."""
    from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when a rank mixes
    return comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())


class HierarchicalReducer(Reducer):
    """Sum or average one flat buffer over ``comm`` host by host (module docstring).

    A :class:`~nnetmix.parallel.allreduce.Reducer` with AllReducer's ``seconds``, ``calls`` and
    ``access``: the mixer and BMUF take either.
    ``node_comm``: the ranks taken as one host (default :func:`host_communicator`; a test may
    split one machine's ranks, e.g. by rank parity).
    """

    def __init__(self, comm: Any, algorithm: str = "mpi", count: int = 0, dtype=np.float32,
                 backend=None, cuda_aware: Optional[bool] = None, node_comm: Any = None):
        from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when a rank mixes
        if algorithm not in ALGORITHMS:
            raise ParallelError(f"unknown all-reduce algorithm '{algorithm}' "
                                f"(expected one of {', '.join(ALGORITHMS)})")
        self.algorithm = algorithm
        self.comm = comm.Dup()
        self.size, self.rank = self.comm.Get_size(), self.comm.Get_rank()
        self.node = (host_communicator(self.comm) if node_comm is None else node_comm.Dup())
        self.leader = self.node.Get_rank() == 0
        self.leaders = self.comm.Split(0 if self.leader else MPI.UNDEFINED, key=self.rank)
        names = self.comm.allgather((socket.gethostname(), self.node.Get_size(), self.leader))
        self.hosts = [(name, n) for name, n, lead in names if lead]
        self.flat = len(self.hosts) in (1, self.size)
        self.scratch = None
        self.seconds = 0.0
        self.calls = 0
        self.across: Optional[AllReducer] = None
        if self.flat:
            self.across = AllReducer(self.comm, algorithm, count, dtype, backend, cuda_aware)
            self.access, self.scratch = self.across.access, self.across.scratch
        else:
            self.access = BufferAccess(count, dtype, backend, cuda_aware, comm)
            if self.leader:
                # the leaders reduce the array the in-host step left: a host array unless MPI
                # takes device buffers
                device = self.access.mode == "device"
                self.across = AllReducer(self.leaders, algorithm, count, dtype,
                                         backend if device else None, True if device else None)
        self.count, self.dtype, self.ops = self.access.count, self.access.dtype, self.access.ops

    def describe(self) -> str:
        """One line: the hosts and what an average does across them."""
        hosts = ", ".join(f"{name}: {n} rank{'s' if n > 1 else ''}" for name, n in self.hosts)
        if len(self.hosts) == 1:
            return (f"one host ({hosts}): hierarchical mixing is the plain all-reduce average "
                    f"(--allreduce={self.algorithm})")
        if self.flat:
            return (f"{len(self.hosts)} hosts of one rank each: hierarchical mixing is the plain "
                    f"all-reduce average (--allreduce={self.algorithm})")
        return (f"{len(self.hosts)} hosts ({hosts}): sum inside each host, --allreduce="
                f"{self.algorithm} among the {len(self.hosts)} leaders, broadcast inside the host")

    def _run(self, buf, average: bool) -> None:
        if self.comm is None:
            raise ParallelError("HierarchicalReducer used after free()")
        if self.flat:
            self.across(buf, average)
            self.seconds, self.calls = self.across.seconds, self.across.calls
            return
        from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when a rank mixes
        self.access.check(buf, "hierarchical all-reduce")
        if self.count == 0:
            return
        t0 = time.perf_counter()
        x = self.access.begin(buf)
        self.ops.sync()
        if self.leader:
            self.node.Reduce(MPI.IN_PLACE, x, op=MPI.SUM, root=0)
            self.across.sum(x)
            if average:
                self.ops.scale(x, 1.0 / self.size)
            self.ops.sync()
        else:
            self.node.Reduce(x, None, op=MPI.SUM, root=0)
        self.node.Bcast(x, root=0)
        self.access.end(buf)
        self.seconds += time.perf_counter() - t0
        self.calls += 1

    def free(self) -> None:
        from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when a rank mixes
        if self.comm is None:
            return
        if self.across is not None:
            self.across.free()
        for c in (self.leaders, self.node, self.comm):
            if c != MPI.COMM_NULL:
                c.Free()
        self.comm = None


def make_reducer(comm: Any, mixing: str, algorithm: str, count: int, dtype, backend=None,
                 cuda_aware: Optional[bool] = None):
    """The exact average of ``--mixing``: an AllReducer over ``comm``, or for ``hierarchical``
    a :class:`HierarchicalReducer` (whose layout rank 0 logs in one line)."""
    if mixing != "hierarchical":
        return AllReducer(comm, algorithm, count, dtype, backend, cuda_aware)
    red = HierarchicalReducer(comm, algorithm, count, dtype, backend, cuda_aware)
    if red.rank == 0:
        logger.info("--mixing=hierarchical: %s", red.describe())
    return red
