"""CMVN stats layout (Kaldi's 2 x (D+1) float64) and apply-cmvn against a float64 reference."""
import numpy as np
import pytest
from helpers import dummy_feats

from nnetmix.errors import UsageError
from nnetmix.feat import CmvnError, acc_cmvn_stats, apply_cmvn


def test_stats_layout():
    x = dummy_feats(50, 13, seed=1)
    s = acc_cmvn_stats(x)
    x64 = x.astype(np.float64)
    assert s.shape == (2, 14) and s.dtype == np.float64
    np.testing.assert_allclose(s[0, :13], x64.sum(0), rtol=1e-12)
    np.testing.assert_allclose(s[1, :13], (x64 ** 2).sum(0), rtol=1e-12)
    assert s[0, 13] == 50 and s[1, 13] == 0


def test_stats_accumulate_over_utterances():
    a, b = dummy_feats(30, 5, 1), dummy_feats(20, 5, 2)
    s = acc_cmvn_stats(b, acc_cmvn_stats(a))
    np.testing.assert_allclose(s, acc_cmvn_stats(np.concatenate([a, b])), rtol=1e-12)


def test_stats_with_weights():
    x = dummy_feats(10, 3)
    w = np.linspace(0, 1, 10)
    s = acc_cmvn_stats(x, weights=w)
    np.testing.assert_allclose(s[0, :3], w @ x.astype(np.float64))
    assert s[0, 3] == pytest.approx(w.sum())


@pytest.mark.parametrize("norm_vars", [False, True])
def test_apply_against_float64_reference(norm_vars):
    x = dummy_feats(200, 13, seed=4)
    stats_src = dummy_feats(500, 13, seed=5)
    stats = acc_cmvn_stats(stats_src)
    ref = x.astype(np.float64)
    mean = stats_src.astype(np.float64).mean(0)
    ref = ref - mean
    if norm_vars:
        ref = ref / stats_src.astype(np.float64).std(0)
    out = apply_cmvn(stats, x, norm_vars=norm_vars)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=2e-5)


def test_own_stats_give_zero_mean_unit_var():
    x = dummy_feats(300, 7, seed=6)
    out = apply_cmvn(acc_cmvn_stats(x), x, norm_vars=True).astype(np.float64)
    np.testing.assert_allclose(out.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(out.std(0), 1, atol=1e-5)


def test_errors_and_floor(caplog):
    x = dummy_feats(5, 3)
    with pytest.raises(CmvnError, match="count = 0"):
        apply_cmvn(np.zeros((2, 4)), x)
    with pytest.raises(CmvnError, match="dim 4, features have dim 3"):
        apply_cmvn(np.zeros((2, 5)), x)
    with pytest.raises(UsageError, match="variance but not the mean"):
        apply_cmvn(acc_cmvn_stats(x), x, norm_vars=True, norm_means=False)
    const = np.ones((4, 3), np.float32)
    out = apply_cmvn(acc_cmvn_stats(const), const, norm_vars=True)
    assert np.all(np.isfinite(out)) and "Flooring cepstral variance" in caplog.text
    np.testing.assert_array_equal(apply_cmvn(acc_cmvn_stats(x), x, norm_means=False), x)
