"""The monophone training bin tools through main(argv), on a yesno lang and synthetic features:
gmm-init-mono, compile-train-graphs, align-equal-compiled, gmm-acc-stats-ali, gmm-sum-accs,
gmm-est, gmm-align-compiled, align-compiled-mapped, gmm-boost-silence, subset-feats."""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from helpers import (FIXTURES, PRONS, ROOT, check_alignment, load_bin, make_lang, make_utts,
                     write_feats_ark, write_text)

from nnetmix.kaldi import SequentialReader, TableWriter, read_gmm_model

UTTS = make_utts(12)
SHORT = UTTS[3][0]


def run(tool: str, *argv) -> int:
    return load_bin(tool).main(["--print-args=false", *map(str, argv)])


def read_alis(path) -> dict:
    with SequentialReader(f"ark:{path}", "ivec") as r:
        return {k: np.asarray(a) for k, a in r}


@pytest.fixture(scope="module")
def setup(tmp_path_factory, request):
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} not present")
    d = tmp_path_factory.mktemp("gmmtools")
    lang = make_lang(FIXTURES, d / "lang")
    feats = write_feats_ark(d / "feats.ark", UTTS, short=(SHORT,))
    words = dict(ln.split() for ln in (lang / "words.txt").read_text().splitlines())
    (d / "text.int").write_text("".join(f"{k} {' '.join(words[x] for x in w)}\n"
                                        for k, w in UTTS))
    assert run("gmm-init-mono.py", f"--shared-phones={lang}/phones/sets.int",
               f"--train-feats=ark:{d}/feats.ark", lang / "topo", 39, d / "0.mdl",
               d / "tree") == 0
    assert run("compile-train-graphs.py", f"--read-disambig-syms={lang}/phones/disambig.int",
               d / "tree", d / "0.mdl", lang / "L.fst", f"ark:{d}/text.int",
               f"ark:|gzip -c >{d}/fsts.gz") == 0
    return d, lang, feats


def test_init_mono_global_mean(setup):
    d, _, feats = setup
    tm, am = read_gmm_model(str(d / "0.mdl"))
    assert am.num_pdfs == tm.num_pdfs == 20 and am.num_gauss == 20 and am.dim == 39
    allx = np.concatenate(list(feats.values())).astype(np.float64)
    np.testing.assert_allclose(am[0].means[0], allx.mean(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(am[7].vars[0], allx.var(0), rtol=1e-4)


def test_equal_align_covers_frames_and_follows_topology(setup, capfd):
    d, _, feats = setup
    rc = run("align-equal-compiled.py", f"ark:gunzip -c {d}/fsts.gz|", f"ark:{d}/feats.ark",
             f"ark:{d}/equal.ali")
    assert rc == 0
    err = capfd.readouterr().err
    assert f"did not align utterence {SHORT}" in err  # 2 frames: too short for its transcript
    assert "Computed 11 alignments; 0 lacked features, 1 had other errors." in err
    tm, _ = read_gmm_model(str(d / "0.mdl"))
    alis = read_alis(d / "equal.ali")
    assert set(alis) == {k for k, _ in UTTS} - {SHORT}
    for k, a in alis.items():
        assert len(a) == len(feats[k])
        phones = check_alignment(tm, a)
        assert [p for p in phones if p != 1]  # some word phones between optional silences


@pytest.fixture(scope="module")
def trained(setup):
    """Equal alignment, then two accumulate/update/realign rounds, through the bin tools."""
    d, _, _ = setup
    assert run("align-equal-compiled.py", f"ark:gunzip -c {d}/fsts.gz|", f"ark:{d}/feats.ark",
               f"ark:{d}/0.ali") == 0
    for j in (1, 2):  # two "jobs" over the same data, to exercise gmm-sum-accs
        assert run("gmm-acc-stats-ali.py", d / "0.mdl", f"ark:{d}/feats.ark", f"ark:{d}/0.ali",
                   d / f"0.{j}.acc") == 0
    assert run("gmm-est.py", "--min-gaussian-occupancy=3", "--mix-up=40", "--power=0.25",
               d / "0.mdl", f"{sys.executable} {ROOT}/bin/gmm-sum-accs.py --print-args=false - "
               f"{d}/0.1.acc {d}/0.2.acc|",
               d / "1.mdl") == 0
    return d


def test_acc_sum_est(trained, capfd):
    d = trained
    assert run("gmm-sum-accs.py", d / "sum.acc", d / "0.1.acc", d / "0.2.acc") == 0
    assert run("gmm-acc-stats-ali.py", d / "1.mdl", f"ark:{d}/feats.ark", f"ark:{d}/0.ali",
               d / "1.acc") == 0
    assert run("gmm-est.py", f"--write-occs={d}/2.occs", "--mix-up=60", "--min-count=2", d / "1.mdl",
               d / "1.acc", d / "2.mdl") == 0
    err = capfd.readouterr().err
    assert "Summed 2 stats, total count" in err
    assert "Done 11 files, 1 with errors." in err  # the short utterance has no alignment
    assert run("gmm-acc-stats-ali.py", d / "0.mdl", f"ark:{d}/feats.ark", f"ark:{d}/0.ali",
               d / "0.acc") == 0
    err += capfd.readouterr().err
    likes = [float(x) for x in re.findall(r"Gaussian only\) = (\S+)", err)]
    assert len(likes) == 2 and likes[0] > likes[1]  # 1.mdl explains the data better than 0.mdl
    assert "objective function improvement per frame over" in err
    assert "Transition model update: Overall" in err
    tm1, am1 = read_gmm_model(str(d / "1.mdl"))
    _, am2 = read_gmm_model(str(d / "2.mdl"))
    assert am1.num_gauss == 40 and 40 < am2.num_gauss <= 60
    occs = (d / "2.occs").read_text().split()
    assert occs[0] == "[" and occs[-1] == "]" and len(occs) == 22
    assert not np.allclose(tm1.log_probs, read_gmm_model(str(d / "0.mdl"))[0].log_probs)


def test_acc_stats_twofeats(trained, capfd):
    """Posteriors of the alignment on the first features, statistics of the second: with the
    same features twice it is gmm-acc-stats-ali; with shifted second features the means move
    by the shift and the occupancies stay."""
    from nnetmix.hmm.gmm_tools import read_accs
    d = trained
    py = f"{sys.executable} {ROOT}/bin"
    post = f"ark:{py}/ali-to-post.py --print-args=false ark:{d}/0.ali ark:- |"
    feats2 = d / "feats2.ark"
    with SequentialReader(f"ark:{d}/feats.ark", "mat") as r, \
            TableWriter(f"ark:{feats2}", "mat") as w:
        for k, m in r:
            w[k] = np.array(m) + 3.0
    assert run("gmm-acc-stats-ali.py", d / "1.mdl", f"ark:{d}/feats.ark", f"ark:{d}/0.ali",
               d / "ali.acc") == 0
    assert run("gmm-acc-stats-twofeats.py", d / "1.mdl", f"ark:{d}/feats.ark",
               f"ark:{d}/feats.ark", post, d / "same.acc") == 0
    assert run("gmm-acc-stats-twofeats.py", d / "1.mdl", f"ark:{d}/feats.ark", f"ark:{feats2}",
               post, d / "shift.acc") == 0
    err = capfd.readouterr().err
    assert "Done 11 files, 1 with no posteriors, 0 with other errors." in err
    ali, same, shift = (read_accs(str(d / f"{n}.acc")) for n in ("ali", "same", "shift"))
    np.testing.assert_allclose(same.occ, ali.occ, rtol=1e-9)
    np.testing.assert_allclose(same.mean_acc, ali.mean_acc, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(same.trans, ali.trans)
    np.testing.assert_allclose(shift.occ, ali.occ, rtol=1e-9)
    np.testing.assert_allclose(shift.mean_acc, ali.mean_acc + 3.0 * ali.occ[:, None], rtol=1e-7,
                               atol=1e-4)  # float32 features
    assert shift.tot_like == pytest.approx(ali.tot_like)


@pytest.mark.parametrize("careful", ["false", "true"])
def test_align_compiled(trained, setup, capfd, careful):
    d = trained
    feats = setup[2]
    rc = run("gmm-align-compiled.py", "--transition-scale=1.0", "--acoustic-scale=0.1",
             "--self-loop-scale=0.1", "--beam=10", "--retry-beam=40", f"--careful={careful}",
             d / "1.mdl", f"ark:gunzip -c {d}/fsts.gz|", f"ark,s,cs:{d}/feats.ark",
             f"ark:|gzip -c >{d}/1.ali.gz", f"ark,t:{d}/scores.txt")
    assert rc == 0
    err = capfd.readouterr().err
    assert "Done 11, errors on 1" in err
    assert "Overall log-likelihood per frame is" in err
    tm, _ = read_gmm_model(str(d / "1.mdl"))
    alis = read_alis(f"gunzip -c {d}/1.ali.gz |")
    assert len(alis) == 11 and SHORT not in alis
    for k, a in alis.items():
        assert len(a) == len(feats[k])
        check_alignment(tm, a)
    # the synthetic phones are separable: the alignment finds each utterance's phones
    for k, words in UTTS:
        if k in alis:
            want = [p for w in words for p in PRONS[w]]
            assert [p for p in check_alignment(tm, alis[k]) if p != 1] == want


def test_align_compiled_mapped_on_the_gmm_loglikes_is_gmm_align_compiled(trained, capfd):
    """Kaldi's align-compiled-mapped (DecodableMatrixScaledMapped) given the GMM's own pdf
    log-likelihoods gives gmm-align-compiled's alignments and scores: only the acoustics'
    source differs. A matrix of another number of columns is one error naming the key."""
    from nnetmix.hmm.align_tools import pdf_loglikes_np
    from nnetmix.hmm.gmm_tools import read_model

    d = trained
    model = read_model(str(d / "1.mdl"))
    with SequentialReader(f"ark:{d}/feats.ark", "mat") as r, \
            TableWriter(f"ark:{d}/loglikes.ark", "mat") as w:
        for k, m in r:
            w[k] = pdf_loglikes_np(model.stacked, m).astype(np.float32)
    opts = ["--transition-scale=1.0", "--acoustic-scale=0.1", "--self-loop-scale=0.1",
            "--beam=10", "--retry-beam=40"]
    assert run("gmm-align-compiled.py", *opts, d / "1.mdl", f"ark:gunzip -c {d}/fsts.gz|",
               f"ark:{d}/feats.ark", f"ark:{d}/g.ali", f"ark,t:{d}/g.scores") == 0
    capfd.readouterr()
    assert run("align-compiled-mapped.py", *opts, d / "1.mdl", f"ark:gunzip -c {d}/fsts.gz|",
               f"ark:{d}/loglikes.ark", f"ark:{d}/m.ali", f"ark,t:{d}/m.scores") == 0
    err = capfd.readouterr().err
    assert "Done 11, errors on 1" in err and "Retried" in err
    gmm, mapped = read_alis(d / "g.ali"), read_alis(d / "m.ali")
    assert list(mapped) == list(gmm) and len(mapped) == 11
    for k in gmm:
        np.testing.assert_array_equal(mapped[k], gmm[k])
    assert (d / "m.scores").read_text() == (d / "g.scores").read_text()
    with SequentialReader(f"ark:{d}/loglikes.ark", "mat") as r, \
            TableWriter(f"ark:{d}/narrow.ark", "mat") as w:
        for k, m in r:
            w[k] = m[:, :-1]
    assert run("align-compiled-mapped.py", d / "1.mdl", f"ark:gunzip -c {d}/fsts.gz|",
               f"ark:{d}/narrow.ark", f"ark:{d}/n.ali") == 1
    err = [ln for ln in capfd.readouterr().err.splitlines() if ln.startswith("ERROR")]
    assert len(err) == 1 and f"ark:{d}/narrow.ark: utterance " in err[0]
    assert f"columns, the transition model of {d}/1.mdl {model.tm.num_pdfs} pdfs" in err[0]
    assert not (d / "n.ali").exists()


def test_feature_dim_mismatch_is_one_line(trained, capfd):
    d = trained
    write_feats_ark(d / "feats13.ark", UTTS[:2], dim=13)
    rc = run("gmm-acc-stats-ali.py", d / "1.mdl", f"ark:{d}/feats13.ark", f"ark:{d}/0.ali",
             d / "x.acc")
    assert rc == 1
    err = [ln for ln in capfd.readouterr().err.splitlines() if ln.startswith("ERROR")]
    assert len(err) == 1 and "dimension 13" in err[0] and "expects 39" in err[0]
    assert f"{d}/feats13.ark" in err[0] and f"{d}/1.mdl" in err[0]
    rc = run("gmm-align-compiled.py", d / "1.mdl", f"ark:gunzip -c {d}/fsts.gz|",
             f"ark:{d}/feats13.ark", f"ark:{d}/y.ali")
    assert rc == 1
    assert "dimension 13" in capfd.readouterr().err
    assert not (d / "x.acc").exists() and not (d / "y.ali").exists()


def test_boost_silence(trained, capfd):
    d = trained
    assert run("gmm-boost-silence.py", "--boost=1.5", "1", d / "1.mdl", d / "b.mdl") == 0
    assert "Boosted weights for 5 pdfs, by factor of 1.5" in capfd.readouterr().err
    tm, a = read_gmm_model(str(d / "1.mdl"))
    _, b = read_gmm_model(str(d / "b.mdl"))
    for p in range(tm.num_pdfs):
        k = 1.5 if p < 5 else 1.0  # SIL's five states are pdfs 0..4
        np.testing.assert_allclose(b[p].weights, a[p].weights * k, rtol=1e-6)


def test_subset_feats(setup):
    d = setup[0]
    assert run("subset-feats.py", "--n=3", f"ark:{d}/feats.ark", f"ark:{d}/sub.ark") == 0
    with SequentialReader(f"ark:{d}/sub.ark", "mat") as r:
        assert [k for k, _ in r] == [k for k, _ in UTTS[:3]]


def test_compile_graphs_counts_and_usage(setup, capfd):
    d, lang, _ = setup
    write_text(d / "t2.int", UTTS[:2], {UTTS[0][0]: "3 2", UTTS[1][0]: "2"})
    assert run("compile-train-graphs.py", d / "tree", d / "0.mdl", lang / "L.fst",
               f"ark:{d}/t2.int", f"ark:{d}/t2.fsts") == 0
    assert "succeeded for 2 graphs, failed for 0" in capfd.readouterr().err
    assert run("compile-train-graphs.py", d / "tree") == 1
    assert "Usage:" in capfd.readouterr().err
