"""N-gram language models in ARPA format: estimation (bigram Kneser-Ney), reading, writing, checks.

The digits recipe estimates its LM from the training transcripts, so nnetmix needs no SRILM or
kaldi_lm. :func:`estimate_kn_bigram` gives an interpolated Kneser-Ney bigram (Chen & Goodman
1998, one absolute discount per order, D = n1 / (n1 + 2 n2) from the counts of counts): the
unigram level is the continuation distribution (how many distinct words precede w), itself
interpolated with a uniform distribution over the vocabulary so that words of the vocabulary
never seen in the text keep some probability. Written as a backoff model, an explicit bigram
keeps its interpolated probability and the history's backoff weight is
(1 - sum of its explicit bigrams) / (1 - sum of their unigram probabilities), so every history's
distribution sums to one; for an interpolated model that weight is the interpolation weight
gamma(v) itself (:func:`normalisation_error` checks the sums on any ARPA file).

Conventions as SRILM's: ``<s>`` is a unigram with log10 probability -99 (never predicted) and a
backoff weight; ``</s>`` is predicted but is no history; log10 everywhere.
"""
from __future__ import annotations

import math
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from nnetmix.data.io import ENCODING, atomic_open, c_key
from nnetmix.lang.symbols import LangError

__all__ = ["ArpaLm", "estimate_kn_bigram", "read_arpa", "write_arpa", "normalisation_error",
           "BOS", "EOS"]

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


def _fmt(x: float) -> str:
    return f"{x:.7f}".rstrip("0").rstrip(".") if x != _NEVER else "-99"


def write_arpa(path: str | os.PathLike, lm: ArpaLm) -> None:
    """Write ``lm`` as an ARPA file (tab-separated, as SRILM writes), atomically."""
    with atomic_open(path) as fh:
        fh.write("\n\\data\\\n")
        for n, grams in enumerate(lm.ngrams, 1):
            fh.write(f"ngram {n}={len(grams)}\n")
        for n, grams in enumerate(lm.ngrams, 1):
            fh.write(f"\n\\{n}-grams:\n")
            for words, (prob, bow) in grams.items():
                line = f"{_fmt(prob)}\t{' '.join(words)}"
                if bow is not None:
                    line += f"\t{_fmt(bow)}"
                fh.write(line + "\n")
        fh.write("\n\\end\\\n")


def read_arpa(path: str | os.PathLike) -> ArpaLm:
    """Read an ARPA file; LangError naming file and line where it is malformed."""
    path = os.fspath(path)
    try:
        with open(path, **ENCODING) as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        raise LangError(f"cannot read ARPA file {path}: {e.strerror}") from None
    counts: dict[int, int] = {}
    lm = ArpaLm()
    section = None  # 'data', n (int) or 'end'
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        where = f"{path}:{lineno}"
        if not line:
            continue
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
            if n != lm.order + 1 or n not in counts:
                raise LangError(f"{where}: section {line} out of order or not announced "
                                "in \\data\\")
            lm.ngrams.append({})
            section = n
            continue
        if section == "data":
            key, eq, val = line.partition("=")
            if not (key.startswith("ngram ") and eq and val.strip().isdigit()):
                raise LangError(f"{where}: expected 'ngram N=count', got '{line[:80]}'")
            counts[int(key.split()[1])] = int(val)
            continue
        if not isinstance(section, int):
            raise LangError(f"{where}: unexpected text outside the sections: '{line[:80]}'")
        fields = line.split()
        n = section
        if len(fields) not in (n + 1, n + 2):
            raise LangError(f"{where}: expected 'log10prob w1..w{n} [backoff]', got '{line[:80]}'")
        try:
            prob = float(fields[0])
            bow = float(fields[n + 1]) if len(fields) == n + 2 else None
        except ValueError:
            raise LangError(f"{where}: bad number in '{line[:80]}'") from None
        lm.ngrams[-1][tuple(fields[1:n + 1])] = (prob, bow)
    if section != "end":
        raise LangError(f"{path}: no \\end\\ line (truncated ARPA file?)")
    for n, grams in enumerate(lm.ngrams, 1):
        if counts.get(n) != len(grams):
            raise LangError(f"{path}: \\data\\ says ngram {n}={counts.get(n)}, the file has "
                            f"{len(grams)}")
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
