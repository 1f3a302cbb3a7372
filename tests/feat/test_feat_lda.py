"""acc-lda / est-lda / transform-feats: Kaldi's LDA statistics file byte for byte, the estimate
against scipy's generalized eigenproblem, statistics that add up across files, per-speaker and
affine transforms, randomized pruning, and bad input."""
import struct

import numpy as np
import pytest
import scipy.linalg
from helpers import FIXTURES, load_bin, split_feature_ark

from nnetmix.feat.lda import LdaError, LdaOptions, LdaStats, rand_prune, read_lda_stats
from nnetmix.kaldi import SequentialReader, TableWriter, read_object, write_object
from nnetmix.kaldi.tokens import TokenWriter
from nnetmix.kaldi.transition_model import read_transition_model

YESNO = FIXTURES / "yesno"
pytestmark = pytest.mark.skipif(not YESNO.is_dir(), reason=f"no Kaldi fixtures at {YESNO}")


def _i32(x):
    return b"\x04" + struct.pack("<i", x)


def test_stats_file_is_kaldis_bytes():
    """LdaEstimate::Write of 2 classes in 2 dims, written out by hand from Kaldi's code."""
    st = LdaStats(2, 2)
    st.accumulate(np.array([[1.0, 2.0], [3.0, 5.0], [0.5, -1.0]]), np.array([0, 1, 2]),
                  np.array([0, 0, 1]), np.array([1.0, 0.5, 2.0]))
    w = TokenWriter(True)
    st.write(w)
    zero = np.array([1.5, 2.0], np.float32)
    first = np.array([[2.5, 4.5], [1.0, -2.0]], np.float32)
    x = np.array([[1.0, 2.0], [3.0, 5.0], [0.5, -1.0]])
    second = (x * np.array([1.0, 0.5, 2.0])[:, None]).T @ x
    f64 = first.astype(np.float64)   # exact here; Kaldi subtracts class by class in double
    second = second - np.outer(f64[0], f64[0]) / 1.5
    second = second - np.outer(f64[1], f64[1]) / 2.0
    expect = (b"<LDAACCS> <VECSIZE> " + _i32(2) + b"<NUMCLASSES> " + _i32(2)
              + b"<ZERO_ACCS> FV " + _i32(2) + zero.tobytes()
              + b"<FIRST_ACCS> FM " + _i32(2) + _i32(2) + first.tobytes()
              + b"<SECOND_ACCS> FP " + _i32(2)
              + np.array([second[0, 0], second[1, 0], second[1, 1]], np.float32).tobytes()
              + b"</LDAACCS> ")
    assert w.getvalue() == expect
    t = TokenWriter(False)
    st.write(t)
    assert t.getvalue().decode().startswith(
        "<LDAACCS> <VECSIZE> 2 <NUMCLASSES> 2 <ZERO_ACCS>  [ 1.5 2 ]")
    assert "<SECOND_ACCS> [\n" in t.getvalue().decode()


@pytest.fixture(scope="module")
def yesno_task(tmp_path_factory):
    """Kaldi's yesno alignments with synthetic features: each pdf a mean in 12 dims, noise."""
    d = tmp_path_factory.mktemp("lda")
    tm = read_transition_model(str(YESNO / "40.mdl"))
    rng = np.random.default_rng(3)
    num_pdfs = int(tm.tid2pdf.max()) + 1
    means = rng.normal(size=(num_pdfs, 12)) * 2.0
    mix = rng.normal(size=(12, 12))
    with SequentialReader(f"ark:gunzip -c {YESNO / 'ali.1.gz'}|", "ivec") as r, \
            TableWriter(f"ark:{d / 'feats.ark'}", "mat") as fw, \
            TableWriter(f"ark:{d / 'post.ark'}", "post") as pw:
        for key, ali in r:
            x = means[tm.tid2pdf[ali]] + rng.normal(size=(len(ali), 12)) @ mix * 0.3
            fw.write(key, x.astype(np.float32))
            pw.write(key, [[(int(a), 1.0)] for a in ali])
    return d, tm, num_pdfs


def test_acc_and_est_lda_solve_the_generalized_eigenproblem(yesno_task, tmp_path):
    d, tm, num_pdfs = yesno_task
    acc, mat, full = tmp_path / "lda.acc", tmp_path / "lda.mat", tmp_path / "full.mat"
    assert load_bin("acc-lda.py").main([str(YESNO / "40.mdl"), f"ark:{d / 'feats.ark'}",
                                        f"ark:{d / 'post.ark'}", str(acc)]) == 0
    dim = 8   # < the 12 feature dims and the 20 pdfs
    assert load_bin("est-lda.py").main([f"--dim={dim}", f"--write-full-matrix={full}",
                                        str(mat), str(acc)]) == 0
    m = read_object(str(mat), "mat").astype(np.float64)
    assert m.shape == (dim, 12)
    total, between, _, count = read_lda_stats([str(acc)]).covariances()
    within = total - between
    s, _ = scipy.linalg.eigh(between, within)
    s = s[::-1]
    np.testing.assert_allclose(m @ within @ m.T, np.eye(dim), atol=2e-4)
    np.testing.assert_allclose(m @ between @ m.T, np.diag(s[:dim]), atol=2e-4 * s[0])
    assert read_object(str(full), "mat").shape == (12, 12)
    assert count == sum(len(a) for _, a in SequentialReader(
        f"ark:gunzip -c {YESNO / 'ali.1.gz'}|", "ivec"))


def test_stats_add_across_files_and_survive_text(yesno_task, tmp_path):
    """Two halves' files sum to the whole's statistics; text and binary files agree."""
    d, tm, _ = yesno_task
    for name, spec in split_feature_ark(d / "feats.ark", tmp_path).items():
        assert load_bin("acc-lda.py").main([
            f"--binary={'false' if name == 'b' else 'true'}", str(YESNO / "40.mdl"), spec,
            f"ark:{d / 'post.ark'}", str(tmp_path / f"{name}.acc")]) == 0
    both = read_lda_stats([str(tmp_path / "a.acc"), str(tmp_path / "b.acc")])
    whole = read_lda_stats([str(tmp_path / "all.acc")])
    np.testing.assert_allclose(both.zero, whole.zero)
    np.testing.assert_allclose(both.first, whole.first, rtol=1e-6)
    np.testing.assert_allclose(both.second, whole.second, rtol=1e-5)


def test_transform_feats_global_affine_and_per_speaker(tmp_path, capsys):
    rng = np.random.default_rng(1)
    x = {f"u{i}": rng.normal(size=(5, 4)).astype(np.float32) for i in range(3)}
    with TableWriter(f"ark:{tmp_path / 'f.ark'}", "mat") as w:
        for k, v in x.items():
            w.write(k, v)
    aff = rng.normal(size=(3, 5)).astype(np.float32)
    write_object(str(tmp_path / "aff.mat"), aff, "mat")
    tf = load_bin("transform-feats.py").main
    assert tf([str(tmp_path / "aff.mat"), f"ark:{tmp_path / 'f.ark'}",
               f"ark:{tmp_path / 'o.ark'}"]) == 0
    out = dict(SequentialReader(f"ark:{tmp_path / 'o.ark'}", "mat"))
    np.testing.assert_allclose(out["u1"], x["u1"] @ aff[:, :4].T + aff[:, 4], rtol=1e-5)
    spk = {"a": rng.normal(size=(4, 4)).astype(np.float32)}
    with TableWriter(f"ark:{tmp_path / 'trans.ark'}", "mat") as w:
        w.write("a", spk["a"])
    (tmp_path / "utt2spk").write_text("u0 a\nu1 a\nu2 b\n")
    capsys.readouterr()
    assert tf([f"--utt2spk=ark:{tmp_path / 'utt2spk'}", f"ark:{tmp_path / 'trans.ark'}",
               f"ark:{tmp_path / 'f.ark'}", f"ark:{tmp_path / 'p.ark'}"]) == 0
    out = dict(SequentialReader(f"ark:{tmp_path / 'p.ark'}", "mat"))
    assert sorted(out) == ["u0", "u1"]
    np.testing.assert_allclose(out["u0"], x["u0"] @ spk["a"].T, rtol=1e-5)
    text = capsys.readouterr().err
    assert "No fMLLR transform available for utterance u2 [spk = b]" in text
    assert "Applied transform to 2 utterances; 1 had errors." in text
    ld = np.linalg.slogdet(spk["a"].astype(np.float64))[1]
    assert f"Overall average logdet is {ld:.6g} over 10 frames." in text


def test_rand_prune_keeps_large_weights_and_is_unbiased():
    rng = np.random.default_rng(0)
    w = np.array([0.05] * 20000 + [0.9])
    p = rand_prune(w, 0.5, rng)
    assert p[-1] == 0.9 and set(np.unique(p[:-1])) <= {0.0, 0.5}
    assert abs(p[:-1].mean() - 0.05) < 0.01
    np.testing.assert_array_equal(rand_prune(w, 0.0, rng), w)


def test_bad_input(yesno_task, tmp_path, capsys):
    d, tm, num_pdfs = yesno_task
    st = LdaStats(3, 4)
    with pytest.raises(LdaError, match="--dim=3 needs more than 3 classes"):
        st.estimate(LdaOptions(dim=3, allow_large_dim=False))
    with pytest.raises(LdaError, match="between 1 and the feature dimension 4"):
        st.estimate(LdaOptions(dim=5, allow_large_dim=True))
    with pytest.raises(LdaError, match="no data"):
        st.estimate(LdaOptions(dim=2))
    with TableWriter(f"ark:{tmp_path / 'bigtid.ark'}", "post") as w:
        for key, x in SequentialReader(f"ark:{d / 'feats.ark'}", "mat"):
            w.write(key, [[(10 ** 6, 1.0)]] * x.shape[0])
    assert load_bin("acc-lda.py").main([str(YESNO / "40.mdl"), f"ark:{d / 'feats.ark'}",
                                        f"ark:{tmp_path / 'bigtid.ark'}",
                                        str(tmp_path / "x.acc")]) != 0
    err = capsys.readouterr().err
    assert "transition-id 1000000 is not in the model" in err
    assert not (tmp_path / "x.acc").exists()
    (tmp_path / "junk.acc").write_bytes(b"\0B<LDAACCS> <VECSIZE> \x04\x02\x00\x00\x00<NUMCL")
    assert load_bin("est-lda.py").main([str(tmp_path / "m"), str(tmp_path / "junk.acc")]) != 0
    assert "junk.acc" in capsys.readouterr().err and not (tmp_path / "m").exists()


@pytest.mark.parametrize("b_affine", [False, True], ids=["b-linear", "b-affine"])
def test_compose_transforms_equals_applying_both(tmp_path, b_affine):
    """transform-feats with compose-transforms A B equals B then A, for an affine A after a
    linear or an affine B; tables compose key by key."""
    rng = np.random.default_rng(5)
    x = {f"u{i}": rng.normal(size=(6, 4)).astype(np.float32) for i in range(2)}
    with TableWriter(f"ark:{tmp_path / 'f.ark'}", "mat") as w:
        for k, v in x.items():
            w.write(k, v)
    a = rng.normal(size=(3, 4)).astype(np.float32)           # affine on B's 3 outputs
    b = rng.normal(size=(3, 5 if b_affine else 4)).astype(np.float32)
    write_object(str(tmp_path / "a.mat"), a, "mat")
    write_object(str(tmp_path / "b.mat"), b, "mat")
    opts = ["--b-is-affine=true"] if b_affine else []
    assert load_bin("compose-transforms.py").main(
        [*opts, str(tmp_path / "a.mat"), str(tmp_path / "b.mat"), str(tmp_path / "c.mat")]) == 0
    tf = load_bin("transform-feats.py").main
    for mat, src, dst in (("b", "f", "fb"), ("a", "fb", "fab"), ("c", "f", "fc")):
        assert tf([str(tmp_path / f"{mat}.mat"), f"ark:{tmp_path / src}.ark",
                   f"ark:{tmp_path / dst}.ark"]) == 0
    two = dict(SequentialReader(f"ark:{tmp_path / 'fab.ark'}", "mat"))
    one = dict(SequentialReader(f"ark:{tmp_path / 'fc.ark'}", "mat"))
    for k in x:
        np.testing.assert_allclose(one[k], two[k], rtol=1e-4, atol=1e-5)
    with TableWriter(f"ark:{tmp_path / 'bt.ark'}", "mat") as w:
        w.write("u0", b)
    assert load_bin("compose-transforms.py").main(
        [*opts, str(tmp_path / "a.mat"), f"ark:{tmp_path / 'bt.ark'}",
         f"ark:{tmp_path / 'ct.ark'}"]) == 0
    ct = dict(SequentialReader(f"ark:{tmp_path / 'ct.ark'}", "mat"))
    np.testing.assert_allclose(ct["u0"], read_object(str(tmp_path / "c.mat"), "mat"))
    assert load_bin("compose-transforms.py").main(
        [str(tmp_path / "a.mat"), f"ark:{tmp_path / 'bt.ark'}", str(tmp_path / "x.mat")]) != 0
