"""Kneser-Ney discounts from counts of counts, as SRILM's ``-kndiscount`` and ``-ukndiscount``.

Original Kneser-Ney (SRILM's KneserNey, ``-ukndiscount``) subtracts one D = n1 / (n1 + 2 n2)
from every count. Modified Kneser-Ney (Chen & Goodman 1998, TR-10-98 section 3.5; SRILM's
ModKneserNey, ``-kndiscount``) subtracts D1, D2 or D3+ from counts of 1, 2 or 3 and more:
Y = n1 / (n1 + 2 n2), D1 = 1 - 2Y n2/n1, D2 = 2 - 3Y n3/n2, D3+ = 3 - 4Y n4/n3, where n_r is
the number of n-grams of that order (Kneser-Ney's modified counts below the top order) seen
exactly r times, counting only n-grams that predict an event. Like SRILM we stop when a needed
n_r is zero or a discount comes out negative, rather than guess a discount: such a text is too
small or too regular for Kneser-Ney.

The weight left for the lower order in a history h is
gamma(h) = (D1 N1(h) + D2 N2(h) + D3+ N3+(h)) / c(h), with N_r(h) the number of distinct words
seen r times after h (SRILM's lowerOrderWeight); for one D it is D N1+(h) / c(h).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnetmix.lm.vocab import LmError

__all__ = ["KnDiscount", "count_of_counts", "kn_discount"]


@dataclass(frozen=True)
class KnDiscount:
    """The discounts of one order: d1, d2, d3 for counts 1, 2, 3+ (one value for original KN)."""

    d1: float
    d2: float
    d3: float
    modified: bool
    coc: tuple[int, int, int, int]  #: n1..n4 they were estimated from

    def of_counts(self, counts: np.ndarray) -> np.ndarray:
        """The discount subtracted from each count (counts are >= 1)."""
        if not self.modified:
            return np.full(len(counts), self.d1)
        return np.where(counts >= 3, self.d3, np.where(counts == 2, self.d2, self.d1))

    def lower_order_weight(self, total: np.ndarray, n1plus: np.ndarray, n2plus: np.ndarray,
                           n3plus: np.ndarray) -> np.ndarray:
        """gamma(h) from c(h) and the numbers of words seen >= 1, >= 2, >= 3 times after h."""
        if self.modified:
            mass = (self.d1 * (n1plus - n2plus) + self.d2 * (n2plus - n3plus)
                    + self.d3 * n3plus)
        else:
            mass = self.d1 * n1plus
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total > 0, mass / np.where(total > 0, total, 1), 0.0)

    def describe(self) -> str:
        n = " ".join(f"n{r}={c}" for r, c in enumerate(self.coc, 1) if self.modified or r <= 2)
        if self.modified:
            return f"modified Kneser-Ney, {n}: D1={self.d1:.6g} D2={self.d2:.6g} D3+={self.d3:.6g}"
        return f"Kneser-Ney, {n}: D={self.d1:.6g}"


def count_of_counts(counts: np.ndarray) -> tuple[int, int, int, int]:
    """(n1, n2, n3, n4): how many of ``counts`` are exactly 1, 2, 3, 4."""
    c = np.asarray(counts)
    small = c[(c >= 1) & (c <= 4)]
    n = np.bincount(small.astype(np.int64), minlength=5)
    return int(n[1]), int(n[2]), int(n[3]), int(n[4])


def kn_discount(coc: tuple[int, int, int, int], modified: bool, order: int) -> KnDiscount:
    """The discounts from n1..n4; LmError (SRILM's message, with the counts) where SRILM fails."""
    n1, n2, n3, n4 = coc
    if not modified:
        if n1 == 0 or n2 == 0:
            raise LmError(f"order {order}: one of required KneserNey count-of-counts is zero "
                          f"(n1={n1} n2={n2}): the text is too small or too regular for "
                          "Kneser-Ney discounting, as SRILM would also say")
        d = n1 / (n1 + 2.0 * n2)
        return KnDiscount(d, d, d, False, coc)
    if 0 in coc:
        raise LmError(f"order {order}: one of required modified KneserNey count-of-counts is zero "
                      f"(n1={n1} n2={n2} n3={n3} n4={n4}): the text is too small or too regular "
                      "for modified Kneser-Ney discounting, as SRILM would also say "
                      "(-ukndiscount needs only n1 and n2)")
    y = n1 / (n1 + 2.0 * n2)
    d1 = 1 - 2 * y * n2 / n1
    d2 = 2 - 3 * y * n3 / n2
    d3 = 3 - 4 * y * n4 / n3
    if d1 < 0 or d2 < 0 or d3 < 0:
        raise LmError(f"order {order}: one of modified KneserNey discounts is negative "
                      f"(D1={d1:.6g} D2={d2:.6g} D3+={d3:.6g} from n1={n1} n2={n2} n3={n3} "
                      f"n4={n4}), as SRILM would also say")
    return KnDiscount(d1, d2, d3, True, coc)
