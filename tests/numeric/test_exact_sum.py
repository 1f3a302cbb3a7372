"""ExactSum: the same bits for any grouping and order of the terms, and the exact sum."""
from fractions import Fraction

import numpy as np
import pytest

from nnetmix.exact_sum import MAX_TERMS, ExactSum, ExactSumError


def _terms(seed: int, n: int = 120, width: int = 40):
    rng = np.random.default_rng(seed)
    terms = [rng.standard_normal(width) * 10.0 ** rng.integers(-12, 15, width) for _ in range(n)]
    terms[5] = -terms[4]          # exact cancellation
    terms[6][:3] = [1e20, 1.0, -1e20]
    return terms


def _sum(terms, groups):
    total = ExactSum((len(terms[0]),))
    for g in groups:
        part = ExactSum((len(terms[0]),))
        for i in g:
            part += terms[i]
        total += part
    return total


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_any_grouping_and_order_gives_the_same_bits(seed):
    terms = _terms(seed)
    rng = np.random.default_rng(seed + 100)
    ref = _sum(terms, [range(len(terms))])
    naive_differs = False
    for _ in range(5):
        order = rng.permutation(len(terms))
        groups = np.array_split(order, rng.integers(2, 9))
        s = _sum(terms, groups)
        np.testing.assert_array_equal(s.bins, ref.bins)
        np.testing.assert_array_equal(s.value(), ref.value())
        assert s.terms == len(terms)
        naive = sum(sum(terms[i] for i in g) for g in groups)
        naive_differs |= not np.array_equal(naive, sum(terms))
    assert naive_differs      # the plain float sums do depend on the grouping


def test_value_is_the_exact_sum_rounded():
    terms = _terms(3)
    got = _sum(terms, [range(len(terms))]).value()
    for i in range(len(got)):
        exact = sum(Fraction(float(t[i])) for t in terms)
        # parts below 2**-88 are dropped: absolute 1e-26 besides the final rounding
        assert abs(Fraction(float(got[i])) - exact) <= abs(exact) * Fraction(2.0 ** -52) + \
            Fraction(2.0 ** -80)


def test_errors():
    s = ExactSum((3,))
    with pytest.raises(ExactSumError, match="shape"):
        s.add(np.zeros(4))
    with pytest.raises(ExactSumError, match="range"):
        s.add(np.array([0.0, 1e30, 0.0]))
    with pytest.raises(ExactSumError, match="shapes"):
        s += ExactSum((2,))
    full = ExactSum((3,), terms=MAX_TERMS)
    with pytest.raises(ExactSumError, match="terms"):
        full.add(np.ones(3))
    s.add(np.ones(3))
    with pytest.raises(ExactSumError, match="terms"):
        s += full
