"""Model mixing every n minibatches: all-reduce average, butterfly mixing, ring mixing.

As docs/parallel.md "Semantics" and seed 000 (Su & Chen, model averaging and butterfly
mixing) define them, for rank i of N with flat parameters theta_i:

- ``allreduce``: theta_i <- (1/N) sum_j theta_j (the exact average, through the chosen
  all-reduce algorithm, see allreduce.py).
- ``butterfly``: at mixing step k, partner p = i XOR 2^(k mod log2 N) and
  theta_i <- (theta_i + theta_p)/2. After log2 N steps with no training in between every rank
  holds the exact average. N must be a power of two.
- ``ring``: rank i sends theta_i to i+1 and receives theta_{i-1}: theta_i <- (theta_i + theta_{i-1})/2.
  Information needs N steps to go round.
- ``hierarchical``: the exact average of ``allreduce``, computed host by host (a sum inside each
  host, the ``--allreduce`` algorithm among one leader per host, a broadcast inside the host;
  hierarchy.py). On one host it is ``allreduce``, bit for bit.

At the end of every epoch :meth:`Mixer.exact_average` makes the ranks one model again, so
validation and the saved model are one model (unless ``--epoch-average=false``: each rank keeps
its own, :mod:`nnetmix.parallel.rank_models`). The mixing step counter belongs to the caller
(the trainer counts mixes), so every rank passes the same ``step``.

One pairwise exchange is one ``Sendrecv`` of the whole flat buffer (mpi4py's buffer API,
no pickling); the pair sums a+b and b+a are bit-identical, so both partners hold the same mix.

With ``feedback`` (an :class:`~nnetmix.parallel.compress.ErrorFeedback`, ``--mix-compression``),
an ``allreduce`` mix sends each rank's compressed update since the last mix instead of its
model: theta_i <- A + (1/N) sum_j D(C(theta_j - A + e_j)), A the last mixed model, e_j rank
j's residual (compress.py). :meth:`Mixer.exact_average` stays exact.
"""
from __future__ import annotations

import time
from typing import Any, Optional

from nnetmix.parallel.allreduce import ALGORITHMS
from nnetmix.parallel.buffers import ParallelError
from nnetmix.parallel.compress import ErrorFeedback
from nnetmix.parallel.hierarchy import make_reducer

__all__ = ["STRATEGIES", "EXACT", "Mixer", "butterfly_partner", "check_mixing", "exact_average"]

STRATEGIES = ("allreduce", "butterfly", "ring", "hierarchical")
#: the strategies whose every mix is the exact average (no end-of-epoch average needed)
EXACT = ("allreduce", "hierarchical")

_TAG = 11


def _is_power_of_two(n: int) -> bool:
    return n >= 1 and (n & (n - 1)) == 0


def check_mixing(strategy: str, algorithm: str, size: int = 1) -> None:
    """The one check of a mixing strategy and all-reduce algorithm (MixingOptions.check, the
    epoch drivers and :class:`Mixer`), at ``size`` ranks: butterfly needs a power of two. The
    errors name --mixing and --allreduce, the options of nnet-train-mpi.py,
    rbm-train-cd1-mpi.py and bench/scaling.py."""
    if strategy not in STRATEGIES:
        raise ParallelError(f"--mixing={strategy}: expected one of {', '.join(STRATEGIES)}")
    if algorithm not in ALGORITHMS:
        raise ParallelError(f"--allreduce={algorithm}: expected one of {', '.join(ALGORITHMS)}")
    if strategy == "butterfly" and not _is_power_of_two(size):
        raise ParallelError(f"--mixing=butterfly needs a power-of-two number of ranks, got {size} "
                            "(use --mixing=allreduce or ring, or run 2, 4, 8, ... ranks)")


def butterfly_partner(rank: int, size: int, step: int) -> int:
    """The rank that ``rank`` averages with at butterfly mixing step ``step``."""
    check_mixing("butterfly", "mpi", size)
    if size == 1:
        return rank
    log2n = size.bit_length() - 1
    return rank ^ (1 << (step % log2n))


class Mixer:
    """Mixes one flat parameter buffer across ``comm``.

    ``Mixer(comm, "butterfly", "ring", nnet.params, backend=nnet.backend)``; then
    ``mixer.mix(step)`` every n minibatches and ``mixer.exact_average()`` at the end of the
    epoch. Build it after the network is on its backend (``to_backend`` replaces the buffer).
    ``seconds``/``mixes`` accumulate the communication time. ``free()`` releases the
    communicators.
    """

    def __init__(self, comm: Any, strategy: str = "allreduce", allreduce_algorithm: str = "mpi",
                 buffer: Any = None, backend=None, cuda_aware: Optional[bool] = None,
                 feedback: Optional[ErrorFeedback] = None):
        size = comm.Get_size()
        check_mixing(strategy, allreduce_algorithm, size)
        if buffer is None:
            raise ParallelError("Mixer needs the flat parameter buffer (e.g. nnet.params)")
        if feedback is not None and strategy != "allreduce":
            raise ParallelError(f"--mix-compression={feedback.compression} with "
                                f"--mixing={strategy}: only allreduce mixing compresses")
        self.feedback = feedback
        if feedback is not None:
            feedback.start(buffer)
        self.strategy = strategy
        self.buffer = buffer
        count = int(buffer.shape[0]) if len(buffer.shape) == 1 else -1
        self.reducer = make_reducer(comm, strategy, allreduce_algorithm, max(count, 0),
                                    buffer.dtype, backend, cuda_aware)
        self.reducer.access.check(buffer, "Mixer")
        self.comm, self.size, self.rank = self.reducer.comm, size, comm.Get_rank()
        self.access, self.ops = self.reducer.access, self.reducer.ops
        self._tmp = None
        if strategy not in EXACT and size > 1:
            s = self.reducer.scratch
            self._tmp = (s[:count] if s is not None and s.shape[0] >= count
                         else self.ops.empty(count, self.reducer.dtype))
        self.seconds = 0.0
        self.mixes = 0

    def partner(self, step: int) -> int:
        """Butterfly: this rank's partner at ``step``; ring: the rank it receives from."""
        if self.strategy == "ring":
            return (self.rank - 1) % self.size
        return butterfly_partner(self.rank, self.size, step)

    def mix(self, step: int) -> None:
        """One mixing step (``step`` = 0, 1, 2, ... counted identically by every rank)."""
        if self.size == 1:
            return
        t0 = time.perf_counter()
        if self.feedback is not None:
            self.feedback.average(self.buffer)
        elif self.strategy in EXACT:
            self.reducer.average(self.buffer)
        else:
            if self.strategy == "butterfly":
                dest = source = butterfly_partner(self.rank, self.size, step)
            else:
                dest, source = (self.rank + 1) % self.size, (self.rank - 1) % self.size
            x = self.access.begin(self.buffer)
            self.ops.sync()
            self.comm.Sendrecv(x, dest=dest, sendtag=_TAG, recvbuf=self._tmp, source=source,
                               recvtag=_TAG)
            self.ops.add(x, self._tmp)
            self.ops.scale(x, 0.5)
            self.access.end(self.buffer)
        self.seconds += time.perf_counter() - t0
        self.mixes += 1

    def exact_average(self) -> None:
        """The exact average on every rank (end of epoch: one model to validate and save)."""
        t0 = time.perf_counter()
        self.reducer.average(self.buffer)
        self.seconds += time.perf_counter() - t0

    def free(self) -> None:
        self.reducer.free()

    def __enter__(self) -> "Mixer":
        return self

    def __exit__(self, *exc) -> None:
        self.free()


def exact_average(comm: Any, buffer, algorithm: str = "mpi", backend=None) -> None:
    """One-off exact average of ``buffer`` over ``comm`` (keep a Mixer for repeated use)."""
    with Mixer(comm, "allreduce", algorithm, buffer, backend) as m:
        m.exact_average()
