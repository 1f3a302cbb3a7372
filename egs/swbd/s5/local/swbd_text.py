#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Switchboard-1 transcript words as Kaldi's egs/swbd/s5c writes them.

The MS-State ("ms98") transcripts and dictionary mark partial words (``ab[solute]-``,
``-[th]at``), laughter inside a word (``[laughter-yeah]``), mispronunciations
(``[it'n/isn't]``), coinages in braces (``{yuppiedom}``) and alternate pronunciations
(``them_1``). Kaldi's local/swbd1_map_words.pl rewrites each such token to one written form, for
the transcripts and for the lexicon alike, mainly so that the many partial words sharing a
phone sequence do not each need a disambiguation symbol. :func:`map_word` applies the same
eight substitutions in the same order (each once, as Perl's ``s///`` without ``/g``), so the
words, and therefore duplicate counts, LM vocabulary and scores, are Kaldi's. One of them
(``AMMU[N]IT-``) gives ``ammn-t-``, not the ``AMMU-IT-`` its comment promises, because Perl's
``$3`` is unset there; we keep Kaldi's output.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import re
from typing import Iterable

__all__ = ["map_word", "map_words", "clean_transcript", "ms98_utt_id", "SILENCE_WORD",
           "ASIDE_MARKERS"]

#: Whole-segment silence in the ms98 transcripts; removed before anything else.
SILENCE_WORD = "[silence]"
#: Markers of speech addressed to someone else; Kaldi deletes them and keeps the words.
ASIDE_MARKERS = ("<b_aside>", "<e_aside>")

_NOT_BRACKET = r"[^\]\[]"
_RULES: list[tuple[re.Pattern, object]] = [
    # [laughter-story] -> story, keeping a trailing "-" (case-insensitive, as Kaldi's /i)
    (re.compile(r"^\[laughter-(.+)\](-?)$", re.I), r"\1\2"),
    # [it'n/isn't] -> it'n: the orthography of what was said (greedy, as Perl's .+)
    (re.compile(r"^\[(.+)/.+\](-?)$"), r"\1\2"),
    # -[an]y -> -y (the leading "-" is sometimes missing in the input)
    (re.compile(r"^(-?)\[" + _NOT_BRACKET + r"+\](.+)$"), r"-\2"),
    # ab[solute]- -> ab- (the trailing "-" is sometimes missing)
    (re.compile(r"^(.+)\[" + _NOT_BRACKET + r"+\](-?)$"), r"\1-"),
    # ex[specially]-/especially] -> ex (a mistake in the input)
    (re.compile(r"(" + _NOT_BRACKET + r"+)\[.+\]$"), r"\1"),
    # {yuppiedom} -> yuppiedom
    (re.compile(r"^\{(.+)\}$"), r"\1"),
    # a letter, bracketed letters, a letter: Perl's "$1-$3" with $3 unset is "<last letter>-"
    (re.compile(r"[A-Z]\[(" + _NOT_BRACKET + r")+\][A-Z]", re.I), lambda m: m.group(1) + "-"),
    # them_1 -> them, them_1's -> them's
    (re.compile(r"_\d"), ""),
]


def map_word(word: str) -> str:
    """One token rewritten as swbd1_map_words.pl rewrites it (case is kept)."""
    if "[" not in word and "{" not in word and "_" not in word:
        return word  # every rule needs one of these; most words have none
    for pattern, repl in _RULES:
        word = pattern.sub(repl, word, count=1)
    return word


def map_words(words: Iterable[str]) -> list[str]:
    """Every token of a transcript through :func:`map_word`."""
    return [map_word(w) for w in words]


def clean_transcript(words: Iterable[str]) -> list[str]:
    """The words of an ms98 segment without [silence] and the aside markers (any case).

    Kaldi (local/swbd1_data_prep.sh) deletes these before mapping and drops a segment that
    has no word left; the caller does the dropping.
    """
    out = []
    for w in words:
        if w.lower() == SILENCE_WORD:
            continue
        low = w.lower()
        for marker in ASIDE_MARKERS:  # substring removal, as Kaldi's s/<B_ASIDE>//gi
            while marker in low:
                i = low.index(marker)
                w, low = w[:i] + w[i + len(marker):], low[:i] + low[i + len(marker):]
        if w:
            out.append(w)
    return out


def ms98_utt_id(segment_id: str, start: float, end: float) -> str:
    """Kaldi's utterance id of an ms98 segment: ``sw2001A-ms98-a-0002`` at 0.977625-11.561375 s
    is ``sw02001-A_000098-001156`` (conversation with a 0 inserted after "sw", side, then
    start and end in hundredths of a second rounded half up, six digits)."""
    name, side = segment_id[:6], segment_id[6:7]
    if name.startswith("sw"):
        name = "sw0" + name[2:]
    return f"{name}-{side}_{int(100 * start + 0.5):06d}-{int(100 * end + 0.5):06d}"
