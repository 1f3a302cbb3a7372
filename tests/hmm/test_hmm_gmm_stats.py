"""Accumulation from alignments (gmm-acc-stats-ali) against a loop reference; stats files."""
import numpy as np
import pytest

from helpers import gmm_loglike_ref, random_gmms
from nnetmix.errors import FormatError
from nnetmix.hmm.gmm_likelihood import StackedGmms
from nnetmix.hmm.gmm_stats import GmmAccs, acc_stats_ali, acc_transitions


def _ref(gmms, x, pdf_ids, w=None):
    occ = [np.zeros(len(g.weights)) for g in gmms]
    m1 = [np.zeros((len(g.weights), x.shape[1])) for g in gmms]
    m2 = [np.zeros((len(g.weights), x.shape[1])) for g in gmms]
    tot = 0.0
    for t in range(len(x)):
        p = pdf_ids[t]
        ll = gmm_loglike_ref(gmms[p], x[t])
        lse = np.logaddexp.reduce(ll)
        wt = 1.0 if w is None else w[t]
        post = np.exp(ll - lse) * wt
        tot += lse * wt
        occ[p] += post
        m1[p] += np.outer(post, x[t])
        m2[p] += np.outer(post, x[t] ** 2)
    return np.concatenate(occ), np.concatenate(m1), np.concatenate(m2), tot


@pytest.mark.parametrize("weighted", [False, True])
def test_acc_matches_loop(weighted):
    rng = np.random.default_rng(2)
    gmms = random_gmms(rng, 5, 4)
    model = StackedGmms.from_gmms(gmms)
    x = rng.normal(0, 2, (300, 4))
    pdf_ids = rng.integers(0, 4, 300)  # pdf 4 never seen
    w = rng.uniform(0.1, 1.0, 300) if weighted else None
    accs = GmmAccs.for_model(model, 10)
    tot = acc_stats_ali(model, x, pdf_ids, accs, weights=w)
    occ, m1, m2, tot_ref = _ref(gmms, x, pdf_ids, w)
    np.testing.assert_allclose(accs.occ, occ, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(accs.mean_acc, m1, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(accs.var_acc, m2, rtol=1e-10, atol=1e-9)
    assert abs(tot - tot_ref) < 1e-7 * abs(tot_ref)
    assert accs.tot_t == pytest.approx(300 if w is None else w.sum())
    np.testing.assert_allclose(accs.pdf_occs(), np.bincount(pdf_ids, weights=w, minlength=5))


def test_sum_save_load_and_transitions(tmp_path):
    rng = np.random.default_rng(3)
    gmms = random_gmms(rng, 3, 2)
    model = StackedGmms.from_gmms(gmms)
    x = rng.normal(size=(100, 2))
    ids = rng.integers(0, 3, 100)
    tids = rng.integers(1, 8, 100)
    whole = GmmAccs.for_model(model, 7)
    acc_stats_ali(model, x, ids, whole)
    acc_transitions(tids, whole)
    paths = []
    for j, part in enumerate(np.array_split(np.arange(100), 3)):
        a = GmmAccs.for_model(model, 7)
        acc_stats_ali(model, x[part], ids[part], a)
        acc_transitions(tids[part], a)
        paths.append(tmp_path / f"{j}.acc")
        a.save(paths[-1])
    total = GmmAccs.sum_files(paths)
    for f in ("occ", "mean_acc", "var_acc", "trans"):
        np.testing.assert_allclose(getattr(total, f), getattr(whole, f), rtol=1e-12, atol=1e-12)
    assert total.tot_like == pytest.approx(whole.tot_like)
    np.testing.assert_array_equal(whole.trans, np.bincount(tids, minlength=8))
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]
    with pytest.raises(FormatError):
        acc_transitions(np.array([8]), whole)
    other = GmmAccs.zeros(np.array([0, 1, 2]), 2, 7)
    with pytest.raises(FormatError):
        total += other
    (tmp_path / "bad.acc").write_text("junk")
    with pytest.raises(FormatError):
        GmmAccs.load(tmp_path / "bad.acc")


def test_stats_do_not_depend_on_how_batches_are_split_among_jobs(tmp_path):
    """The same batches (terms) summed as 1, 2 or 5 jobs in any order: the same bits."""
    rng = np.random.default_rng(4)
    model = StackedGmms.from_gmms(random_gmms(rng, 4, 3))
    batches = [(rng.normal(size=(n, 3)) * 10.0 ** rng.integers(-3, 4), rng.integers(0, 4, n))
               for n in rng.integers(5, 60, 12)]
    runs = []
    for jobs in ([range(12)], [range(5), range(5, 12)], [[3, 1, 0], [2, 4], [5, 11, 7],
                                                         [6, 8], [9, 10]]):
        paths = []
        for j, members in enumerate(jobs):
            a = GmmAccs.for_model(model, 7)
            for b in members:
                acc_stats_ali(model, *batches[b], a)
            paths.append(tmp_path / f"{len(jobs)}.{j}.acc")
            a.save(paths[-1])
        runs.append(GmmAccs.sum_files(paths[::-1]))
    for r in runs[1:]:
        for f in ("occ", "mean_acc", "var_acc"):
            np.testing.assert_array_equal(getattr(r, f), getattr(runs[0], f))
        assert r.tot_like == runs[0].tot_like and r.tot_t == runs[0].tot_t


def test_stats_file_of_another_version_is_refused(tmp_path):
    p = tmp_path / "old.acc"
    with open(p, "wb") as f:
        np.savez(f, format=np.array("nnetmix-gmm-accs-v1"), offsets=np.array([0, 1]))
    with pytest.raises(FormatError, match="another nnetmix version"):
        GmmAccs.load(p)


def test_damaged_stats_file_is_one_error_naming_it(tmp_path):
    """A cut .acc (a killed job) is a FormatError naming the file, read directly or through a
    pipe; never a zipfile traceback."""
    from nnetmix.hmm.gmm_tools import read_accs

    rng = np.random.default_rng(5)
    model = StackedGmms.from_gmms(random_gmms(rng, 2, 2))
    a = GmmAccs.for_model(model, 3)
    acc_stats_ali(model, rng.normal(size=(20, 2)), rng.integers(0, 2, 20), a)
    good, cut = tmp_path / "1.acc", tmp_path / "2.acc"
    a.save(good)
    cut.write_bytes(good.read_bytes()[:200])
    with pytest.raises(FormatError, match=f"^{cut}: GMM stats: truncated"):
        GmmAccs.load(cut)
    with pytest.raises(FormatError, match=r"^cat .*2.acc \|: GMM stats: truncated"):
        read_accs(f"cat {cut} |")
    np.testing.assert_array_equal(read_accs(f"cat {good} |").occ, a.occ)
