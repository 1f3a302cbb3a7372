"""Overlapped mixing (``--overlap-mixing``): the all-reduce of block k runs while block k+1
computes, and is applied one block late with the delayed-update rule.

A block is ``--average-every`` minibatches. At the end of block k each rank takes a snapshot
s_k of its parameters and starts a non-blocking all-reduce of it (``MPI_Iallreduce``, the sum,
then x 1/N as :meth:`~nnetmix.parallel.allreduce.Reducer.average` does). While block k+1 trains,
the request is progressed with ``MPI_Test`` (at most :data:`TESTS_PER_MINIBATCH` calls after
each minibatch, no thread: Open MPI's non-blocking collectives advance only inside MPI calls).
At the end of block k+1 the rank waits for it (``MPI_Wait``, usually done by then) and applies

    model averaging:  theta <- avg(s_k) + (theta - s_k)
    BMUF:             G(k) = avg(s_k) - W_g(k-1), filtered into Delta(k), W(k), W_g(k) exactly
                      as the blocking filter (:meth:`BMUF.filter`), then
                      theta <- W_g(k) + (theta - s_k)

so the local progress made since the snapshot (block k+1's minibatches) is kept on top of the
mixed model, as asynchronous BMUF and SlowMo formulate it (Chen & Huo's block momentum applied
to a one-block-stale average). Then it takes s_(k+1) = theta and starts the next all-reduce.
Since s_k = avg(s_(k-1)) + (block k's local progress) and every rank applies the same average,
avg(s_k) - W_g(k-1) is the average of the ranks' block-k progress: the blocking G(k).

The end of the epoch: the outstanding all-reduce is waited for and applied; if minibatches
trained after the last snapshot (a partial last block) one blocking round of the same rule
(start, wait, apply: the exact average, or BMUF's filter of it) makes all ranks one model. The
model written is then identical on all ranks: after the last apply theta - s is exactly 0.

When to choose it: when the all-reduce of the model takes a noticeable part of a block's time
and a block computes for longer than the all-reduce takes (bench/scaling.py --overlap-mixing
measures the share hidden). The price is staleness: each rank trains block k+1 from a model that
has not yet seen the other ranks' block k, which costs some of the loss decrease per epoch
(docs/parallel.md). Only the exact average as one MPI all-reduce overlaps: butterfly and ring
mixing, hierarchical mixing, our own ``--allreduce`` algorithms (blocking point-to-point
schedules) and compressed mixing are refused with one line (:func:`check_overlap`).
"""
from __future__ import annotations

import logging
import time
from typing import Any, Optional

from nnetmix.kernels import get_backend
from nnetmix.parallel.bmuf import BMUF
from nnetmix.parallel.buffers import BufferAccess, ParallelError

__all__ = ["TESTS_PER_MINIBATCH", "OverlapAverage", "OverlapMixer", "check_overlap",
           "overlap_mixer"]

#: MPI_Test calls after each minibatch while an all-reduce is outstanding (each advances Open
#: MPI's schedule by what is ready; more calls past completion cost nothing, since a completed
#: request is not tested again)
TESTS_PER_MINIBATCH = 4


def check_overlap(overlap: bool, mixing: str, allreduce: str, compression: str) -> None:
    """The one check of ``--overlap-mixing`` against the other mixing options."""
    if not overlap:
        return
    if mixing != "allreduce":
        raise ParallelError(f"--overlap-mixing=true with --mixing={mixing}: only the exact "
                            "average of --mixing=allreduce overlaps (one non-blocking MPI "
                            "all-reduce; use --mixing=allreduce, or --overlap-mixing=false)")
    if allreduce != "mpi":
        raise ParallelError(f"--overlap-mixing=true with --allreduce={allreduce}: the overlapped "
                            "all-reduce is MPI's non-blocking MPI_Iallreduce (use "
                            "--allreduce=mpi, or --overlap-mixing=false)")
    if compression != "none":
        raise ParallelError(f"--overlap-mixing=true with --mix-compression={compression}: "
                            "compressed mixing is blocking (use --mix-compression=none, or "
                            "--overlap-mixing=false)")


class OverlapAverage:
    """One non-blocking exact average of a snapshot of a flat buffer over ``comm``.

    :meth:`start` copies the buffer into :attr:`snapshot` and starts ``MPI_Iallreduce`` on a
    second copy; :meth:`test` progresses it; :meth:`wait` completes it and returns the average
    (a backend array). Buffers are allocated once; a device buffer goes to a CUDA-aware MPI
    directly or is staged through host memory (:class:`~nnetmix.parallel.buffers.BufferAccess`,
    the reducers' rule). It runs on a private duplicate of ``comm``."""

    def __init__(self, comm: Any, count: int, dtype, backend: Any = None,
                 cuda_aware: Optional[bool] = None):
        self.comm = comm.Dup()
        self.size = self.comm.Get_size()
        self.access = BufferAccess(count, dtype, backend, cuda_aware, comm)
        self.be = backend if backend is not None else get_backend("cpu")
        self.snapshot = self.be.empty(self.access.count, dtype=self.access.dtype)
        self.average = self.be.empty(self.access.count, dtype=self.access.dtype)
        self._x = None
        self._req = None

    @property
    def pending(self) -> bool:
        return self._req is not None

    def start(self, buf: Any) -> None:
        """s <- buf, and the all-reduce of s starts."""
        from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when MPI is used
        if self._req is not None:
            raise ParallelError("overlapped mixing: an all-reduce is already outstanding")
        self.access.check(buf, "overlapped mixing")
        self.be.copy(self.snapshot, buf)
        self.be.copy(self.average, buf)
        self._x = self.access.begin(self.average)
        self.access.ops.sync()
        self._req = self.comm.Iallreduce(MPI.IN_PLACE, self._x, op=MPI.SUM)

    def test(self, tries: int = TESTS_PER_MINIBATCH) -> bool:
        """Progress the outstanding all-reduce with up to ``tries`` MPI_Test calls; True once
        it is complete (or none is outstanding)."""
        if self._req is None:
            return True
        for _ in range(tries):
            if self._req.Test():
                return True
        return False

    def wait(self) -> Any:
        """Complete the all-reduce: the average of the ranks' snapshots (a backend array,
        valid until the next :meth:`start`)."""
        if self._req is None:
            raise ParallelError("overlapped mixing: no all-reduce outstanding")
        self._req.Wait()
        self._req = None
        self.access.ops.scale(self._x, 1.0 / self.size)
        self.access.end(self.average)
        return self.average

    def free(self) -> None:
        """Release the communicator. With an all-reduce still outstanding (only when training
        failed before the end of the epoch: :meth:`OverlapMixer.finish` completes it) both are
        left to MPI: waiting could hang on a peer that failed too, and the job is ending."""
        if self.comm is not None and self._req is None:
            self.comm.Free()
        self.comm = None


class OverlapMixer:
    """Overlapped model averaging or BMUF (``bmuf``) of the flat buffer ``params`` over
    ``comm``: :meth:`progress` after each minibatch, :meth:`block_end` at the end of each block,
    :meth:`finish` at the end of the epoch (module docstring). The times (seconds) are kept
    apart: ``time_start`` (snapshot and post), ``time_test`` (MPI_Test), ``time_wait``
    (MPI_Wait: the communication not hidden), ``time_apply`` (the rule, BMUF's filter)."""

    def __init__(self, comm: Any, params: Any, backend: Any = None,
                 bmuf: Optional[BMUF] = None, cuda_aware: Optional[bool] = None,
                 log: Optional[logging.Logger] = None):
        if bmuf is not None and bmuf.params is not params:
            raise ParallelError("overlapped BMUF: the filter must be bound to the mixed buffer")
        self.params = params
        self.bmuf = bmuf
        self.be = backend if backend is not None else get_backend("cpu")
        self.avg = OverlapAverage(comm, int(params.shape[0]), params.dtype, backend, cuda_aware)
        self.mixes = 0              #: all-reduces applied
        self.done_early = 0         #: of them, complete before their Wait (MPI_Test said so)
        self.time_start = self.time_test = self.time_wait = self.time_apply = 0.0
        self._done = False
        self.log = log

    def progress(self) -> None:
        """After a minibatch inside a block: progress the outstanding all-reduce."""
        if self.avg.pending and not self._done:
            t0 = time.perf_counter()
            self._done = self.avg.test()
            self.time_test += time.perf_counter() - t0

    def block_end(self) -> None:
        """End of a block: apply the previous block's all-reduce (when one is outstanding),
        then snapshot and start this block's."""
        if self.avg.pending:
            self._apply()
        t0 = time.perf_counter()
        self.avg.start(self.params)
        self._done = False
        self.time_start += time.perf_counter() - t0

    def finish(self, partial: bool) -> None:
        """End of the epoch: apply the outstanding all-reduce; ``partial`` (minibatches trained
        since the last snapshot): one more round, blocking, so every rank holds one model (BMUF:
        W_g; the caller takes W, :meth:`BMUF.copy_model`)."""
        if self.avg.pending:
            self._apply()
        if partial:
            t0 = time.perf_counter()
            self.avg.start(self.params)
            self.time_start += time.perf_counter() - t0
            self._apply()
        if self.log is not None:
            self.log.info("rank %d: --overlap-mixing: %s", self.avg.comm.Get_rank(),
                          self.summary())

    def _apply(self) -> None:
        """Wait for the all-reduce and apply the delayed-update rule."""
        if self._done:
            self.done_early += 1
        t0 = time.perf_counter()
        average = self.avg.wait()
        t1 = time.perf_counter()
        be, s = self.be, self.avg.snapshot
        if self.bmuf is not None:
            self.bmuf.filter(average)
            self.bmuf.start_block(s)     # theta <- W_g(k) + (theta - s_k)
        else:
            be.axpy(-1.0, s, self.params)  # theta <- (theta - s_k) + avg(s_k)
            be.axpy(1.0, average, self.params)
        self.mixes += 1
        self._done = False
        self.time_wait += t1 - t0
        self.time_apply += time.perf_counter() - t1

    def summary(self) -> str:
        """One log line's worth: mixes, how many were done before their Wait, the times."""
        return (f"{self.mixes} overlapped mixes ({self.done_early} complete before their wait); "
                f"start {self.time_start:.3f} s, test {self.time_test:.3f} s, wait "
                f"{self.time_wait:.3f} s, apply {self.time_apply:.3f} s")

    def free(self) -> None:
        self.avg.free()


def overlap_mixer(comm: Any, params: Any, backend: Any, overlap: bool,
                  bmuf: Optional[BMUF] = None, log: Optional[logging.Logger] = None
                  ) -> Optional[OverlapMixer]:
    """The rank's :class:`OverlapMixer` for ``--overlap-mixing=true`` (None when it is off, and
    at one rank, where there is nothing to mix: the log says so)."""
    if not overlap:
        return None
    log = log or logging.getLogger(__name__)
    if comm.Get_size() == 1:
        log.info("one rank: nothing to mix, --overlap-mixing=true does nothing")
        return None
    log.info("rank %d: --overlap-mixing: each block's all-reduce runs during the next block and "
             "is applied at its end (%s)", comm.Get_rank(),
             "BMUF: theta <- W_g(k) + (theta - s_k)" if bmuf is not None
             else "theta <- avg(s_k) + (theta - s_k)")
    return OverlapMixer(comm, params, backend, bmuf, log=log)
