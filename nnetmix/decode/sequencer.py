"""Kaldi's TaskSequencer (src/util/kaldi-thread.h) for the *-parallel decoding tools: run a
task per input item in worker threads and hand the results on in input order.

The compiled search and the GMM kernels release the GIL (numba ``nogil``), so utterances decode
in parallel in one process; their outputs are written by the calling thread in the order the
items came, so an archive is the same, byte for byte, with any number of threads. At most
``num_threads_total`` items are in flight (running or waiting for an earlier one to be
written), as Kaldi's ``--num-threads-total`` bounds tasks waiting to output.
"""
from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Iterable, TypeVar

from nnetmix.errors import UsageError
from nnetmix.options import option

__all__ = ["TaskSequencerConfig", "run_in_order"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class TaskSequencerConfig:
    """Kaldi's TaskSequencerConfig (--num-threads, --num-threads-total)."""

    num_threads: int = option(1, "Number of actively processing threads to run in parallel")
    num_threads_total: int = option(0, "Total number of threads, including those waiting on "
                                    "other threads to output.  If <= 0, defaults to "
                                    "--num-threads plus 20.")

    def window(self) -> int:
        total = self.num_threads_total if self.num_threads_total > 0 \
            else self.num_threads + 20
        return max(total, self.num_threads, 1)


def run_in_order(items: Iterable[T], work: Callable[[T], R], emit: Callable[[T, R], None],
                 config: TaskSequencerConfig) -> None:
    """``emit(item, work(item))`` for every item, in input order; ``work`` runs in
    ``config.num_threads`` threads (in this thread when it is 1), ``emit`` always in this
    thread. An exception from ``work`` is raised here when its item's turn comes; items not
    yet started are then cancelled."""
    if config.num_threads < 1:
        raise UsageError(f"--num-threads={config.num_threads}: must be at least 1")
    if config.num_threads == 1:
        for item in items:
            emit(item, work(item))
        return
    window = config.window()
    pending: deque = deque()
    pool = ThreadPoolExecutor(max_workers=config.num_threads, thread_name_prefix="decode")
    try:
        for item in items:
            while len(pending) >= window:
                done_item, fut = pending.popleft()
                emit(done_item, fut.result())
            pending.append((item, pool.submit(work, item)))
        while pending:
            done_item, fut = pending.popleft()
            emit(done_item, fut.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
