"""Background reading of the next utterances while the trainer computes (seed 002's
"prefetching the next split while computing").

A daemon thread pulls items from an iterator into a bounded queue; the consumer iterates the
:class:`Prefetcher`. The bound is in frames (``cost(item)``), so the reader runs at most about
one randomizer buffer ahead. An exception in the reader is re-raised in the consumer at the
point the item would have arrived; ``close()`` (or leaving the ``with`` block, or breaking out of
the loop) stops the reader. Reading Kaldi tables is pipe and parse work that mostly releases or
avoids the GIL's hot path, so it overlaps the GEMMs of the trainer.
"""
from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Iterable, Iterator, Optional

__all__ = ["Prefetcher", "maybe_prefetch"]

_END = object()


class _Failure:
    def __init__(self, exc: BaseException):
        self.exc = exc


class Prefetcher:
    """Iterate ``source`` on a thread, at most ``max_cost`` (summed ``cost``) ahead."""

    def __init__(self, source: Iterable[Any], max_cost: int = 32768,
                 cost: Callable[[Any], int] = lambda item: 1, max_items: int = 10000):
        self._source = source
        self._cost = cost
        self._max_cost = max(1, int(max_cost))
        self._queue: "queue.Queue[Any]" = queue.Queue(maxsize=max(2, max_items))
        self._cond = threading.Condition()
        self._ahead = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="nnetmix-prefetch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for item in self._source:
                c = int(self._cost(item))
                with self._cond:
                    while not self._stop and self._ahead > 0 and self._ahead + c > self._max_cost:
                        self._cond.wait()
                    if self._stop:
                        return
                    self._ahead += c
                self._queue.put((item, c))
            self._queue.put(_END)
        except BaseException as e:  # handed to the consumer
            self._queue.put(_Failure(e))
        finally:
            close = getattr(self._source, "close", None)
            if self._stop and close is not None:
                try:
                    close()
                except Exception:
                    pass

    def __iter__(self) -> Iterator[Any]:
        while True:
            got = self._queue.get()
            if got is _END:
                return
            if isinstance(got, _Failure):
                raise got.exc
            item, c = got
            with self._cond:
                self._ahead -= c
                self._cond.notify_all()
            yield item

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        # drain so a reader blocked in put() can finish
        while self._thread.is_alive():
            try:
                self._queue.get(timeout=0.05)
            except queue.Empty:
                pass
        self._thread.join(timeout=1.0)

    def __enter__(self) -> "Prefetcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def maybe_prefetch(source: Iterable[Any], enabled: bool, max_cost: int,
                   cost: Callable[[Any], int]) -> tuple[Iterable[Any], Optional[Prefetcher]]:
    """(iterable, prefetcher-or-None): the source itself when prefetching is off."""
    if not enabled:
        return source, None
    p = Prefetcher(source, max_cost=max_cost, cost=cost)
    return p, p
