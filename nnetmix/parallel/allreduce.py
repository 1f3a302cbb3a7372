"""All-reduce algorithms over point-to-point MPI on one contiguous buffer.

The algorithms compared in seed 004 (Fourie 2019, after Patarasuk & Yuan 2009 and Chan et al.
2007), with their alpha-beta costs for N ranks and n bytes (alpha: latency per message, beta:
seconds per byte; local additions left out):

==================== ================================== =====================================
``mpi``              the library's own ``MPI_Allreduce``  whatever Open MPI picks (tuned coll)
``ring``             reduce-scatter then all-gather,      2(N-1) alpha + 2(N-1)/N n beta
                     blocking ``Sendrecv``, N chunks      (bandwidth-optimal, any N)
``ring-async``       the same with ``Isend``/``Irecv``;   same messages; the reduction of one
                     chunks cut in segments, each sent    segment overlaps the transfer of the
                     on as soon as it is reduced          next
``recursive-doubling`` butterfly: log2 N exchanges of    log2 N (alpha + n beta), +2 steps when
                     the whole vector; non-powers of two  N is not a power of two
                     fold the extra ranks in first and
                     send them the result last (MPICH's
                     scheme)
``tree``             binomial reduce to rank 0, then      2 ceil(log2 N) (alpha + n beta)
                     binomial broadcast
==================== ================================== =====================================

Only mpi4py's buffer (uppercase) API is used: no pickling, one buffer, no per-layer messages.
An :class:`AllReducer` is built once per buffer size and reused for every mix: scratch space
(and the host staging copy for a device buffer without CUDA-aware MPI, see buffers.py) is
allocated in the constructor, never per call. It works on a private duplicate of ``comm`` so its
messages never match anyone else's.

Every algorithm leaves bit-identical results on all ranks (each reduced element is computed once
and copied, or computed by partners as a+b and b+a, which IEEE addition makes equal), so the
ranks' models stay one model after an exact average. The bracketing of the sums differs between
algorithms (seed 004: "different bracketing ... rounding errors"), so different algorithms agree
with each other only to rounding.
"""
from __future__ import annotations

import abc
import time
from typing import Any, Optional

import numpy as np

from nnetmix.parallel.buffers import BufferAccess, ParallelError

__all__ = ["ALGORITHMS", "Reducer", "AllReducer", "allreduce"]

ALGORITHMS = ("mpi", "ring", "ring-async", "recursive-doubling", "tree")

_TAG = 7
_SEGMENT_BYTES = 1 << 20     # ring-async: chunks are cut in segments of about this size ...
_MAX_SEGMENTS = 8            # ... but never more than this many per chunk


def _chunk_bounds(n: int, parts: int) -> list[int]:
    """parts+1 offsets cutting n elements into parts chunks whose sizes differ by at most one
    (some empty when n < parts)."""
    return [(i * n) // parts for i in range(parts + 1)]


class Reducer(abc.ABC):
    """What the mixer and BMUF call on a reducer: ``sum``/``average`` of one flat buffer in
    place (each subclass's ``_run``), ``free`` and the context manager."""

    def sum(self, buf) -> None:
        """buf <- sum over ranks of buf, in place, identical on every rank."""
        self._run(buf, average=False)

    def average(self, buf) -> None:
        """buf <- (1/N) * sum over ranks of buf, in place, identical on every rank."""
        self._run(buf, average=True)

    def __call__(self, buf, average: bool = True) -> None:
        self._run(buf, average)

    @abc.abstractmethod
    def _run(self, buf, average: bool) -> None:
        """The reduction itself (each reducer its own)."""

    @abc.abstractmethod
    def free(self) -> None:
        """Release the reducer's buffers and communicators."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.free()


class AllReducer(Reducer):
    """Sum or average one flat buffer over ``comm`` with a chosen algorithm.

    ``AllReducer(comm, "ring", count, np.float32)`` then ``reducer.average(params)`` (or
    ``reducer.sum(buf)``) as often as needed; the buffer must be ``count`` elements of ``dtype``
    (a numpy array, or a backend array when ``backend`` is a GPU backend). ``seconds`` and
    ``calls`` accumulate the time spent, for the per-sweep "aggregate" time (seed 002, table 4).
    Call ``free()`` (or use it as a context manager) to release the duplicated communicator.
    """

    def __init__(self, comm: Any, algorithm: str = "mpi", count: int = 0, dtype=np.float32,
                 backend=None, cuda_aware: Optional[bool] = None,
                 segment_bytes: int = _SEGMENT_BYTES):
        if algorithm not in ALGORITHMS:
            raise ParallelError(f"unknown all-reduce algorithm '{algorithm}' "
                                f"(expected one of {', '.join(ALGORITHMS)})")
        self.algorithm = algorithm
        self.comm = comm.Dup()
        self.size = self.comm.Get_size()
        self.rank = self.comm.Get_rank()
        self.access = BufferAccess(count, dtype, backend, cuda_aware, comm)
        self.count = self.access.count
        self.dtype = self.access.dtype
        self.ops = self.access.ops
        self.bounds = _chunk_bounds(self.count, max(self.size, 1))
        self.seconds = 0.0
        self.calls = 0
        n, size = self.count, self.size
        chunk = max(self.bounds[i + 1] - self.bounds[i] for i in range(size)) if size else 0
        scratch = {"mpi": 0, "ring": chunk, "ring-async": 2 * chunk,
                   "recursive-doubling": n, "tree": n}[algorithm] if size > 1 else 0
        self.scratch = self.ops.empty(scratch, self.dtype) if scratch else None
        if algorithm == "ring-async" and size > 1:
            seg = max(1, int(segment_bytes) // self.dtype.itemsize)
            self.nseg = max(1, min(_MAX_SEGMENTS, -(-chunk // seg)))
            self.segs = []
            for c in range(size):
                lo, hi = self.bounds[c], self.bounds[c + 1]
                self.segs.append([(lo + (k * (hi - lo)) // self.nseg,
                                   lo + ((k + 1) * (hi - lo)) // self.nseg)
                                  for k in range(self.nseg)])

    # -- public ----------------------------------------------------------------------------------
    def free(self) -> None:
        if self.comm is not None:
            self.comm.Free()
            self.comm = None

    def __repr__(self) -> str:
        return (f"AllReducer({self.algorithm}, {self.count} x {self.dtype}, {self.size} ranks, "
                f"{self.access.mode})")

    # -- dispatch --------------------------------------------------------------------------------
    def _run(self, buf, average: bool) -> None:
        if self.comm is None:
            raise ParallelError("AllReducer used after free()")
        self.access.check(buf, f"all-reduce ({self.algorithm})")
        if self.size == 1 or self.count == 0:
            return
        t0 = time.perf_counter()
        x = self.access.begin(buf)
        if self.algorithm == "mpi":
            self.ops.sync()
            from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when MPI is used
            self.comm.Allreduce(MPI.IN_PLACE, x, op=MPI.SUM)
        elif self.algorithm == "ring":
            self._ring(x)
        elif self.algorithm == "ring-async":
            self._ring_async(x)
        elif self.algorithm == "recursive-doubling":
            self._recursive_doubling(x)
        else:
            self._tree(x)
        if average:
            self.ops.scale(x, 1.0 / self.size)
        self.access.end(buf)
        self.seconds += time.perf_counter() - t0
        self.calls += 1

    # -- algorithms ------------------------------------------------------------------------------
    def _ring(self, x) -> None:
        """Reduce-scatter, then all-gather, around the ring r -> r+1 (Patarasuk & Yuan).

        Reduce-scatter step s: send chunk (r-s), receive chunk (r-s-1) and add it in; after N-1
        steps rank r owns the full sum of chunk (r+1). All-gather step s: send chunk (r+1-s),
        receive chunk (r-s) straight into place.
        """
        comm, ops, b, N, r = self.comm, self.ops, self.bounds, self.size, self.rank
        right, left = (r + 1) % N, (r - 1) % N
        for s in range(N - 1):
            sc, rc = (r - s) % N, (r - s - 1) % N
            tmp = self.scratch[:b[rc + 1] - b[rc]]
            ops.sync()
            comm.Sendrecv(x[b[sc]:b[sc + 1]], dest=right, sendtag=_TAG,
                          recvbuf=tmp, source=left, recvtag=_TAG)
            ops.add(x[b[rc]:b[rc + 1]], tmp)
        ops.sync()
        for s in range(N - 1):
            sc, rc = (r + 1 - s) % N, (r - s) % N
            comm.Sendrecv(x[b[sc]:b[sc + 1]], dest=right, sendtag=_TAG,
                          recvbuf=x[b[rc]:b[rc + 1]], source=left, recvtag=_TAG)

    def _ring_async(self, x) -> None:
        """The ring with non-blocking messages, pipelined by segments.

        In reduce-scatter the chunk reduced at step s is the one sent at step s+1, so each chunk
        is cut in ``nseg`` segments: as soon as segment k is received and added it is posted to
        the right neighbour, while segment k+1 is still arriving. Receives for step s+1 are
        posted before step s is reduced (two scratch halves alternate). All-gather posts every
        receive up front (they land in distinct places of x) and forwards each segment as it
        arrives. One tag throughout: MPI's non-overtaking rule keeps the order of the messages
        between two ranks, and receives are posted in the order the neighbour sends.
        """
        from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when MPI is used
        comm, ops, b, N, r = self.comm, self.ops, self.bounds, self.size, self.rank
        right, left, segs = (r + 1) % N, (r - 1) % N, self.segs
        half = self.scratch.shape[0] // 2
        halves = (self.scratch[:half], self.scratch[half:])

        def post_recv(s: int) -> list:
            c = (r - s - 1) % N
            t, base = halves[s % 2], b[c]
            return [comm.Irecv(t[lo - base:hi - base], source=left, tag=_TAG) for lo, hi in segs[c]]

        ops.sync()
        sends = [comm.Isend(x[lo:hi], dest=right, tag=_TAG) for lo, hi in segs[r]]
        recvs = post_recv(0)
        for s in range(N - 1):
            c = (r - s - 1) % N
            t, base = halves[s % 2], b[c]
            nxt = post_recv(s + 1) if s + 1 < N - 1 else []
            for k, (lo, hi) in enumerate(segs[c]):
                recvs[k].Wait()
                ops.add(x[lo:hi], t[lo - base:hi - base])
                if s + 1 < N - 1:
                    ops.sync()
                    sends.append(comm.Isend(x[lo:hi], dest=right, tag=_TAG))
            recvs = nxt
        MPI.Request.Waitall(sends)
        ops.sync()
        # all-gather: rank r holds the full chunk (r+1)
        recvs = [[comm.Irecv(x[lo:hi], source=left, tag=_TAG) for lo, hi in segs[(r - s) % N]]
                 for s in range(N - 1)]
        sends = [comm.Isend(x[lo:hi], dest=right, tag=_TAG) for lo, hi in segs[(r + 1) % N]]
        for s in range(N - 1):
            for k, (lo, hi) in enumerate(segs[(r - s) % N]):
                recvs[s][k].Wait()
                if s + 1 < N - 1:
                    sends.append(comm.Isend(x[lo:hi], dest=right, tag=_TAG))
        MPI.Request.Waitall(sends)

    def _recursive_doubling(self, x) -> None:
        """Butterfly all-reduce: at step k exchange the whole vector with rank ^ 2^k and add.

        For N not a power of two (p = largest power of two below N, rem = N - p), the first
        2*rem ranks pair up first: each even one sends its vector to the next odd one and sits
        out; the p remaining ranks run the butterfly; the odd ones then send the result back.
        """
        comm, ops, N, r, tmp = self.comm, self.ops, self.size, self.rank, self.scratch
        p = 1 << (N.bit_length() - 1)
        rem = N - p
        ops.sync()
        if r < 2 * rem:
            if r % 2 == 0:
                comm.Send(x, dest=r + 1, tag=_TAG)
                new = -1
            else:
                comm.Recv(tmp, source=r - 1, tag=_TAG)
                ops.add(x, tmp)
                new = r // 2
        else:
            new = r - rem
        if new >= 0:
            mask = 1
            while mask < p:
                np_ = new ^ mask
                partner = np_ * 2 + 1 if np_ < rem else np_ + rem
                ops.sync()
                comm.Sendrecv(x, dest=partner, sendtag=_TAG, recvbuf=tmp, source=partner,
                              recvtag=_TAG)
                ops.add(x, tmp)
                mask <<= 1
        ops.sync()
        if r < 2 * rem:
            if r % 2 == 0:
                comm.Recv(x, source=r + 1, tag=_TAG)
            else:
                comm.Send(x, dest=r - 1, tag=_TAG)

    def _tree(self, x) -> None:
        """Binomial-tree reduce to rank 0, then binomial-tree broadcast from rank 0."""
        comm, ops, N, r, tmp = self.comm, self.ops, self.size, self.rank, self.scratch
        mask = 1
        while mask < N:
            if r & mask:
                ops.sync()
                comm.Send(x, dest=r - mask, tag=_TAG)
                break
            if r + mask < N:
                comm.Recv(tmp, source=r + mask, tag=_TAG)
                ops.add(x, tmp)
            mask <<= 1
        ops.sync()
        mask = 1
        while mask < N:
            if r & mask:
                comm.Recv(x, source=r - mask, tag=_TAG)
                break
            mask <<= 1
        mask >>= 1
        while mask > 0:
            if r + mask < N:
                comm.Send(x, dest=r + mask, tag=_TAG)
            mask >>= 1


def allreduce(comm: Any, buf, algorithm: str = "mpi", average: bool = False, backend=None) -> None:
    """One-off all-reduce of ``buf`` in place (builds and frees an AllReducer: for repeated use,
    keep an AllReducer)."""
    with AllReducer(comm, algorithm, int(np.prod(buf.shape)), buf.dtype, backend) as red:
        red(buf, average=average)
