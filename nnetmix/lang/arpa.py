"""N-gram language models in ARPA format: reading, writing, checks, and the digits bigram estimator.

The ARPA reader and writer here are the only ones in nnetmix: the digits recipe's bigram and the
SRILM-style estimator of :mod:`nnetmix.lm` (orders 1-4) both write through :func:`write_arpa`,
and ``ngram.py -ppl``, ``format_lm.sh``'s checks and the tests read through :func:`read_arpa`.
Files ending in ``.gz`` are written gzipped (as SRILM's File class does by suffix); gzipped input
is recognised by its magic bytes, whatever its name.

:func:`estimate_kn_bigram` gives the digits recipe's interpolated Kneser-Ney bigram (Chen &
Goodman 1998, one absolute discount per order, D = n1 / (n1 + 2 n2) from the counts of counts):
the unigram level is the continuation distribution (how many distinct words precede w), itself
interpolated with a uniform distribution over the vocabulary so that words of the vocabulary
never seen in the text keep some probability. Written as a backoff model, an explicit bigram
keeps its interpolated probability and the history's backoff weight is
(1 - sum of its explicit bigrams) / (1 - sum of their unigram probabilities), so every history's
distribution sums to one; for an interpolated model that weight is the interpolation weight
gamma(v) itself (:func:`normalisation_error` checks the sums on any ARPA file). It differs from
SRILM's ``-ukndiscount -interpolate`` (:mod:`nnetmix.lm`) in three deliberate ways that keep the
digits G.fst as it is: D falls back to 0.5 when n1 or n2 is zero and is kept within [0.1, 0.9]
(SRILM stops with "one of required KneserNey count-of-counts is zero", which it does on the
digits transcripts), a history followed by every word keeps log10(gamma) as its backoff weight
(SRILM writes 0 there, which makes G's backoff arc cheaper than some explicit bigrams), and an
empty sentence counts as "<s> </s>" (SRILM skips blank lines).

Conventions as SRILM's: ``<s>`` is a unigram with log10 probability -99 (never predicted) and a
backoff weight; ``</s>`` is predicted but is no history; log10 everywhere.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import math
import os
import shutil
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import IO, Iterable, Iterator, Protocol, Sequence

import numpy as np
from nnetmix.data.io import ENCODING, c_key
from nnetmix.lang.symbols import LangError
from nnetmix.outfile import output_file

__all__ = ["ArpaLm", "ArpaSource", "estimate_kn_bigram", "read_arpa", "write_arpa",
           "normalisation_error", "open_text", "atomic_text_writer", "BOS", "EOS"]

BOS, EOS = "<s>", "</s>"
_NEVER = -99.0  #: log10 probability SRILM writes for <s>


@dataclass
class ArpaLm:
    """``ngrams[n-1][(w1, ..., wn)] = (log10 prob, log10 backoff or None)``."""

    ngrams: list[dict[tuple[str, ...], tuple[float, float | None]]] = field(default_factory=list)

    @property
    def order(self) -> int:
        return len(self.ngrams)

    @property
    def vocab(self) -> list[str]:
        return [w[0] for w in self.ngrams[0]] if self.ngrams else []

    def num_ngrams(self) -> list[int]:
        return [len(g) for g in self.ngrams]

    def chunks(self, n: int) -> Iterator[tuple[list[str], np.ndarray, np.ndarray | None]]:
        """The n-grams of order ``n`` for :func:`write_arpa`, in one chunk."""
        grams = self.ngrams[n - 1]
        words = [" ".join(w) for w in grams]
        probs = np.array([p for p, _ in grams.values()], dtype=np.float64)
        bows = np.array([np.nan if b is None else b for _, b in grams.values()], dtype=np.float64)
        yield words, probs, bows

    def log10_prob(self, word: str, history: Sequence[str]) -> float:
        """log10 p(word | history) with backoff; history is the preceding words, oldest first."""
        hist = tuple(history)[-(self.order - 1):] if self.order > 1 else ()
        bow = 0.0
        while True:
            entry = self.ngrams[len(hist)].get(hist + (word,))
            if entry is not None:
                return bow + entry[0]
            if not hist:
                raise LangError(f"word '{word}' is not in the language model")
            hb = self.ngrams[len(hist) - 1].get(hist)
            if hb is not None and hb[1] is not None:
                bow += hb[1]
            hist = hist[1:]


def _discount(counts: Iterable[int]) -> float:
    """D = n1 / (n1 + 2 n2); 0.5 where the counts of counts can't say (tiny or uniform data)."""
    coc = Counter(counts)
    n1, n2 = coc.get(1, 0), coc.get(2, 0)
    if n1 == 0 or n2 == 0:
        return 0.5
    return min(max(n1 / (n1 + 2.0 * n2), 0.1), 0.9)


def estimate_kn_bigram(sentences: Iterable[Sequence[str]], vocab: Iterable[str] = (),
                       order: int = 2) -> ArpaLm:
    """An interpolated Kneser-Ney LM of ``order`` 1 or 2 from tokenised sentences.

    ``vocab`` adds words that may not occur in the text (they get a share of the uniform mass).
    """
    if order not in (1, 2):
        raise LangError(f"only unigram and bigram models are estimated here, asked for "
                        f"order {order}")
    bigrams: Counter[tuple[str, str]] = Counter()
    unigrams: Counter[str] = Counter()
    nsent = 0
    for sent in sentences:
        if BOS in sent or EOS in sent:
            raise LangError(f"<s> or </s> inside a sentence: '{' '.join(sent)[:80]}'")
        toks = [BOS, *sent, EOS]
        nsent += 1
        unigrams.update(toks[1:])
        bigrams.update(zip(toks[:-1], toks[1:]))
    if nsent == 0:
        raise LangError("no sentences to estimate a language model from")
    words = set(unigrams) | set(vocab) | {EOS}
    words.discard(BOS)
    predicted = sorted(words, key=c_key)

    # Unigram level: continuation counts (order 2) or plain counts (order 1), discounted and
    # interpolated with the uniform distribution over the predicted words.
    if order == 2:
        cont = Counter(w for (_, w) in bigrams)
    else:
        cont = unigrams
    total = sum(cont.values())
    d1 = _discount(cont.values())
    seen = sum(1 for w in predicted if cont.get(w, 0) > 0)
    lam = d1 * seen / total
    p_uni = {w: max(cont.get(w, 0) - d1, 0.0) / total + lam / len(predicted) for w in predicted}

    uni: dict[tuple[str, ...], tuple[float, float | None]] = {}
    lm = ArpaLm([uni])
    if order == 1:
        for w in predicted:
            uni[(w,)] = (math.log10(p_uni[w]), None)
        return lm

    d2 = _discount(bigrams.values())
    by_hist: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for (v, w), c in bigrams.items():
        by_hist[v].append((w, c))
    bi: dict[tuple[str, ...], tuple[float, float | None]] = {}
    bows: dict[str, float] = {}
    for v, succ in by_hist.items():
        cv = sum(c for _, c in succ)
        gamma = d2 * len(succ) / cv
        for w, c in succ:
            p = (c - d2) / cv + gamma * p_uni[w]
            bi[(v, w)] = (math.log10(p), None)
        # The weight that makes the history sum to one, (1 - sum of its bigrams) / (1 - sum of
        # their unigrams), is exactly gamma for an interpolated model; gamma stays well defined
        # where the history was followed by every word (both sums 1), and keeps the backoff arc
        # of G no cheaper than the bigrams it stands beside.
        bows[v] = gamma
    uni[(BOS,)] = (_NEVER, math.log10(bows[BOS]) if BOS in bows else 0.0)
    for w in predicted:
        bow = None if w == EOS else math.log10(bows[w]) if w in bows else 0.0
        uni[(w,)] = (math.log10(p_uni[w]), bow)
    lm.ngrams.append(dict(sorted(bi.items(), key=lambda kv: (c_key(kv[0][0]), c_key(kv[0][1])))))
    return lm


class ArpaSource(Protocol):
    """What :func:`write_arpa` writes: :class:`ArpaLm`, or :class:`nnetmix.lm.BackoffLm`, whose
    millions of n-grams live in numpy arrays rather than dicts.

    ``chunks(n)`` yields the order-n n-grams in file order, a block at a time, as (their words
    joined by spaces, log10 probabilities, log10 backoff weights with NaN where none is written).
    """

    def num_ngrams(self) -> list[int]: ...

    def chunks(self, n: int) -> Iterable[tuple[list[str], np.ndarray, np.ndarray | None]]: ...


def _fmt_all(values: np.ndarray) -> list[str]:
    """7 decimals of log10 without trailing zeros (SRILM writes 7 significant digits); log 0 and
    anything below SRILM's pseudo-zero is -99. A list comprehension: millions of numbers."""
    vals = np.maximum(np.nan_to_num(values, nan=0.0, neginf=_NEVER), _NEVER).tolist()
    return [f"{x:.7f}".rstrip("0").rstrip(".") for x in vals]


def open_text(path: str | os.PathLike, what: str = "file") -> IO[str]:
    """Open ``path`` for reading text, gunzipping it when it starts with gzip's magic bytes.

    ``-`` is standard input. LangError naming the file when it cannot be opened.
    """
    path = os.fspath(path)
    if path == "-":
        import sys
        return io.TextIOWrapper(sys.stdin.buffer, **ENCODING)
    try:
        raw = open(path, "rb")
    except OSError as e:
        raise LangError(f"cannot read {what} {path}: {e.strerror}") from None
    if raw.peek(2)[:2] == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw, mode="rb"), **ENCODING)
    return io.TextIOWrapper(raw, **ENCODING)


@contextlib.contextmanager
def atomic_text_writer(path: str | os.PathLike) -> Iterator[IO[str]]:
    """Write text to a temporary file next to ``path`` and rename it on success; gzipped when the
    name ends in ``.gz`` (SRILM decides by the suffix too).

    Gzip output goes through the system's ``gzip -c -n`` when there is one (as SRILM pipes it),
    so compressing runs on another core while Python formats; else through Python's gzip.
    """
    path = os.fspath(path)
    with output_file(path, "wb") as raw:  # nnetmix.outfile: the temporary file and its rename
        if path.endswith(".gz") and shutil.which("gzip"):
            proc = subprocess.Popen(["gzip", "-c", "-n"], stdin=subprocess.PIPE, stdout=raw)
            try:
                with io.TextIOWrapper(proc.stdin, newline="\n", **ENCODING) as fh:
                    yield fh
            finally:
                if proc.wait() != 0:
                    raise LangError(f"gzip failed writing {path} (exit code {proc.returncode})")
        elif path.endswith(".gz"):
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz, \
                    io.TextIOWrapper(gz, newline="\n", **ENCODING) as fh:
                yield fh
        else:
            with io.TextIOWrapper(raw, newline="\n", **ENCODING) as fh:
                yield fh


def write_arpa(path: str | os.PathLike, lm: ArpaSource) -> None:
    """Write ``lm`` as an ARPA file (tab-separated, as SRILM writes), atomically; ``.gz`` gzips."""
    counts = lm.num_ngrams()
    with atomic_text_writer(path) as fh:
        fh.write("\n\\data\\\n")
        for n, num in enumerate(counts, 1):
            fh.write(f"ngram {n}={num}\n")
        for n in range(1, len(counts) + 1):
            fh.write(f"\n\\{n}-grams:\n")
            for words, probs, bows in lm.chunks(n):
                ps = _fmt_all(probs)
                if bows is None or np.isnan(bows).all():
                    fh.write("".join([f"{p}\t{w}\n" for p, w in zip(ps, words)]))
                    continue
                bs = _fmt_all(bows)
                has = (~np.isnan(bows)).tolist()
                fh.write("".join([f"{p}\t{w}\t{b}\n" if h else f"{p}\t{w}\n"
                                  for p, w, b, h in zip(ps, words, bs, has)]))
        fh.write("\n\\end\\\n")


def read_arpa(path: str | os.PathLike, max_order: int = 0,
              only_words: set[str] | None = None) -> ArpaLm:
    """Read an ARPA file (plain or gzipped); LangError naming file and line where it is malformed.

    ``max_order`` > 0 keeps only the n-grams up to that order (SRILM ngram's ``-order``).
    ``only_words`` keeps, above the unigrams, only n-grams made of those words: all that scoring
    a text made of them needs (SRILM ngram's ``-limit-vocab``), and a fraction of the memory.
    """
    path = os.fspath(path)
    counts: dict[int, int] = {}
    lm = ArpaLm()
    section = None  # 'data', n (int) or 'end'
    grams: dict[tuple[str, ...], tuple[float, float | None]] = {}
    skip, last_n = False, 0
    seen: list[int] = []
    with open_text(path, "ARPA file") as fh:
        try:
            for lineno, raw in enumerate(fh, 1):
                line = raw.strip()
                if not line:
                    continue
                if section == "data" or not isinstance(section, int) or line[0] == "\\":
                    where = f"{path}:{lineno}"
                    if line == "\\data\\":
                        section = "data"
                        continue
                    if line == "\\end\\":
                        section = "end"
                        break
                    if line.startswith("\\") and line.endswith("-grams:"):
                        try:
                            n = int(line[1:-len("-grams:")])
                        except ValueError:
                            raise LangError(f"{where}: bad section header '{line}'") from None
                        if n != last_n + 1 or n not in counts:
                            raise LangError(f"{where}: section {line} out of order or not "
                                            "announced in \\data\\")
                        last_n = section = n
                        if max_order and n > max_order:
                            skip = True
                            continue
                        grams = {}
                        lm.ngrams.append(grams)
                        seen.append(0)
                        continue
                    if section == "data":
                        key, eq, val = line.partition("=")
                        if not (key.startswith("ngram ") and eq and val.strip().isdigit()):
                            raise LangError(f"{where}: expected 'ngram N=count', got "
                                            f"'{line[:80]}'")
                        counts[int(key.split()[1])] = int(val)
                        continue
                    raise LangError(f"{where}: unexpected text outside the sections: "
                                    f"'{line[:80]}'")
                if skip:
                    continue
                fields = line.split()
                n = section
                if len(fields) == n + 1:
                    bow = None
                elif len(fields) == n + 2:
                    try:
                        bow = float(fields[n + 1])
                    except ValueError:
                        raise LangError(f"{path}:{lineno}: bad number in '{line[:80]}'") from None
                else:
                    raise LangError(f"{path}:{lineno}: expected 'log10prob w1..w{n} [backoff]', "
                                    f"got '{line[:80]}'")
                try:
                    prob = float(fields[0])
                except ValueError:
                    raise LangError(f"{path}:{lineno}: bad number in '{line[:80]}'") from None
                seen[-1] += 1
                key = tuple(fields[1:n + 1])
                if n == 1 or only_words is None or only_words.issuperset(key):
                    grams[key] = (prob, bow)
        except (OSError, EOFError, UnicodeDecodeError) as e:
            raise LangError(f"{path}: cannot read ARPA file: {e}") from None
    if section != "end":
        raise LangError(f"{path}: no \\end\\ line (truncated ARPA file?)")
    for n, num in enumerate(seen, 1):
        if counts.get(n) != num:
            raise LangError(f"{path}: \\data\\ says ngram {n}={counts.get(n)}, the file has "
                            f"{num}")
    if not lm.ngrams:
        raise LangError(f"{path}: no n-grams")
    return lm


def normalisation_error(lm: ArpaLm) -> tuple[float, tuple[str, ...]]:
    """The largest |sum_w p(w | h) - 1| over the unigram level and every history in the model.

    Histories are the n-grams of every order below the top one that can be continued (so not
    ones ending in </s>); w ranges over the vocabulary except <s>. Returns (error, history).
    """
    words = [w for w in lm.vocab if w != BOS]
    worst, worst_h = 0.0, ()
    histories: list[tuple[str, ...]] = [()]
    for grams in lm.ngrams[:-1]:
        histories += [h for h in grams if h[-1] != EOS]
    for h in histories:
        total = sum(10.0 ** lm.log10_prob(w, h) for w in words)
        if abs(total - 1.0) > worst:
            worst, worst_h = abs(total - 1.0), h
    return worst, worst_h
