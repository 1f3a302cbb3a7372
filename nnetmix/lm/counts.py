"""N-gram counts of a text, as SRILM's ngram-count counts them, held in sorted numpy tables.

Each line is a sentence: ``<s>`` and ``</s>`` are added (not doubled when the line already has
them) and every k-gram inside the padded sentence is counted for k = 1..order (SRILM's
NgramCounts::countSentence). Blank lines are skipped, as SRILM's File::getline skips them.

Why numpy and not dicts of tuples: Switchboard's 3M words give some 6M distinct n-grams at order
4, which as Python tuples in dicts take gigabytes. Here a k-gram is the pair (index of its first
k-1 words in the order k-1 table, last word id), packed into one int64 key; ``np.unique`` over the
keys of all positions gives the sorted table and the counts. Word ids follow the C order of the
words, so table order is the C order of the n-grams, which is the order the ARPA file is written
in. Each k-gram also records the index of its last k-1 words (its *suffix*) in the order k-1
table: Kneser-Ney's continuation counts and the backoff lookups are then array indexing.
"""
from __future__ import annotations

import logging
import os
from array import array
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from nnetmix.data.io import split_fields
from nnetmix.lang.arpa import BOS, EOS, open_text
from nnetmix.lm.vocab import UNK, LmError, LmVocab

__all__ = ["NgramTable", "NgramCounts", "TextStats", "count_text", "count_lines", "count_sentences",
           "MAX_ORDER"]

logger = logging.getLogger(__name__)

MAX_ORDER = 4  #: orders 1-4, what the Kaldi recipes ask SRILM for


@dataclass
class TextStats:
    """SRILM's text statistics line: ``N sentences, M words, K OOVs``."""

    sentences: int = 0
    words: int = 0
    oovs: int = 0

    def __str__(self) -> str:
        return f"{self.sentences} sentences, {self.words} words, {self.oovs} OOVs"


@dataclass
class NgramTable:
    """The distinct k-grams of one order, sorted; row i is one k-gram.

    ``last``: id of its last word; ``prefix``/``suffix``: row of its first/last k-1 words in the
    order k-1 table (None at order 1, whose row i is word id i); ``count``: how often it occurs.
    """

    last: np.ndarray
    prefix: np.ndarray | None
    suffix: np.ndarray | None
    count: np.ndarray

    def __len__(self) -> int:
        return len(self.count)


@dataclass
class NgramCounts:
    """Counts of orders 1..order over ``vocab``; ``tables[k-1]`` holds the k-grams."""

    vocab: LmVocab
    tables: list[NgramTable]
    stats: TextStats

    @property
    def order(self) -> int:
        return len(self.tables)

    def words(self, k: int, rows: np.ndarray) -> np.ndarray:
        """The word ids of the given k-gram rows, shape (len(rows), k)."""
        out = np.empty((len(rows), k), dtype=np.int64)
        for j in range(k, 0, -1):
            table = self.tables[j - 1]
            out[:, j - 1] = table.last[rows]
            if j > 1:
                rows = table.prefix[rows]
        return out


def _check_order(order: int) -> None:
    if not 1 <= order <= MAX_ORDER:
        raise LmError(f"order {order} is not supported (orders 1 to {MAX_ORDER})")


def count_text(path: str | os.PathLike, order: int, vocab: Sequence[str] | None = None,
               unk_word: str = UNK, unk_is_word: bool = False) -> NgramCounts:
    """Count the n-grams of the text file ``path`` (plain or gzipped), one sentence a line.

    ``vocab`` closes the vocabulary (its words out of the text become ``unk_word``, each counted
    as an OOV, as SRILM counts them); without it every text word joins the vocabulary.
    """
    path = os.fspath(path)
    with open_text(path, "text file") as fh:
        try:
            return count_lines(fh, path, order, vocab, unk_word, unk_is_word)
        except (OSError, EOFError, UnicodeDecodeError) as e:
            raise LmError(f"{path}: cannot read text: {e}") from None


def count_sentences(sentences: Iterable[Sequence[str]], order: int,
                    vocab: Sequence[str] | None = None, unk_word: str = UNK,
                    unk_is_word: bool = False) -> NgramCounts:
    """:func:`count_text` for sentences already split into words (tests, library callers)."""
    return count_lines((" ".join(s) for s in sentences), "<sentences>", order, vocab, unk_word,
                       unk_is_word)


def count_lines(lines: Iterable[str], name: str, order: int, vocab: Sequence[str] | None = None,
                unk_word: str = UNK, unk_is_word: bool = False) -> NgramCounts:
    """:func:`count_text` over lines of text; ``name`` is the file, for messages."""
    _check_order(order)
    word_ids: dict[str, int] = {}
    for w in (BOS, EOS, unk_word, *(vocab or ())):
        word_ids.setdefault(w, len(word_ids))
    bos, eos, unk = word_ids[BOS], word_ids[EOS], word_ids[unk_word]
    closed = vocab is not None
    ids = array("l")  # a list of Python ints would take 4x the memory on 3M words
    lengths = array("l")
    stats = TextStats()
    get = word_ids.get
    for lineno, line in enumerate(lines, 1):
        toks = split_fields(line.rstrip("\n"))
        if not toks:
            continue
        if toks[0] == BOS:
            del toks[0]
        if toks and toks[-1] == EOS:
            toks.pop()
        if BOS in toks or EOS in toks:
            raise LmError(f"{name}:{lineno}: '{BOS}' or '{EOS}' inside a sentence (only at its "
                          "start or end)")
        if closed:
            sent = [get(w, unk) for w in toks]
            stats.oovs += sent.count(unk)
        else:
            sent = [word_ids.setdefault(w, len(word_ids)) for w in toks]
        ids.append(bos)
        ids.extend(sent)
        ids.append(eos)
        lengths.append(len(sent) + 2)
        stats.words += len(sent)
    if not lengths:
        raise LmError(f"{name}: no sentences")
    stats.sentences = len(lengths)
    return _count(word_ids, np.frombuffer(ids, dtype=np.int64) if ids.itemsize == 8
                  else np.asarray(ids, dtype=np.int64), np.asarray(lengths), order,
                  LmVocab.build(word_ids, unk_word, unk_is_word), stats)


def _count(word_ids: dict[str, int], ids: np.ndarray, lengths: np.ndarray, order: int,
           vocab: LmVocab, stats: TextStats) -> NgramCounts:
    """Renumber words in C order and build the sorted tables of orders 1..order."""
    # word_ids numbers words in order of appearance, after <s> = 0 and </s> = 1.
    num_words = len(vocab.words)
    remap = np.empty(num_words, dtype=np.int64)
    for w, i in word_ids.items():
        remap[i] = vocab.index[w]
    tok = remap[ids]
    del ids
    # tokens left in the sentence after each position: a k-gram starts where k-1 are left
    left = (np.repeat(np.cumsum(lengths) - 1, lengths) - np.arange(len(tok))).astype(np.int32)
    tables = [NgramTable(np.arange(num_words), None, None,
                         np.bincount(tok, minlength=num_words).astype(np.int64))]
    row = tok  # row of the k-gram starting at each position, -1 where none
    for k in range(2, order + 1):
        start = np.flatnonzero(left >= k - 1)
        keys = row[start].astype(np.int64) * num_words + tok[start + k - 1]
        uniq, first, inv, cnt = np.unique(keys, return_index=True, return_inverse=True,
                                          return_counts=True)
        del keys
        suffix = row[start[first] + 1]
        tables.append(NgramTable(uniq % num_words, uniq // num_words, suffix,
                                 cnt.astype(np.int64)))
        row = np.full(len(tok), -1, dtype=np.int64)
        row[start] = inv
        del uniq, first, inv, cnt, start
    logger.info("counted %s n-grams of orders 1-%d", "+".join(str(int((t.count > 0).sum()))
                                                           for t in tables), order)
    return NgramCounts(vocab, tables, stats)
