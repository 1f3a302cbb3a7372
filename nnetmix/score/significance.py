"""Is system B's WER really different from system A's? Two tests on the same test set.

**MAPSSWE** (matched-pairs sentence-segment word error test; Gillick and Cox, ICASSP 1989), as
NIST sclite's ``sc_stats -t mapsswe`` computes it (SCTK src/sclite/mtchprs.c, statdist.c). Each
utterance's two alignments (A against the reference, B against the reference) are cut into
segments bounded by ``min_good`` consecutive reference words that *both* systems got right
(sc_stats passes 2), or by the utterance ends; insertions break a run of good words. Segments
where neither system erred are dropped, so errors in different segments can be taken as
independent. With d_i = errors_A - errors_B in segment i over n segments, Z = mean(d) /
(sd(d) / sqrt(n)), sd with the n - 1 divisor, and under H0 (equal mean segment errors) Z is
standard normal. ``segmentation="utterance"`` makes each utterance one segment instead (again
dropping those both systems got right).

Where this differs from sclite, on purpose: errors are placed by Kaldi's unit-cost alignment
(compute-wer's, so the error totals are those of the ``wer_*`` files) where sclite aligns with
costs 3/3/4; the p-value is the exact two-sided normal tail where sclite looks it up in a table
rounded down; and when all n >= 2 segment differences are equal and non-zero (zero variance),
sclite prints Z = 0 and "no difference", which would call a system with one error fewer in each
of 100 utterances "not significant": here p is the exact two-sided sign test's, 2 ** (1 - n)
(all n differences on one side), and Z the normal deviate with that p, with a warning.

**Bootstrap** (Bisani and Ney, ICASSP 2004, "Bootstrap estimates for confidence intervals in ASR
performance evaluation"): draw the test set's utterances with replacement B times; each draw
gives WER_A, WER_B (errors over reference words of the drawn utterances) and their difference.
The interval at level 1 - alpha runs from the k-th smallest to the k-th largest of the B values,
k = max(1, floor(alpha * B / 2)); the probability of improvement (poi) is the share of draws in
which B made fewer errors than A. A difference whose interval contains 0 is "not significant".
"""
from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Sequence

import numpy as np

from nnetmix.score.wer import ScoreError

__all__ = ["SEGMENTATIONS", "Mapsswe", "Interval", "Bootstrap", "check_settings",
           "sclite_segments", "mapsswe", "resample_sums", "bootstrap", "format_p"]

logger = logging.getLogger(__name__)

SEGMENTATIONS = ("sclite", "utterance")

#: resampled test sets drawn per block: bounds memory at BLOCK x utterances indices
_BLOCK = 500


def check_settings(alpha: float = 0.05, num_samples: int = 1, min_good: int = 1,
                   segmentation: str = "sclite") -> None:
    """Refuse impossible settings (before any work: a run fails at once, not after reading)."""
    if not 0.0 < alpha < 1.0:
        raise ScoreError(f"--alpha must be between 0 and 1, got {alpha}")
    if num_samples < 1:
        raise ScoreError(f"--num-bootstrap must be at least 1, got {num_samples}")
    if min_good < 1:
        raise ScoreError(f"--min-good must be at least 1, got {min_good}")
    if segmentation not in SEGMENTATIONS:
        raise ScoreError(f"--segmentation={segmentation}: expected {' or '.join(SEGMENTATIONS)}")


def _errors(ops: Sequence[str], lo: int, hi: int) -> tuple[int, int]:
    """(errors, reference words) in ops[lo..hi], both ends included (sclite's seg_count)."""
    part = ops[max(lo, 0):hi + 1]
    return sum(op != "C" for op in part), sum(op != "I" for op in part)


def sclite_segments(ops1: Sequence[str], ops2: Sequence[str],
                    min_good: int = 2) -> list[tuple[int, int, int]]:
    """sclite's segments of one utterance: (reference words, errors of A, errors of B) each.

    ``ops1`` and ``ops2`` are the two systems' alignments against the same reference
    (:func:`nnetmix.score.wer.align_ops`). A transcription of test_comp_sents() in mtchprs.c,
    states 'b' (in a run of words both got right), 'e' (in errors) and 'g' (counting good words
    after errors); sclite's re-synchronisation for alternations in the reference is not needed,
    since both alignments cover the same plain reference.
    """
    check_settings(min_good=min_good)
    n1, n2 = len(ops1), len(ops2)
    segs: list[tuple[int, int, int]] = []

    def close(beg1: int, beg2: int, end1: int, end2: int) -> None:
        err1, ref1 = _errors(ops1, beg1, end1)
        err2, ref2 = _errors(ops2, beg2, end2)
        if err1 or err2:  # sclite drops (and warns about) a segment without errors
            segs.append(((ref1 + ref2) // 2, err1, err2))

    i1 = i2 = eog1 = eog2 = good = 0
    state = "b"
    while i1 < n1:
        while i1 < n1 and ops1[i1] == "I":
            i1, state = i1 + 1, "e"
        while i2 < n2 and ops2[i2] == "I":
            i2, state = i2 + 1, "e"
        both = i1 < n1 and ops1[i1] == "C" and i2 < n2 and ops2[i2] == "C"
        if state == "b":
            if both:
                eog1, eog2 = i1, i2
            else:
                state = "e"
        elif both:  # 'e' starts counting good words, 'g' goes on counting
            good = 1 if state == "e" else good + 1
            if good == min_good:
                close(eog1 - (min_good - 1), eog2 - (min_good - 1), i1, i2)
                eog1, eog2, state = i1, i2, "b"
            else:
                state = "g"
        else:
            state = "e"
        i1 += i1 < n1
        i2 += i2 < n2
    if state != "b" or n2 > i2:
        close(eog1 - (min_good - 1), eog2 - (min_good - 1), n1 - 1, n2 - 1)
    return segs


@dataclass
class Mapsswe:
    """The test's numbers, as sc_stats reports them, plus the p-value and verdict."""

    segmentation: str
    min_good: int
    num_segments: int
    errors_a: int          #: A's errors inside the segments (= all of A's errors)
    errors_b: int
    mean: float            #: mean of errors_A - errors_B per segment
    std_dev: float
    z: float
    p_value: float         #: two-sided, normal (the sign test's when all differences are equal)
    alpha: float
    significant: bool      #: p_value < alpha
    better: str            #: "A", "B" or "" (not significant)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["z"] = _finite(self.z)
        return d


def format_p(p: float) -> str:
    """A p-value for a table: two significant digits, or '< 0.0001' below that. MAPSSWE's normal
    tail reaches 1e-50 when a few segments all differ one way, digits that mean nothing."""
    return "< 0.0001" if p < 1e-4 else f"{p:.2g}"


def _finite(x: float):
    """JSON has no infinity: +-inf becomes the string "inf"/"-inf"."""
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def mapsswe(segments: Sequence[tuple[int, int, int]], alpha: float = 0.05,
            segmentation: str = "sclite", min_good: int = 2) -> Mapsswe:
    """The matched-pairs test over segments (reference words, errors A, errors B)."""
    check_settings(alpha, min_good=min_good, segmentation=segmentation)
    d = np.array([a - b for _, a, b in segments], dtype=np.float64)
    n = len(d)
    mean = float(d.mean()) if n else 0.0
    ss = float(((d - mean) ** 2).sum()) if n else 0.0
    if n >= 2 and ss > 0:
        sd = math.sqrt(ss / (n - 1))
        z = mean / (sd / math.sqrt(n))
        p = math.erfc(abs(z) / math.sqrt(2.0))
    elif n >= 2 and mean != 0:
        sd, p = 0.0, 2.0 ** (1 - n)
        z = math.copysign(-NormalDist().inv_cdf(p / 2) if p > 0 else math.inf, mean)
        logger.warning("MAPSSWE: all %d segment differences are %+g (zero variance): p = %.4g "
                       "from the sign test, Z = %.3f (sclite prints Z = 0)", n, mean, p, z)
    else:  # no segments (identical systems) or a single one: no evidence, as sclite says
        sd, z, p = 0.0, 0.0, 1.0
    significant = p < alpha
    better = ("B" if z > 0 else "A") if significant else ""
    return Mapsswe(segmentation, min_good, n, int(sum(a for _, a, _ in segments)),
                   int(sum(b for _, _, b in segments)), mean, sd, z, p, alpha, significant,
                   better)


@dataclass
class Interval:
    """A bootstrap estimate: the full-set value, the interval, the standard error (in %)."""

    value: float
    low: float
    high: float
    std_err: float

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high


@dataclass
class Bootstrap:
    """Bisani and Ney's estimates: each WER, the difference WER_B - WER_A, and poi(B > A)."""

    num_samples: int
    seed: int
    alpha: float
    wer_a: Interval
    wer_b: Interval
    diff: Interval
    poi: float             #: share of draws where B made fewer errors than A

    @property
    def significant(self) -> bool:
        """The difference's interval leaves out 0."""
        return not self.diff.contains(0.0)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["significant"] = self.significant
        return d


def _interval(values: np.ndarray, full: float, alpha: float) -> Interval:
    values = np.sort(values[~np.isnan(values)])
    b = len(values)
    k = max(1, int(math.floor(alpha * b / 2)))
    se = float(values.std(ddof=1)) if b > 1 else 0.0
    return Interval(full, float(values[k - 1]), float(values[b - k]), se)


def resample_sums(columns: Sequence[np.ndarray], num_samples: int, seed: int = 0
                  ) -> list[np.ndarray]:
    """The bootstrap's draws: ``num_samples`` test sets of the utterances drawn with
    replacement (numpy's generator seeded with ``seed``); per column (one value per utterance:
    a system's errors, the reference words), the sum over each drawn set."""
    n = len(columns[0])
    rng = np.random.default_rng(seed)
    sums = [np.empty(num_samples, dtype=np.int64) for _ in columns]
    for start in range(0, num_samples, _BLOCK):
        stop = min(start + _BLOCK, num_samples)
        idx = rng.integers(0, n, size=(stop - start, n))
        for out, x in zip(sums, columns):
            out[start:stop] = x[idx].sum(axis=1)
    return sums


def bootstrap(errors_a: Sequence[int], errors_b: Sequence[int], ref_words: Sequence[int],
              num_samples: int = 10000, seed: int = 0, alpha: float = 0.05) -> Bootstrap:
    """Resample utterances (per-utterance errors of A and B, reference words) with replacement."""
    check_settings(alpha, num_samples)
    ea, eb, nw = (np.asarray(x, dtype=np.int64) for x in (errors_a, errors_b, ref_words))
    n = len(nw)
    if n == 0 or nw.sum() == 0:
        raise ScoreError("no reference words to compute a WER on")
    sa, sb, sn = resample_sums((ea, eb, nw), num_samples, seed)
    with np.errstate(divide="ignore", invalid="ignore"):  # a draw of only empty references
        words = np.where(sn > 0, sn, np.nan)
        wa, wb = 100.0 * sa / words, 100.0 * sb / words
    full_a, full_b = (100.0 * float(x.sum()) / float(nw.sum()) for x in (ea, eb))
    return Bootstrap(num_samples, seed, alpha, _interval(wa, full_a, alpha),
                     _interval(wb, full_b, alpha), _interval(wb - wa, full_b - full_a, alpha),
                     float(np.mean(sb < sa)))
