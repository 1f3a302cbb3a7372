"""Sums of float64 arrays that do not depend on the order of the terms: the same statistics
whether 1 job or 8 accumulated them.

Floating-point addition is not associative, so statistics summed job by job and then across jobs
(Kaldi's gmm-acc-stats-ali / gmm-sum-accs) change in the last bits with ``--nj``, and 40 passes
of re-estimation turn that into a different model. :class:`ExactSum` keeps each element's sum
exactly, as fixed-point parts in a few float64 "bins" (a small superaccumulator, vectorised with
numpy; no library offers one for arrays): every term is split, without rounding, into parts that
are multiples of 2**E_k for the bins' exponents E_0 > E_1 > ... (each E_k 32 below the last), and
part k is added to bin k. A bin's sum is exact while fewer than 2**20 terms have been added
(each part has at most 32 significant bits and a bin holds 53), so the bins, and the value
:meth:`ExactSum.value` rounds from them, are the same for any grouping and order of the terms.
Parts below 2**E_last (3e-27) are rounded away when a term is added, the same way whatever the
order. Cost: about 20 flops per element per term, which is why callers add one sum per speaker
or per job, not per frame.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ExactSum", "ExactSumError"]

_TOP = 40                    # exponent of the top bin
_WIDTH = 32                  # bits between bins
_BINS = 5                    # exponents 40, 8, -24, -56, -88
MAX_TERMS = 1 << 20          # a part has <= 32 significant bits, a bin 53: 2**20 parts fit
_MAX_ABS = 2.0 ** (_TOP + _WIDTH - 1)   # 2**71: the top bin's parts are no larger either
#: adding then subtracting 1.5 * 2**(E+52) rounds to a multiple of 2**E (exact below 2**(E+51))
_ROUNDERS = [1.5 * 2.0 ** (_TOP - k * _WIDTH + 52) for k in range(_BINS)]


class ExactSumError(ValueError):
    """A term too large for the bins, or more terms than a bin can hold exactly."""


class ExactSum:
    """The exact sum of float64 arrays of one shape; ``+=`` with an array or another ExactSum."""

    def __init__(self, shape, bins: np.ndarray | None = None, terms: int = 0):
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
        self.bins = np.zeros((_BINS,) + self.shape) if bins is None else bins
        self.terms = terms

    def add(self, term: np.ndarray) -> None:
        """Add one array (its shape is the sum's); exact up to the lowest bin."""
        t = np.array(term, dtype=np.float64)   # a copy: it is consumed below
        if t.shape != self.shape:
            raise ExactSumError(f"term of shape {t.shape} added to a sum of shape {self.shape}")
        if self.terms + 1 > MAX_TERMS:
            raise ExactSumError(f"more than {MAX_TERMS} terms in one exact sum")
        big = np.abs(t) >= _MAX_ABS
        if big.any():
            raise ExactSumError(f"a term of magnitude {float(np.abs(t[big]).max()):g} is over "
                                f"the exact sum's range (2**{_TOP + _WIDTH - 1})")
        for k, c in enumerate(_ROUNDERS):
            part = (t + c) - c          # t rounded to a multiple of 2**E_k
            self.bins[k] += part
            t -= part                    # exact: what is left is below 2**(E_k - 1)
        self.terms += 1

    def __iadd__(self, other):
        if isinstance(other, ExactSum):
            if other.shape != self.shape:
                raise ExactSumError(f"sums of shapes {other.shape} and {self.shape} added")
            if self.terms + other.terms > MAX_TERMS:
                raise ExactSumError(f"more than {MAX_TERMS} terms in one exact sum")
            self.bins += other.bins      # exact: each bin is a multiple of its 2**E_k
            self.terms += other.terms
        else:
            self.add(other)
        return self

    def value(self) -> np.ndarray:
        """The sum as float64, rounded from the bins (the same bits for the same bins)."""
        out = self.bins[0].copy()
        for k in range(1, _BINS):
            out += self.bins[k]
        return out

    def copy(self) -> "ExactSum":
        return ExactSum(self.shape, self.bins.copy(), self.terms)
