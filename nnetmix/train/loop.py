"""The one minibatch loop of the toolkit: utterances in, shuffled minibatches out, one update each.

Every trainer runs it: DNN cross-entropy (:mod:`nnetmix.train.trainer`) and RBM CD-1
(:mod:`nnetmix.rbm.trainer`), on one worker or as one MPI rank. What differs is the
:class:`UpdateRule` plugged in::

    loop = MinibatchLoop(rule, FrameRandomizer(opts), hook=mix_every_n, limit=n_agreed)
    loop.run(utterances, prefetch=True, prefetch_frames=32768)   # one pass (an epoch/iteration)
    loop.stopped      # True once the agreed number of minibatches is reached

* ``utterances``: any iterable of tuples whose second item is the feature matrix (read on a
  background thread when ``prefetch``, at most ``prefetch_frames`` frames ahead);
  ``rule.prepare(item)`` returns ``(frames, targets)`` for the randomizer or None (dropped).
* The randomizer is drained whenever it is full and once more at the end of the pass; the < 1
  minibatch left stays in it, so a loop run again (the RBM's iterations) carries it over, as
  Kaldi's tools do.
* Each minibatch: ``rule.step(x, y)`` (forward, loss, update), then ``hook(step, model)`` when
  given (MPI mixing plugs in there; step = 1, 2, ... counted over the loop's life). The time of
  the two is kept apart in ``rule.stats`` (``time_optimize``, ``time_hook``), and the time spent
  waiting for data, preparing it and filling the randomizer in ``time_io``.
* ``limit``: stop after exactly this many minibatches (the ranks agree on it up front).
* The randomizer may be any source with its interface; one with ``end_of_data()`` is told when
  the utterances are exhausted, before the last drain (:class:`~nnetmix.train.streams.
  StreamBatcher` then runs its streams out; ``step`` gets its ``StreamBatch`` as ``y``).

The loop keeps Kaldi's order of work exactly (fill, shuffle, minibatches in order), so a model
trained through it is the same, bit for bit, whatever trainer drives it.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Optional, Protocol

import numpy as np

from nnetmix.log import vlog
from nnetmix.train.prefetch import maybe_prefetch
from nnetmix.train.randomizer import FrameRandomizer

__all__ = ["MinibatchLoop", "UpdateRule", "Hook"]

#: after-minibatch hook: (minibatch number, model)
Hook = Callable[[int, Any], None]


class UpdateRule(Protocol):
    """What a trainer plugs into :class:`MinibatchLoop`."""

    #: statistics with ``minibatches``, ``time_io``, ``time_optimize`` and ``time_hook``
    stats: Any
    #: the model the hook receives
    model: Any

    def prepare(self, item: tuple) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """One utterance -> (frames, per-frame targets) for the randomizer, or None (dropped)."""

    def step(self, x: np.ndarray, y: np.ndarray) -> None:
        """One minibatch: loss and update; counts it in ``stats.minibatches``."""


class _Stop(Exception):
    """The agreed number of minibatches is done."""


class MinibatchLoop:
    """See the module docstring."""

    def __init__(self, rule: UpdateRule, randomizer: FrameRandomizer, *,
                 hook: Optional[Hook] = None, limit: Optional[int] = None):
        self.rule = rule
        self.randomizer = randomizer
        self.hook = hook
        self.limit = limit
        self.stopped = False

    def _step(self, x: np.ndarray, y: np.ndarray) -> None:
        st = self.rule.stats
        if self.limit is not None and st.minibatches >= self.limit:
            raise _Stop
        t0 = time.perf_counter()
        self.rule.step(x, y)
        t1 = time.perf_counter()
        st.time_optimize += t1 - t0
        if self.hook is not None:
            self.hook(st.minibatches, self.rule.model)
            st.time_hook += time.perf_counter() - t1

    def _drain(self) -> None:
        r = self.randomizer
        if r.done():  # < one minibatch left (e.g. the data ended right after a full buffer)
            return
        r.randomize()
        for x, y in r.minibatches():
            self._step(x, y)

    def run(self, utterances: Iterable[tuple], *, prefetch: bool = True,
            prefetch_frames: int = 32768) -> bool:
        """One pass over ``utterances``; returns True when the limit was reached (then the rest
        of the data is left unread and every later pass returns at once)."""
        if self.stopped:
            return True
        st = self.rule.stats
        source, pre = maybe_prefetch(utterances, prefetch, prefetch_frames,
                                     lambda u: int(u[1].shape[0]))
        it = iter(source)
        try:
            while True:
                t0 = time.perf_counter()
                try:
                    item = next(it)
                except StopIteration:
                    st.time_io += time.perf_counter() - t0
                    break
                frames = self.rule.prepare(item)
                if frames is not None:
                    self.randomizer.add(*frames)
                st.time_io += time.perf_counter() - t0
                if self.randomizer.is_full():
                    self._drain()
            end = getattr(self.randomizer, "end_of_data", None)
            if end is not None:  # a stream batcher runs its streams out (nnetmix.train.streams)
                end()
            self._drain()
        except _Stop:
            self.stopped = True
        finally:
            if pre is not None:
                pre.close()
            else:
                close = getattr(utterances, "close", None)
                if close is not None:
                    close()
        return self.stopped

    def check_done(self, error: type, minibatch_size: int, what: str, log: Any) -> None:
        """The end-of-run checks every trainer makes: as many minibatches as agreed, at least
        one, and a log line when the run stopped at the agreed number."""
        st = self.rule.stats
        if self.limit is not None and st.minibatches < self.limit:
            raise error(f"the data ran out after {st.minibatches} minibatches, {self.limit} "
                        "were agreed (a shard smaller than the others?)")
        if st.minibatches == 0:
            raise error(f"fewer frames than one minibatch ({minibatch_size}) in the data: "
                        f"nothing was {what}")
        if self.stopped:
            vlog(log, 1, "Stopped after the agreed %d minibatches", self.limit)
