"""Perplexity of a text under an ARPA backoff model, as SRILM's ``ngram -ppl`` reports it.

Each non-blank line is a sentence; ``<s>`` and ``</s>`` are added unless the line has them.
A word the model lacks becomes the unknown-word token (``<unk>``, or ``-map-unk``'s word); when
the model has no probability for that either, the word is an OOV: it is left out of the log
probability and out of the denominators (SRILM's LM::sentenceProb). A word whose probability is
0 (written -99, e.g. ``<s>`` inside a sentence) is a *zeroprob* and left out the same way.
SRILM's two lines (TextStats' operator<<):

    file X: N sentences, M words, K OOVs
    Z zeroprobs, logprob= L ppl= P ppl1= Q

with L the sum of log10 p over the words and ``</s>``, P = 10^(-L / (M - K - Z + N)) and
Q = 10^(-L / (M - K - Z)); numbers have 6 significant digits, as in SRILM's own reference
outputs (lm/test/reference/*.stdout).
"""
from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass
from typing import Iterable, Sequence

from nnetmix.data.io import split_fields
from nnetmix.lang.arpa import BOS, EOS, ArpaLm, open_text
from nnetmix.lm.vocab import UNK

__all__ = ["PplStats", "sentence_ppl", "ppl_lines", "ppl_file", "text_words"]

logger = logging.getLogger(__name__)

#: log10 probabilities at or below SRILM's pseudo-zero are probability 0.
_LOG_ZERO = -99.0


def _g(x: float) -> str:
    """A number as SRILM's ppl lines print it (C++ stream, 6 significant digits)."""
    return f"{x:.6g}"


@dataclass
class PplStats:
    """Sentences, words, OOVs, zero-probability words and the total log10 probability."""

    sentences: int = 0
    words: int = 0
    oovs: int = 0
    zeroprobs: int = 0
    logprob: float = 0.0

    def add(self, other: "PplStats") -> None:
        self.sentences += other.sentences
        self.words += other.words
        self.oovs += other.oovs
        self.zeroprobs += other.zeroprobs
        self.logprob += other.logprob

    @property
    def ppl(self) -> float:
        denom = self.words - self.oovs - self.zeroprobs + self.sentences
        return 10.0 ** (-self.logprob / denom) if denom > 0 else math.nan

    @property
    def ppl1(self) -> float:
        denom = self.words - self.oovs - self.zeroprobs
        return 10.0 ** (-self.logprob / denom) if denom > 0 else math.nan

    def format(self) -> str:
        """SRILM's two lines (without the ``file X: `` prefix), newline-terminated."""
        out = f"{self.sentences} sentences, {self.words} words, {self.oovs} OOVs\n"
        if self.words + self.sentences > 0:
            ppl = "undefined" if math.isnan(self.ppl) else _g(self.ppl)
            ppl1 = "undefined" if math.isnan(self.ppl1) else _g(self.ppl1)
            out += (f"{self.zeroprobs} zeroprobs, logprob= {_g(self.logprob)} ppl= {ppl} "
                    f"ppl1= {ppl1}\n")
        return out


def sentence_ppl(lm: ArpaLm, words: Sequence[str], unk_word: str = UNK) -> PplStats:
    """The statistics of one sentence (its words, without <s> and </s>)."""
    vocab = lm.ngrams[0]
    toks = list(words)
    if toks and toks[0] == BOS:
        toks = toks[1:]
    if toks and toks[-1] == EOS:
        toks = toks[:-1]
    st = PplStats(sentences=1, words=len(toks))
    mapped = [w if (w,) in vocab else unk_word for w in toks]
    history = [BOS]
    keep = max(lm.order - 1, 0)
    for w in mapped + [EOS]:
        if (w,) not in vocab:
            st.oovs += 1  # the unknown-word token has no probability either
        else:
            lp = lm.log10_prob(w, history[len(history) - keep:] if keep else ())
            if lp <= _LOG_ZERO:
                st.zeroprobs += 1
            else:
                st.logprob += lp
        history.append(w)
    return st


def ppl_lines(lm: ArpaLm, lines: Iterable[str], unk_word: str = UNK,
              per_sentence: bool = False, out=None) -> PplStats:
    """Statistics of every non-blank line; with ``per_sentence`` each sentence's (``-debug 1``)
    is written to ``out`` first, as SRILM writes them."""
    total = PplStats()
    for line in lines:
        words = split_fields(line.rstrip("\n"))
        if not words:
            continue
        st = sentence_ppl(lm, words, unk_word)
        if per_sentence and out is not None:
            out.write(" ".join(words) + "\n" + st.format() + "\n")
        total.add(st)
    return total


def ppl_file(lm: ArpaLm, path: str | os.PathLike, unk_word: str = UNK,
             per_sentence: bool = False, out=None) -> PplStats:
    """:func:`ppl_lines` over a text file (plain or gzipped)."""
    with open_text(path, "text file") as fh:
        return ppl_lines(lm, fh, unk_word, per_sentence, out)


def text_words(path: str | os.PathLike, unk_word: str = UNK) -> set[str]:
    """Every word of a text plus <s>, </s> and the unknown word: the n-grams made of these are
    all that scoring the text needs (``read_arpa(only_words=...)``)."""
    words = {BOS, EOS, unk_word}
    with open_text(path, "text file") as fh:
        for line in fh:
            words.update(split_fields(line.rstrip("\n")))
    return words
