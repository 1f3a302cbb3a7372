"""Word error rate as Kaldi's compute-wer reports it (src/bin/compute-wer.cc).

Errors per utterance come from the Levenshtein alignment of hypothesis against reference, with
Kaldi's split of ties into insertions, deletions and substitutions (LevenshteinEditDistance in
src/util/edit-distance-inl.h). kaldialign computes the same split (checked against a
transcription of Kaldi's recursion on random sequences: tests/score/test_score_wer.py).

Modes, as compute-wer's --mode: ``strict`` fails when a reference utterance has no hypothesis;
``present`` scores only the utterances with one; ``all`` scores a missing hypothesis as empty
(all deletions). Missing hypotheses mark the %WER line ``[PARTIAL]``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from nnetmix.errors import NnetmixError

__all__ = ["ScoreError", "WerStats", "MODES", "edit_distance", "align_ops", "compute_wer",
           "format_wer"]

MODES = ("strict", "present", "all")


class ScoreError(NnetmixError):
    """Scoring inputs do not fit together (a hypothesis missing in strict mode, a bad mode)."""


@dataclass
class WerStats:
    """compute-wer's totals."""

    num_words: int = 0
    word_errs: int = 0
    num_ins: int = 0
    num_del: int = 0
    num_sub: int = 0
    num_sent: int = 0
    sent_errs: int = 0
    num_absent: int = 0  #: reference utterances with no hypothesis

    @property
    def wer(self) -> float:
        return _percent(self.word_errs, self.num_words)

    @property
    def ser(self) -> float:
        return _percent(self.sent_errs, self.num_sent)


def _percent(num: int, den: int) -> float:
    """100 * num / den as compute-wer computes it (double arithmetic stored in a float32)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.float32(100.0 * float(np.float32(num)) / float(np.float32(den))) if den \
            else np.float32(math.nan if num == 0 else math.inf)
    return float(value)


def edit_distance(ref: Sequence[str], hyp: Sequence[str]) -> tuple[int, int, int]:
    """(insertions, deletions, substitutions) of ``hyp`` against ``ref``, split as Kaldi splits."""
    if list(ref) == list(hyp):
        return 0, 0, 0
    if not hyp:
        return 0, len(ref), 0
    if not ref:
        return len(hyp), 0, 0
    import kaldialign

    r = kaldialign.edit_distance(list(ref), list(hyp))
    return int(r["ins"]), int(r["del"]), int(r["sub"])


def align_ops(ref: Sequence[str], hyp: Sequence[str]) -> list[str]:
    """The alignment behind :func:`edit_distance`, one op per aligned pair, in reference order:
    ``C`` (correct), ``S`` (substitution), ``D`` (deletion), ``I`` (insertion).

    The significance tests need where the errors fall, not only how many there are; the ops
    split exactly as :func:`edit_distance` counts (kaldialign's unit-cost alignment; checked in
    tests/score/test_score_wer.py), so per-utterance error counts agree with compute-wer's.
    """
    ref, hyp = list(ref), list(hyp)
    if not hyp or not ref:
        return ["D"] * len(ref) + ["I"] * len(hyp)
    import kaldialign

    eps = " "  # tokens are split on spaces, so a space never is one; any other absent symbol works
    while eps in ref or eps in hyp:
        eps += " "
    return ["I" if r == eps else "D" if h == eps else "C" if r == h else "S"
            for r, h in kaldialign.align(ref, hyp, eps)]


def compute_wer(refs: Iterable[tuple[str, Sequence[str]]], hyps: Mapping[str, Sequence[str]],
                mode: str = "strict") -> WerStats:
    """Totals over ``refs`` (key, tokens), in order, against ``hyps``; modes: see the module."""
    if mode not in MODES:
        raise ScoreError(f"--mode must be one of {'|'.join(MODES)}, got '{mode}'")
    st = WerStats()
    for key, ref in refs:
        hyp = hyps.get(key)
        if hyp is None:
            if mode == "strict":
                raise ScoreError(f"No hypothesis for key {key} and strict mode specifier "
                                 "(use --mode=present or --mode=all to score anyway)")
            st.num_absent += 1
            if mode == "present":
                continue
            hyp = []
        ins, dele, sub = edit_distance(ref, hyp)
        st.num_words += len(ref)
        st.word_errs += ins + dele + sub
        st.num_ins += ins
        st.num_del += dele
        st.num_sub += sub
        st.num_sent += 1
        st.sent_errs += int(list(ref) != list(hyp))
    return st


def _fixed2(x: float) -> str:
    if math.isnan(x):
        return "-nan"
    return "inf" if math.isinf(x) else f"{x:.2f}"


def format_wer(st: WerStats) -> list[str]:
    """compute-wer's three output lines (without newlines)."""
    partial = " [PARTIAL]" if st.num_absent else ""
    return [
        f"%WER {_fixed2(st.wer)} [ {st.word_errs} / {st.num_words}, {st.num_ins} ins, "
        f"{st.num_del} del, {st.num_sub} sub ]{partial}",
        f"%SER {_fixed2(st.ser)} [ {st.sent_errs} / {st.num_sent} ]",
        f"Scored {st.num_sent} sentences, {st.num_absent} not present in hyp.",
    ]
