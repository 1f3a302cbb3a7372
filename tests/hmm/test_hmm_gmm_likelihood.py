"""Vectorised GMM log-likelihoods and posteriors against a float64 loop reference."""
import numpy as np
import pytest

from helpers import gmm_loglike_ref, random_gmms
from nnetmix.hmm.gmm_likelihood import (StackedGmms, compute_gconsts, gauss_loglikes,
                                        gauss_posteriors, pdf_loglikes)


@pytest.fixture
def setup():
    rng = np.random.default_rng(1)
    gmms = random_gmms(rng, 6, 5)
    x = rng.normal(0, 2, (40, 5))
    return gmms, StackedGmms.from_gmms(gmms), x


def test_loglikes_and_posteriors_match_loop(setup):
    gmms, model, x = setup
    ll, offsets = gauss_loglikes(model, x)
    pll = pdf_loglikes(model, x)
    post, lse, _ = gauss_posteriors(model, x)
    for t in range(len(x)):
        for p, g in enumerate(gmms):
            ref = gmm_loglike_ref(g, x[t])
            s = slice(offsets[p], offsets[p + 1])
            np.testing.assert_allclose(ll[t, s], ref, rtol=1e-10, atol=1e-9)
            tot = np.logaddexp.reduce(ref)
            assert abs(pll[t, p] - tot) < 1e-9 and abs(lse[t, p] - tot) < 1e-9
            np.testing.assert_allclose(post[t, s], np.exp(ref - tot), atol=1e-12)


def test_pdf_subset_and_float32(setup):
    gmms, model, x = setup
    full = pdf_loglikes(model, x)
    sub = [4, 1, 3]
    np.testing.assert_allclose(pdf_loglikes(model, x, np.array(sub)), full[:, sub], rtol=1e-12)
    f32 = pdf_loglikes(model, x, dtype=np.float32)
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, full, rtol=1e-4, atol=1e-3)


def test_zero_weight_gives_minus_inf_not_nan():
    g = compute_gconsts(np.array([0.0, 1.0]), np.zeros((2, 3)), np.ones((2, 3)))
    assert g[0] == -np.inf and np.isfinite(g[1])
