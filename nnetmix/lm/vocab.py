"""The vocabulary of an n-gram LM, with SRILM's special words and its rules for ``<unk>``.

What SRILM does (lm/src/Vocab.cc, ngram-count.cc), and so what nnetmix does:

- every vocabulary holds ``<s>``, ``</s>`` and the unknown-word token, which is ``<unk>`` or the
  word given with ``-map-unk`` (the literal ``<unk>`` is then an ordinary word);
- ``<s>`` is a *non-event*: a history, never predicted (its unigram is written with -99);
- the unknown-word token is a non-event too unless ``-unk`` is given (SRILM's "keep <unk> in
  LM"): then n-grams predicting it are dropped, histories containing it are skipped, and it is not
  in the ARPA file (a closed-vocabulary model); with ``-unk`` it is an ordinary word;
- with ``-vocab FILE`` (the first word of each line, so a Kaldi words.txt works) the vocabulary
  is closed: every text word outside it is replaced by the unknown-word token before counting,
  and every vocabulary word gets a unigram even if the text never has it; without ``-vocab``
  each text word joins the vocabulary.

``-limit-vocab`` only filters counts files and initial models (``-read``, ``-init-lm``), which
these tools do not read, so with ``-text`` it changes nothing, in SRILM as here. SRILM's pause
word ``-pau-`` is not special here.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from nnetmix.data.io import c_key, split_fields
from nnetmix.lang.arpa import BOS, EOS, open_text
from nnetmix.lang.symbols import LangError

__all__ = ["LmError", "LmVocab", "UNK", "read_vocab_file"]

UNK = "<unk>"


class LmError(LangError):
    """Text, vocabulary or options an n-gram estimator cannot work with."""


@dataclass
class LmVocab:
    """Words in C order (the id of a word is its position), and which of them are events."""

    words: list[str]
    unk_word: str = UNK
    unk_is_word: bool = False
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.index = {w: i for i, w in enumerate(self.words)}
        for w in (BOS, EOS, self.unk_word):
            if w not in self.index:
                raise LmError(f"vocabulary lacks the special word '{w}'")

    @classmethod
    def build(cls, words: Sequence[str], unk_word: str = UNK,
              unk_is_word: bool = False) -> "LmVocab":
        """The C-sorted vocabulary of ``words`` plus the three special words."""
        ws = set(words) | {BOS, EOS, unk_word}
        return cls(sorted(ws, key=c_key), unk_word, unk_is_word)

    @property
    def bos(self) -> int:
        return self.index[BOS]

    @property
    def eos(self) -> int:
        return self.index[EOS]

    @property
    def unk(self) -> int:
        return self.index[self.unk_word]

    def event_mask(self) -> np.ndarray:
        """True for the words the model predicts: all but <s> and a non-event unknown word."""
        mask = np.ones(len(self.words), dtype=bool)
        mask[self.bos] = False
        if not self.unk_is_word:
            mask[self.unk] = False
        return mask


def read_vocab_file(path: str | os.PathLike) -> list[str]:
    """The first word of each non-blank line, as SRILM's Vocab::read (plain or gzipped)."""
    words = []
    with open_text(path, "vocabulary file") as fh:
        for line in fh:
            fields = split_fields(line.rstrip("\n"))
            if fields:
                words.append(fields[0])
    if not words:
        raise LmError(f"{os.fspath(path)}: empty vocabulary file")
    return words
