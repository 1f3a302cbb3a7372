"""The M-step (MleDiagGmmUpdate), mixing up (SplitByCount) and the transition update."""
import kaldi_hmm_gmm as khg
import numpy as np
import pytest

from helpers import TinyLang
from nnetmix.hmm.gmm_likelihood import GmmParams, StackedGmms
from nnetmix.hmm.gmm_mixup import mix_up, split_gmm, split_targets
from nnetmix.hmm.gmm_stats import GmmAccs, acc_stats_ali
from nnetmix.hmm.gmm_update import (MleGmmOptions, MleTransitionOptions, mle_am_update,
                                    mle_diag_gmm_update, mle_transition_update)


def _sample(rng, gmm, n):
    comp = rng.choice(len(gmm.weights), n, p=gmm.weights)
    return gmm.means[comp] + rng.normal(size=(n, gmm.means.shape[1])) * np.sqrt(gmm.vars[comp])


def test_em_recovers_known_gmm():
    rng = np.random.default_rng(4)
    true = GmmParams(np.array([0.5, 0.3, 0.2]),
                     np.array([[-4.0, 0.0], [0.0, 3.0], [4.0, -2.0]]),
                     np.array([[1.0, 0.5], [0.7, 1.2], [0.4, 0.9]]))
    x = _sample(rng, true, 30000)
    # flat start as in training: one Gaussian, then mix up to 3 and iterate EM
    gmm = GmmParams(np.ones(1), x.mean(0, keepdims=True), x.var(0, keepdims=True))
    gmms = mix_up([gmm], np.array([len(x)], dtype=float), 3, perturb_factor=0.5,
                  rng=np.random.default_rng(0))
    ids = np.zeros(len(x), dtype=np.int64)
    prev = -np.inf
    for _ in range(60):
        model = StackedGmms.from_gmms(gmms)
        accs = GmmAccs.for_model(model, 1)
        like = acc_stats_ali(model, x, ids, accs)
        assert like >= prev - 1e-6 * abs(prev)  # EM never decreases the likelihood
        prev = like
        gmms, info = mle_am_update(gmms, accs)
        assert info.count == pytest.approx(len(x))
    est = gmms[0]
    order = np.argsort(est.means[:, 0])
    np.testing.assert_allclose(est.weights[order], true.weights, atol=0.02)
    np.testing.assert_allclose(est.means[order], true.means, atol=0.1)
    np.testing.assert_allclose(est.vars[order], true.vars, rtol=0.1)


def test_single_step_floor_and_removal():
    gmm = GmmParams(np.array([0.4, 0.3, 0.3]), np.zeros((3, 2)), np.ones((3, 2)))
    occ = np.array([100.0, 5.0, 50.0])  # Gaussian 1 below min_gaussian_occupancy 10
    mean_acc = np.array([[100.0, 200.0], [1, 1], [0.0, 50.0]])
    var_acc = np.array([[200.0, 400.0 + 0.00001 * 100], [1, 1], [50.0, 50.0]])
    new, info = mle_diag_gmm_update(gmm, occ, mean_acc, var_acc)
    assert info.removed_gaussians == 1 and len(new.weights) == 2
    np.testing.assert_allclose(new.weights, [100 / 150, 50 / 150])
    np.testing.assert_allclose(new.means, [[1.0, 2.0], [0.0, 1.0]])
    # var of dim 1 of Gaussian 0 is 1e-5, floored at min_variance 0.001; dim 0 is 1.0
    np.testing.assert_allclose(new.vars[0], [1.0, 0.001])
    assert info.floored_gaussians >= 1
    # with min occupancy 3 (train_mono.sh's first update) it is kept and updated
    new3, info3 = mle_diag_gmm_update(gmm, occ, mean_acc, var_acc,
                                      MleGmmOptions(min_gaussian_occupancy=3))
    assert len(new3.weights) == 3 and info3.removed_gaussians == 0
    # the last Gaussian of a pdf is never removed: it keeps its parameters
    lone = GmmParams(np.ones(1), np.full((1, 2), 7.0), np.full((1, 2), 2.0))
    kept, _ = mle_diag_gmm_update(lone, np.zeros(1), np.zeros((1, 2)), np.zeros((1, 2)))
    np.testing.assert_array_equal(kept.means, lone.means)
    assert kept.weights[0] == 1.0


def _khg_split_counts(occs, target, power, min_count, dim=2):
    am = khg.AmDiagGmm()
    for _ in occs:
        g = khg.DiagGmm()
        g.resize(1, dim)
        g.set_weights(np.ones(1, dtype=np.float32))
        g.set_invvars_and_means(np.ones((1, dim), np.float32), np.zeros((1, dim), np.float32))
        g.compute_gconsts()
        am.add_pdf(g)
    am.split_by_count(np.asarray(occs, np.float32), target, 0.01, power, min_count)
    return np.array([am.num_gauss_in_pdf(i) for i in range(len(occs))])


@pytest.mark.parametrize("power,target", [(0.2, 200), (0.25, 120), (1.0, 300)])
def test_split_targets_match_kaldi_and_follow_power(power, target):
    rng = np.random.default_rng(5)
    occs = np.round(rng.uniform(50, 5000, 40) ** 1.3)  # distinct occupancies: no ties
    occs[3] = 30.0  # min_count 20 stops this pdf at one Gaussian
    mine = split_targets(occs, target, power, 20.0)
    np.testing.assert_array_equal(mine, _khg_split_counts(occs, target, power, 20.0))
    assert mine.sum() == target and mine[3] == 1
    # the greedy allocation by occ^power / n: no open pdf's share per Gaussian exceeds the
    # share per Gaussian any pdf had when it got its last extra Gaussian
    share = occs ** power
    open_ = (mine + 1) * 20.0 < occs
    grew = mine > 1
    assert (share[open_] / mine[open_]).max() <= (share[grew] / (mine[grew] - 1)).min() * 1.0001
    o = np.argsort(occs[open_])  # more occupancy never means fewer Gaussians
    assert np.all(np.diff(mine[open_][o]) >= 0)
    big = mine >= 4  # where rounding matters little, the count is near target * share
    ratio = mine[big] / (target * share[big] / share[open_ | grew].sum())
    assert np.all(np.abs(ratio - 1) < 0.35)


def test_split_gmm_perturbs_by_stddev_and_keeps_weights():
    g = GmmParams(np.array([0.7, 0.3]), np.array([[0.0, 0.0], [5.0, 5.0]]),
                  np.array([[4.0, 1.0], [1.0, 1.0]]))
    s = split_gmm(g, 4, 0.01, np.random.default_rng(0))
    assert len(s.weights) == 4 and s.weights.sum() == pytest.approx(1.0)
    # splits: 0 (0.7 -> 0.35+0.35), then 0 again (0.35 -> 0.175 x2; first max wins)
    np.testing.assert_allclose(sorted(s.weights), sorted([0.175, 0.3, 0.35, 0.175]))
    d = s.means[2] - g.means[0]
    assert np.all(np.abs(s.means[0] - g.means[0]) < 0.01 * 2 * 5 * np.sqrt(g.vars[0]))
    assert np.any(d != 0)
    np.testing.assert_array_equal(s.vars[2], g.vars[0])
    mixed = mix_up([g, g], np.array([1000.0, 10.0]), 5, power=0.2, min_count=20.0)
    assert [len(m.weights) for m in mixed] == [4, 2]  # pdf 1 (10 frames) is not split


def test_transition_update_matches_kaldi():
    lang = TinyLang()
    rng = np.random.default_rng(6)
    stats = rng.integers(0, 40, len(lang.tid2pdf)).astype(np.float64)
    stats[0] = 0
    stats[1:4] = [1.0, 0.0, 2.0]  # a state below mincount 5: unchanged
    stats[8:10] = [1000.0, 1.0]  # a floored transition
    new, objf, count = mle_transition_update(lang.log_probs, stats, lang.id2state)
    lang.tm.mle_update(stats, khg.MleTransitionUpdateConfig())
    np.testing.assert_allclose(new, np.asarray(lang.tm.log_probs), atol=1e-6)
    np.testing.assert_allclose(new[1:4], lang.log_probs[1:4])
    assert np.exp(new[9]) == pytest.approx(0.01, rel=1e-5)
    assert objf > 0 and count == pytest.approx(stats[1:].sum())
    with pytest.raises(ValueError):
        mle_transition_update(lang.log_probs[:-1], stats, lang.id2state)
    assert MleTransitionOptions().floor == 0.01
