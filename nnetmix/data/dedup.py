"""Limit how often one transcript may occur in a data directory (utils/data/remove_dup_utts.sh).

Switchboard has thousands of "uh-huh" and "yeah" utterances; Kaldi's s5c keeps at most about
300 of any one transcript in train_nodup. Its rule, kept here so that the same utterances are
chosen: a transcript seen n times in all is kept outright when n < max_count, otherwise each of
its utterances is kept when the next number of a fixed generator is below max_count / n. The
generator is Kaldi's own (k <- (k + 103349) mod 71147, value k / 71147, from k = 0), advanced
only for such utterances, in file order, so the choice is the same on every run and machine.
"""
from __future__ import annotations

from typing import Iterable

from nnetmix.errors import UsageError

__all__ = ["select_dup_limited", "KaldiDupRandom"]


class KaldiDupRandom:
    """The predictable sequence of remove_dup_utts.sh's ``random()``."""

    P1, P2 = 103349, 71147

    def __init__(self) -> None:
        self.k = 0

    def __call__(self) -> float:
        self.k = (self.k + self.P1) % self.P2
        return self.k / self.P2


def select_dup_limited(text: Iterable[tuple[str, str]], max_count: int) -> list[str]:
    """The utterance ids of ``(utt, transcript)`` pairs (file order) that are kept.

    A transcript is its words joined by single spaces, so spacing does not matter.
    """
    if max_count <= 1:
        raise UsageError(f"max-count must be greater than 1, got {max_count}")
    items = [(u, " ".join(t.split())) for u, t in text]
    count: dict[str, int] = {}
    for _, t in items:
        count[t] = count.get(t, 0) + 1
    rand = KaldiDupRandom()
    return [u for u, t in items if count[t] < max_count or rand() < max_count / count[t]]
