"""Kneser-Ney backoff n-gram models, estimated as SRILM's ``ngram-count`` estimates them.

``ngram-count -order N -kndiscount [-interpolate]`` (modified KN) or ``-ukndiscount`` (original
KN), orders 1-4, following SRILM's Ngram::estimate (lm/src/NgramLM.cc) step by step so that the
ARPA files agree:

1. Counts. The top order keeps its counts; a lower-order n-gram's count becomes the number of
   distinct words that precede it (its continuation count), except n-grams starting with a
   non-event (``<s>``), which nothing can precede and which keep their counts.
2. Discounts per order from the counts of counts (:mod:`nnetmix.lm.discount`).
3. Order by order, for every history h (skipping histories that end in ``</s>`` or contain a
   non-event ``<unk>``): p(w|h) = (c(hw) - D(c)) / c(h), plus, with ``-interpolate``,
   gamma(h) p(w|h'), where p(.|h') is the finished lower-order backoff model and, below the
   unigrams, the uniform distribution over the events. n-grams counted fewer than ``-gtNmin``
   times are left out (SRILM's defaults: 1, 1, 2, 2 for orders 1-4), which moves their mass to the
   backoff. Where the explicit probabilities of a history leave less than 3e-6 of mass although
   some words were never seen after it, SRILM retries that history without interpolation and then
   with the denominator increased by one until some mass is left; so do we.
4. Backoff weights: bow(h) = (1 - sum of the explicit p(w|h)) / (1 - sum of their p(w|h')),
   which for an interpolated model is gamma(h), so the ARPA file gives exactly the interpolated
   distribution. SRILM's guards against rounding apply (sums within 3e-6 of 0 are 0; a history
   whose backoff would have no mass left gets its probabilities scaled to sum to 1 and bow 1).
   The unigrams' left-over mass goes to the vocabulary words never seen (or, if there are none,
   is spread over all words); ``<s>`` is written with -99.
5. Every history and every prefix of a history gets an explicit probability (the backed-off one
   when it had none, SRILM's fixupProbs), as the ARPA format requires.

Probabilities are kept in float64 (SRILM stores float32), so numbers can differ from SRILM's in the
seventh significant digit.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from nnetmix.lang.arpa import ArpaLm
from nnetmix.lm.counts import MAX_ORDER, NgramCounts
from nnetmix.lm.discount import KnDiscount, count_of_counts, kn_discount
from nnetmix.lm.vocab import LmError, LmVocab
from nnetmix.options import option

__all__ = ["KnOptions", "BackoffLm", "estimate_kn", "SRILM_GTMIN"]

logger = logging.getLogger(__name__)

#: SRILM's Prob_Epsilon: probability sums closer than this to 0 (or 1) count as 0 (or 1).
PROB_EPSILON = 3e-6
#: ngram-count's default minimum counts -gt1min..-gt4min (gtmin[] in ngram-count.cc).
SRILM_GTMIN = (1, 1, 2, 2)


@dataclass
class KnOptions:
    """What ngram-count's options choose; defaults are SRILM's (interpolation is off there)."""

    order: int = option(3, "n-gram order, 1-4 (-order)")
    modified: bool = option(True, "modified KN, three discounts (-kndiscount); false: one "
                                  "discount (-ukndiscount)")
    interpolate: bool = option(False, "interpolate with the lower order (-interpolate)")
    gtmin: tuple[int, ...] = option(SRILM_GTMIN, "minimum count per order (-gt1min..-gt4min)")


@dataclass
class _Level:
    """One order of the estimated model, aligned with the rows of its count table."""

    keep: np.ndarray   #: bool: the n-gram has an explicit probability in the model
    logp: np.ndarray   #: log10 p(w|h) where keep (else nan)
    pbo: np.ndarray    #: log10 of the backed-off probability of every counted n-gram
    bow: np.ndarray    #: log10 backoff weight of the n-gram as a history (0 if none computed)
    node: np.ndarray | None = None  #: bool: a history in the model (its bow is written)


class BackoffLm:
    """An estimated backoff model over the rows of its :class:`NgramCounts`; an ArpaSource."""

    def __init__(self, counts: NgramCounts, levels: list[_Level], discounts: list[KnDiscount]):
        self.counts = counts
        self.levels = levels
        self.discounts = discounts

    @property
    def order(self) -> int:
        return len(self.levels)

    @property
    def vocab(self) -> LmVocab:
        return self.counts.vocab

    def num_ngrams(self) -> list[int]:
        return [int(lv.keep.sum()) for lv in self.levels]

    def chunks(self, n: int, size: int = 100_000):
        """The order-n n-grams in C order for write_arpa, ``size`` at a time: (words joined by
        spaces, log10 probs, log10 bows with NaN where the n-gram is no history)."""
        lv = self.levels[n - 1]
        all_rows = np.flatnonzero(lv.keep)
        names = np.asarray(self.vocab.words, dtype=object)
        for start in range(0, len(all_rows), size):
            rows = all_rows[start:start + size]
            ids = self.counts.words(n, rows)
            cols = [names[ids[:, j]] for j in range(n)]
            words = cols[0].tolist() if n == 1 else [" ".join(t) for t in zip(*cols)]
            bows = None if lv.node is None else np.where(lv.node[rows], lv.bow[rows], np.nan)
            yield words, lv.logp[rows], bows

    def entries(self, n: int):
        """(words, log10 prob, log10 bow or None) of the order-n n-grams, in C order."""
        for words, probs, bows in self.chunks(n):
            bl = [None] * len(words) if bows is None else \
                [None if b != b else b for b in bows.tolist()]
            yield from zip(words, probs.tolist(), bl)

    def to_arpa_lm(self) -> ArpaLm:
        """The model as an :class:`ArpaLm` of dicts (for lookups on small models and tests)."""
        lm = ArpaLm()
        for n in range(1, self.order + 1):
            lm.ngrams.append({tuple(w.split(" ")): (p, b) for w, p, b in self.entries(n)})
        return lm


def estimate_kn(counts: NgramCounts, opts: KnOptions) -> BackoffLm:
    """Estimate the Kneser-Ney backoff model of ``counts`` (see the module docstring)."""
    order = opts.order
    if not 1 <= order <= MAX_ORDER:
        raise LmError(f"order {order} is not supported (orders 1 to {MAX_ORDER})")
    if order > counts.order:
        raise LmError(f"order {order} asked for, but only counts up to order {counts.order}")
    if len(opts.gtmin) < order:
        raise LmError(f"need a minimum count for each of the {order} orders, got {opts.gtmin}")
    vocab = counts.vocab
    tables = counts.tables[:order]
    event = vocab.event_mask()
    num_events = int(event.sum())
    first, ctx_ok = _history_masks(counts, order)
    mcounts = _kn_counts(counts, order, event, first)
    discounts = []
    for k in range(1, order + 1):
        live = event[tables[k - 1].last]
        d = kn_discount(count_of_counts(mcounts[k - 1][live]), opts.modified, k)
        logger.info("order %d: %s", k, d.describe())
        discounts.append(d)
    levels: list[_Level] = []
    for k in range(1, order + 1):
        levels.append(_estimate_order(k, counts, mcounts[k - 1], discounts[k - 1], opts,
                                      event, num_events, ctx_ok, levels))
    _fixup(counts, levels)
    return BackoffLm(counts, levels, discounts)


def _history_masks(counts: NgramCounts, order: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """First word of every n-gram, and whether the n-gram can be a history: SRILM skips histories
    ending in </s> and, when <unk> is a non-event, histories containing it."""
    vocab = counts.vocab
    unk_nonevent = not vocab.unk_is_word
    ids = np.arange(len(vocab.words))
    first = [ids]
    has_unk = [(ids == vocab.unk) & unk_nonevent]
    for k in range(2, order + 1):
        t = counts.tables[k - 1]
        first.append(first[k - 2][t.prefix])
        has_unk.append(has_unk[k - 2][t.prefix] | ((t.last == vocab.unk) & unk_nonevent))
    ctx_ok = [(counts.tables[k - 1].last != vocab.eos) & ~has_unk[k - 1]
              for k in range(1, order + 1)]
    return first, ctx_ok


def _kn_counts(counts: NgramCounts, order: int, event: np.ndarray,
               first: list[np.ndarray]) -> list[np.ndarray]:
    """The top order's counts, and continuation counts below it (SRILM's prepareCounts)."""
    out = []
    for k in range(1, order + 1):
        raw = counts.tables[k - 1].count
        if k == order:
            out.append(raw)
            continue
        cont = np.bincount(counts.tables[k].suffix, minlength=len(raw)).astype(np.int64)
        out.append(np.where(event[first[k - 1]], cont, raw))
    return out


def _estimate_order(k: int, counts: NgramCounts, c: np.ndarray, disc: KnDiscount,
                    opts: KnOptions, event: np.ndarray, num_events: int,
                    ctx_ok: list[np.ndarray], levels: list[_Level]) -> _Level:
    """Probabilities of order k, then the backoff weights of the order k-1 histories."""
    table = counts.tables[k - 1]
    n = len(table)
    cand = (c > 0) & event[table.last]
    if k > 1:
        cand &= ctx_ok[k - 2][table.prefix]
        hist_all = table.prefix
        num_ctx = len(counts.tables[k - 2])
    else:
        hist_all = np.zeros(n, dtype=np.int64)
        num_ctx = 1
    rows = np.flatnonzero(cand)
    hist = hist_all[rows]
    cnt = c[rows].astype(np.float64)
    total = np.bincount(hist, weights=cnt, minlength=num_ctx)
    seen1 = np.bincount(hist, minlength=num_ctx)
    seen2 = np.bincount(hist[cnt >= 2], minlength=num_ctx)
    seen3 = np.bincount(hist[cnt >= 3], minlength=num_ctx)
    gamma = disc.lower_order_weight(total, seen1, seen2, seen3)
    minus_d = cnt - disc.of_counts(cnt)
    if k == 1:
        p_low = np.full(len(rows), 1.0 / num_events)
    else:
        p_low = 10.0 ** levels[k - 2].pbo[table.suffix[rows]]
    kept = cnt >= opts.gtmin[k - 1]
    interp = np.full(num_ctx, opts.interpolate)
    denom = total.copy()
    retried = np.zeros(num_ctx, dtype=bool)
    while True:
        with np.errstate(divide="ignore", invalid="ignore"):
            p = minus_d / denom[hist] + np.where(interp[hist], gamma[hist] * p_low, 0.0)
        mass = np.bincount(hist[kept], weights=p[kept], minlength=num_ctx)
        bad = (total > 0) & (seen1 < num_events) & (mass > 1.0 - PROB_EPSILON)
        if not bad.any():
            break
        # SRILM's retry (a hack it credits to Doug Paul): first drop interpolation, then add one
        # to the denominator, until the history leaves some mass to back off with.
        retried |= bad
        denom[bad & ~interp] += 1
        interp[bad] = False
    if retried.any():
        logger.warning("order %d: %d histories left no backoff mass; retried them as SRILM "
                       "does (no interpolation, then a larger denominator)", k,
                       int(retried.sum()))
    rows, hist, p, p_low = rows[kept], hist[kept], p[kept], p_low[kept]
    keep = np.zeros(n, dtype=bool)
    keep[rows] = True
    if k == 1:
        p = _unigram_leftover(counts.vocab, event, num_events, rows, p, keep)
        rows = np.flatnonzero(keep)
        logp = np.full(n, np.nan)
        with np.errstate(divide="ignore"):
            logp[rows] = np.log10(p[rows])
        keep[counts.vocab.bos] = True
        logp[counts.vocab.bos] = -np.inf
        pbo = np.where(keep, logp, -np.inf)
        pbo[~event] = -np.inf
        return _Level(keep, logp, pbo, np.zeros(n))
    p, bow = _backoff_weights(k, num_ctx, hist, p, p_low)
    levels[k - 2].bow = bow
    logp = np.full(n, np.nan)
    logp[rows] = np.log10(p)
    pbo = bow[table.prefix] + levels[k - 2].pbo[table.suffix]
    pbo[rows] = logp[rows]
    return _Level(keep, logp, pbo, np.zeros(n))


def _unigram_leftover(vocab: LmVocab, event: np.ndarray, num_events: int, rows: np.ndarray,
                      p: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Unigram probabilities of every word: the mass the explicit unigrams leave goes to the
    events never seen (SRILM's distributeProb), or to all events when every one was seen."""
    prob = np.zeros(len(vocab.words))
    prob[rows] = p
    left = 1.0 - float(p.sum())
    if left <= -PROB_EPSILON:
        logger.warning("unigram probabilities sum to %.7g > 1; no mass for unseen words", 1 - left)
        return prob
    if left < PROB_EPSILON:
        left = 0.0
    zerotons = event & ~keep
    nz = int(zerotons.sum())
    if nz:
        if left > 0:
            logger.info("distributing %.6g left-over probability mass over %d zeroton words",
                        left, nz)
        prob[zerotons] = left / nz
    else:
        prob[event] += left / num_events
    keep |= event
    return prob


def _backoff_weights(k: int, num_ctx: int, hist: np.ndarray, p: np.ndarray,
                     p_low: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log10 bow of every order k-1 history from its explicit order-k probabilities (SRILM's
    computeBOW with its rounding guards); returns the (possibly rescaled) p and the bows."""
    node = np.bincount(hist, minlength=num_ctx) > 0
    num = 1.0 - np.bincount(hist, weights=p, minlength=num_ctx)
    den = 1.0 - np.bincount(hist, weights=p_low, minlength=num_ctx)
    num[np.abs(num) < PROB_EPSILON] = 0.0
    den[np.abs(den) < PROB_EPSILON] = 0.0
    scale = node & (den < PROB_EPSILON) & (num > PROB_EPSILON)
    if scale.any():
        # No mass left in the backoff distribution: SRILM scales the explicit probabilities to 1.
        logger.warning("order %d: %d histories have no backoff mass left; their probabilities "
                       "are scaled to sum to 1 (as SRILM does)", k, int(scale.sum()))
        p = p / np.where(scale[hist], 1.0 - num[hist], 1.0)
        num[scale] = den[scale] = 0.0
    negative = node & (num < 0)
    if negative.any():
        logger.warning("order %d: %d histories have explicit probabilities summing to more than "
                       "1; their backoff weight is 0", k, int(negative.sum()))
    bow = np.zeros(num_ctx)
    with np.errstate(divide="ignore"):
        ratio = np.log10(np.maximum(num, 0.0)) - np.log10(np.where(den > 0, den, 1.0))
    both_zero = (num < PROB_EPSILON) & (den < PROB_EPSILON)
    bow = np.where(node & ~both_zero, ratio, bow)
    bow[negative] = -np.inf
    return p, bow


def _fixup(counts: NgramCounts, levels: list[_Level]) -> None:
    """Give every history and every prefix of one an explicit probability (SRILM's fixupProbs),
    and mark the n-grams that are histories in the model, whose backoff weights are written."""
    order = len(levels)
    node: list[np.ndarray | None] = [None] * order
    need_prefix = None
    for j in range(order - 1, 0, -1):  # histories of order j, from the top down
        table_up = counts.tables[j]
        nj = np.zeros(len(counts.tables[j - 1]), dtype=bool)
        nj[table_up.prefix[levels[j].keep]] = True
        if node[j] is not None:  # suffixes of longer histories are nodes of the trie too
            nj[table_up.suffix[node[j]]] = True
        node[j - 1] = nj
        need = nj.copy()
        if need_prefix is not None:
            need |= need_prefix
        fresh = need & ~levels[j - 1].keep
        if fresh.any():
            lv = levels[j - 1]
            lv.keep |= fresh
            lv.logp[fresh] = lv.pbo[fresh]
            logger.info("inserted %d redundant %d-gram probs", int(fresh.sum()), j)
        need_prefix = None
        if j > 1:
            need_prefix = np.zeros(len(counts.tables[j - 2]), dtype=bool)
            need_prefix[counts.tables[j - 1].prefix[need]] = True
    # Histories as the finished model has them (fixups add a few), for writing the bows.
    for j in range(order - 1, 0, -1):
        table_up = counts.tables[j]
        nj = np.zeros(len(counts.tables[j - 1]), dtype=bool)
        nj[table_up.prefix[levels[j].keep]] = True
        if j < order - 1:
            nj[table_up.suffix[levels[j].node]] = True
        levels[j - 1].node = nj
