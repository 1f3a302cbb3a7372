"""gmm-est-fmllr / gmm-est-fmllr-gpost / gmm-post-to-gpost / weight-silence-post: a known
per-speaker affine transform recovered, an auxiliary function that never falls, the diag and
offset closed forms, the minimum count, Kaldi's trans archive bytes and bad input."""
import struct

import numpy as np
import pytest
from helpers import FIXTURES, load_bin, write_lines, write_spk_maps

from nnetmix.hmm.fmllr import (FmllrOptions, FmllrStats, compute_fmllr, fmllr_auxf,
                               fmllr_update_diag, fmllr_update_full, fmllr_update_offset)
from nnetmix.hmm.gauss_post import entry_gauss_posteriors, natural_params
from nnetmix.hmm.gmm_tools import read_model, write_model
from nnetmix.hmm.post_tools import weight_silence
from nnetmix.kaldi import SequentialReader, TableWriter

YESNO = FIXTURES / "yesno"
pytestmark = pytest.mark.skipif(not YESNO.is_dir(), reason=f"no Kaldi fixtures at {YESNO}")
DIM = 4
SHORT = 200  # frames of the speaker below --fmllr-min-count


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    """Features drawn from a 2-Gaussian-per-pdf diagonal model along Kaldi's yesno alignments,
    then moved per speaker by y = A x + b (two speakers, and spk3 with SHORT frames)."""
    d = tmp_path_factory.mktemp("fmllr")
    base = read_model(str(YESNO / "40.mdl"))
    rng = np.random.default_rng(7)
    num_pdfs = base.stacked.num_pdfs
    means = rng.normal(size=(num_pdfs, 2, DIM)) * 2.5
    vars_ = rng.uniform(0.3, 1.5, size=(num_pdfs, 2, DIM))

    class G:
        def __init__(self, p):
            self.weights, self.means, self.vars = np.full(2, 0.5), means[p], vars_[p]
    write_model(str(d / "final.mdl"), base.tm, [G(p) for p in range(num_pdfs)])
    xforms = {s: (np.eye(DIM) + 0.3 * rng.normal(size=(DIM, DIM)), rng.normal(size=DIM))
              for s in ("spk1", "spk2", "spk3")}
    utt2spk, clean = {}, {}
    with SequentialReader(f"ark:gunzip -c {YESNO / 'ali.1.gz'}|", "ivec") as r, \
            TableWriter(f"ark:{d / 'feats.ark'}", "mat") as fw, \
            TableWriter(f"ark:{d / 'post.ark'}", "post") as pw, \
            TableWriter(f"ark:{d / 'true.gpost'}", "gpost") as gw:
        for n, (key, ali) in enumerate(r):
            spk = "spk3" if n == 0 else ("spk1", "spk2")[n % 2]
            ali = ali[:SHORT] if spk == "spk3" else ali
            pdf = base.tm.tid2pdf[ali]
            comp = rng.integers(0, 2, size=len(ali))
            x = means[pdf, comp] + rng.normal(size=(len(ali), DIM)) * np.sqrt(vars_[pdf, comp])
            A, b = xforms[spk]
            utt2spk[key], clean[key] = spk, x
            fw.write(key, (x @ A.T + b).astype(np.float32))
            pw.write(key, [[(int(a), 1.0)] for a in ali])
            gw.write(key, [[(int(a), np.eye(2, dtype=np.float32)[c])] for a, c in zip(ali, comp)])
    write_spk_maps(d, utt2spk)
    return d, xforms, clean


def est(d, out, *extra, feats=None, post=None, tool="gmm-est-fmllr.py"):
    return load_bin(tool).main([*extra, f"--spk2utt=ark:{d / 'spk2utt'}", str(d / "final.mdl"),
                                feats or f"ark:{d / 'feats.ark'}", post or f"ark:{d / 'post.ark'}",
                                out])


def inverse(xforms, spk):
    A, b = xforms[spk]
    inv = np.linalg.inv(A)
    return np.hstack([inv, (-inv @ b)[:, None]])


def test_true_posteriors_recover_the_inverse(task, tmp_path, capsys):
    """With the Gaussians that drew each frame (gmm-est-fmllr-gpost) the estimate is the
    maximum-likelihood one and lands on the inverse of the speaker's transform."""
    d, xforms, clean = task
    assert est(d, f"ark:{tmp_path / 'trans'}", post=f"ark:{d / 'true.gpost'}",
               tool="gmm-est-fmllr-gpost.py") == 0
    err = capsys.readouterr().err
    assert "For speaker spk1, auxf-impr from fMLLR is" in err
    assert "fMLLR objf improvement is" in err and "Overall fMLLR auxf impr per frame is" in err
    warn = [line for line in err.splitlines() if "below min-count" in line]
    assert len(warn) == 1 and "WARNING" in warn[0] and "spk3" in warn[0]
    trans = dict(SequentialReader(f"ark:{tmp_path / 'trans'}", "mat"))
    assert sorted(trans) == ["spk1", "spk2", "spk3"]
    for spk in ("spk1", "spk2"):
        assert trans[spk].shape == (DIM, DIM + 1)
        np.testing.assert_allclose(trans[spk], inverse(xforms, spk), atol=0.05)
    np.testing.assert_array_equal(trans["spk3"], np.hstack([np.eye(DIM), np.zeros((DIM, 1))]))
    # transform-feats.py --utt2spk applies them: the speakers' features come back
    assert load_bin("transform-feats.py").main([
        f"--utt2spk=ark:{d / 'utt2spk'}", f"ark:{tmp_path / 'trans'}", f"ark:{d / 'feats.ark'}",
        f"ark:{tmp_path / 'adapted.ark'}"]) == 0
    spk_of = dict(line.split() for line in (d / "utt2spk").read_text().splitlines())
    for key, y in SequentialReader(f"ark:{tmp_path / 'adapted.ark'}", "mat"):
        if spk_of[key] != "spk3":
            assert np.abs(y - clean[key]).mean() < 0.05


def test_second_pass_on_adapted_features(task, tmp_path):
    """As steps/train_sat.sh and decode_fmllr.sh do: estimate on features already moved by the
    first transform, compose the two (compose-transforms --b-is-affine); with pdf posteriors
    (component posteriors from the model) the second pass gets closer to the inverse."""
    d, xforms, _ = task
    assert est(d, f"ark:{tmp_path / 'pass1'}") == 0
    assert load_bin("transform-feats.py").main([
        f"--utt2spk=ark:{d / 'utt2spk'}", f"ark:{tmp_path / 'pass1'}", f"ark:{d / 'feats.ark'}",
        f"ark:{tmp_path / 'adapted.ark'}"]) == 0
    assert est(d, f"ark:{tmp_path / 'pass2'}", feats=f"ark:{tmp_path / 'adapted.ark'}") == 0
    assert load_bin("compose-transforms.py").main([
        "--b-is-affine=true", f"ark:{tmp_path / 'pass2'}", f"ark:{tmp_path / 'pass1'}",
        f"ark:{tmp_path / 'both'}"]) == 0
    one = dict(SequentialReader(f"ark:{tmp_path / 'pass1'}", "mat"))
    two = dict(SequentialReader(f"ark:{tmp_path / 'both'}", "mat"))
    for spk in ("spk1", "spk2"):
        err1 = np.abs(one[spk] - inverse(xforms, spk)).max()
        err2 = np.abs(two[spk] - inverse(xforms, spk)).max()
        assert err2 < 0.8 * err1 and err2 < 0.1


def test_likelihood_rises(task, tmp_path):
    """Σ log p(W y⁺) + T log|det A| (the adapted model's likelihood) beats Σ log p(y)."""
    d, _, _ = task
    assert est(d, f"ark:{tmp_path / 'trans'}") == 0
    trans = dict(SequentialReader(f"ark:{tmp_path / 'trans'}", "mat"))
    model = read_model(str(d / "final.mdl"))
    spk_of = dict(line.split() for line in (d / "utt2spk").read_text().splitlines())
    posts = dict(SequentialReader(f"ark:{d / 'post.ark'}", "post"))
    before = after = 0.0
    for key, y in SequentialReader(f"ark:{d / 'feats.ark'}", "mat"):
        W = trans[spk_of[key]].astype(np.float64)
        z = y @ W[:, :DIM].T + W[:, DIM]
        before += entry_gauss_posteriors(model, y, posts[key]).tot_like
        after += (entry_gauss_posteriors(model, z, posts[key]).tot_like
                  + len(y) * np.linalg.slogdet(W[:, :DIM])[1])
    assert after > before + 0.5 * 18000


def speaker_stats(d, spk):
    model = read_model(str(d / "final.mdl"))
    miv, inv = natural_params(model)
    utts = (d / "spk2utt").read_text().split("\n")
    mine = next(line.split()[1:] for line in utts if line.startswith(spk + " "))
    posts = dict(SequentialReader(f"ark:{d / 'post.ark'}", "post"))
    st = FmllrStats(model.dim)
    for key, y in SequentialReader(f"ark:{d / 'feats.ark'}", "mat"):
        if key in mine:
            ep = entry_gauss_posteriors(model, y, posts[key])
            st.accumulate(y, ep.frames[ep.rows], ep.gauss, ep.gamma, miv, inv)
    return st


def test_auxf_never_decreases(task):
    d, _, _ = task
    st = speaker_stats(d, "spk1")
    W0 = np.hstack([np.eye(DIM), np.zeros((DIM, 1))])
    trace = []
    W, impr = fmllr_update_full(W0, st, 12, trace)
    objf = [fmllr_auxf(W0, st)] + trace
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(objf, objf[1:]))
    assert objf[1] > objf[0] and impr == pytest.approx(objf[-1] - objf[0])
    # the converged transform is a stationary point: Kaldi's gradient β A⁻ᵀ + K - [w_i G_i]
    grad = np.hstack([st.beta * np.linalg.inv(W[:, :DIM]).T, np.zeros((DIM, 1))]) + st.K \
        - np.einsum("iab,ib->ia", st.G, W)
    assert np.abs(grad).max() < 1e-6 * st.beta


def test_diag_and_offset_closed_forms(task):
    d, _, _ = task
    st = speaker_stats(d, "spk2")
    W0 = np.hstack([np.eye(DIM), np.zeros((DIM, 1))])
    i = np.arange(DIM)
    Wd, impr_d = fmllr_update_diag(W0, st)
    s, o = Wd[i, i], Wd[:, DIM]
    # the auxiliary function's derivatives in s_i and o_i vanish, with s_i > 0
    ds = st.beta / s + st.K[i, i] - s * st.G[i, i, i] - o * st.G[i, DIM, i]
    do = st.K[:, DIM] - s * st.G[i, DIM, i] - o * st.G[i, DIM, DIM]
    assert np.all(s > 0) and np.abs(ds).max() < 1e-8 * st.beta and np.abs(do).max() < 1e-8 * st.beta
    assert np.count_nonzero(Wd[:, :DIM] - np.diag(s)) == 0
    Wo, impr_o = fmllr_update_offset(W0, st)
    np.testing.assert_array_equal(Wo[:, :DIM], np.eye(DIM))
    np.testing.assert_allclose(Wo[:, DIM], (st.K[:, DIM] - st.G[i, i, DIM]) / st.G[i, DIM, DIM])
    # each is the optimum of a larger family than the one before
    _, impr_f = fmllr_update_full(W0, st, 40)
    assert 0 < impr_o <= impr_d <= impr_f
    assert impr_d == pytest.approx(fmllr_auxf(Wd, st) - fmllr_auxf(W0, st))
    for kind, want in (("diag", Wd), ("offset", Wo), ("none", W0)):
        W, _ = compute_fmllr(st, FmllrOptions(fmllr_update_type=kind))
        np.testing.assert_allclose(W, want.astype(np.float32))


def test_min_count_keeps_identity(task, caplog):
    d, _, _ = task
    st = speaker_stats(d, "spk3")
    assert st.beta == SHORT
    W, impr = compute_fmllr(st, FmllrOptions(), "speaker spk3")
    assert impr == 0.0 and np.array_equal(W, np.hstack([np.eye(DIM), np.zeros((DIM, 1))]))
    assert "below min-count: count is 200 (for speaker spk3)" in caplog.text
    W, impr = compute_fmllr(st, FmllrOptions(fmllr_min_count=100.0))
    assert impr > 0 and not np.array_equal(W[:, :DIM], np.eye(DIM))


def kaldi_identity_bytes(key: str, binary: bool) -> bytes:
    W = np.hstack([np.eye(DIM), np.zeros((DIM, 1))]).astype("<f4")
    if binary:
        return (key.encode() + b" \0BFM \x04" + struct.pack("<i", DIM) + b"\x04"
                + struct.pack("<i", DIM + 1) + W.tobytes())
    rows = "".join("\n  " + "".join(f"{int(v)} " for v in row) for row in W)
    return f"{key}  [{rows}]\n".encode()


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "text"])
def test_trans_archive_is_kaldis_bytes(task, tmp_path, binary):
    d, _, _ = task
    spec = "ark" if binary else "ark,t"
    write_lines(tmp_path / "spk2utt", [(d / "spk2utt").read_text().splitlines()[-1]])
    assert load_bin("gmm-est-fmllr.py").main([
        f"--spk2utt=ark:{tmp_path / 'spk2utt'}", str(d / "final.mdl"), f"ark:{d / 'feats.ark'}",
        f"ark:{d / 'post.ark'}", f"{spec}:{tmp_path / 'trans'}"]) == 0
    assert (tmp_path / "trans").read_bytes() == kaldi_identity_bytes("spk3", binary)
    # a real transform round-trips byte for byte
    assert est(d, f"{spec}:{tmp_path / 'full'}") == 0
    with TableWriter(f"{spec}:{tmp_path / 'again'}", "mat") as w:
        for key, W in SequentialReader(f"ark:{tmp_path / 'full'}", "mat"):
            w.write(key, W)
    assert (tmp_path / "again").read_bytes() == (tmp_path / "full").read_bytes()


def test_gpost_path_gives_the_same_transforms(task, tmp_path, capsys):
    d, _, _ = task
    gp = tmp_path / "gpost"
    assert load_bin("gmm-post-to-gpost.py").main([
        str(d / "final.mdl"), f"ark:{d / 'feats.ark'}", f"ark:{d / 'post.ark'}",
        f"ark:{gp}"]) == 0
    err = capsys.readouterr().err
    assert "avg like per frame (Gaussian only) =" in err and "Done converting post to gpost" in err
    assert est(d, f"ark:{tmp_path / 'a'}") == 0
    assert est(d, f"ark:{tmp_path / 'b'}", post=f"ark:{gp}", tool="gmm-est-fmllr-gpost.py") == 0
    a = dict(SequentialReader(f"ark:{tmp_path / 'a'}", "mat"))
    b = dict(SequentialReader(f"ark:{tmp_path / 'b'}", "mat"))
    assert sorted(a) == sorted(b)
    for k in a:
        np.testing.assert_allclose(a[k], b[k], atol=2e-4)


def test_gpost_table_bytes(tmp_path):
    g = [[(5, np.array([0.25, 0.75], np.float32))], []]
    for spec in ("ark", "ark,t"):
        with TableWriter(f"{spec}:{tmp_path / 'g'}", "gpost") as w:
            w.write("u", g)
        raw = (tmp_path / "g").read_bytes()
        if spec == "ark":
            i = b"\x04" + struct.pack("<i", 1)
            want = (b"u \0B\x04" + struct.pack("<i", 2) + i + b"\x04" + struct.pack("<i", 5)
                    + b"FV " + b"\x04" + struct.pack("<i", 2) + np.array([.25, .75], "<f4").tobytes()
                    + b"\x04" + struct.pack("<i", 0))
        else:
            want = b"u 2 1 5  [ 0.25 0.75 ]\n0 \n"
        assert raw == want
        (key, back), = SequentialReader(f"ark:{tmp_path / 'g'}", "gpost")
        assert key == "u" and back[1] == [] and back[0][0][0] == 5
        np.testing.assert_array_equal(back[0][0][1], g[0][0][1])


def test_weight_silence_post_hand_case(tmp_path):
    tm = read_model(str(YESNO / "40.mdl")).tm
    sil = int(np.flatnonzero(tm.tid2phone == 1)[0])
    speech = int(np.flatnonzero(tm.tid2phone == 2)[0])
    post = [[(sil, 0.5), (speech, 0.5)], [(sil, 1.0)], [(speech, 1.0)], []]
    assert weight_silence(tm, post, [1], 0.1) == [
        [(sil, 0.05), (speech, 0.5)], [(sil, 0.1)], [(speech, 1.0)], []]
    assert weight_silence(tm, post, [1], 0.0) == [[(speech, 0.5)], [], [(speech, 1.0)], []]
    # --distribute: the frame scaled by (0.5 * 0.1 + 0.5) / 1 = 0.55
    got = weight_silence(tm, post, [1], 0.1, distribute=True)
    assert got[0] == [(sil, pytest.approx(0.275)), (speech, pytest.approx(0.275))]
    assert got[1] == [(sil, pytest.approx(0.1))] and got[2] == [(speech, 1.0)] and got[3] == []
    # the tool, on a table
    with TableWriter(f"ark:{tmp_path / 'p'}", "post") as w:
        w.write("u", post)
    assert load_bin("weight-silence-post.py").main([
        "0.0", "1:7", str(YESNO / "40.mdl"), f"ark:{tmp_path / 'p'}",
        f"ark,t:{tmp_path / 'q'}"]) == 0
    assert (tmp_path / "q").read_text() == f"u [ {speech} 0.5 ] [ ] [ {speech} 1 ] [ ] \n"


def test_wrong_feature_dimension_is_one_line(task, tmp_path, capsys):
    d, _, _ = task
    with TableWriter(f"ark:{tmp_path / 'f3.ark'}", "mat") as w:
        for key, y in SequentialReader(f"ark:{d / 'feats.ark'}", "mat"):
            w.write(key, y[:, :3])
    assert est(d, f"ark:{tmp_path / 'trans'}", feats=f"ark:{tmp_path / 'f3.ark'}") != 0
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1
    assert "f3.ark" in errors[0] and "dimension 3" in errors[0] and "expects 4" in errors[0]
    first = (d / "utt2spk").read_text().split()[0]
    assert first in errors[0]
    assert not (tmp_path / "trans").exists()


def test_bad_update_type(task, tmp_path, capsys):
    d, _, _ = task
    assert est(d, f"ark:{tmp_path / 'trans'}", "--fmllr-update-type=fancy") != 0
    assert 'must be one of "full"|"diag"|"offset"|"none"' in capsys.readouterr().err


def test_per_utterance_without_spk2utt(task, tmp_path, capsys):
    d, _, _ = task
    posts = dict(SequentialReader(f"ark:{d / 'post.ark'}", "post"))
    keys = sorted(posts)
    with TableWriter(f"ark:{tmp_path / 'some.post'}", "post") as w:
        for k in keys[1:]:
            w.write(k, posts[k])
    assert load_bin("gmm-est-fmllr.py").main([
        "--fmllr-update-type=diag", str(d / "final.mdl"), f"ark:{d / 'feats.ark'}",
        f"ark:{tmp_path / 'some.post'}", f"ark:{tmp_path / 'trans'}"]) == 0
    err = capsys.readouterr().err
    assert f"Did not find posts for utterance {keys[0]}" in err
    assert f"Done {len(keys) - 1} files, 1 with no posts, 0 with other errors." in err
    trans = dict(SequentialReader(f"ark:{tmp_path / 'trans'}", "mat"))
    assert sorted(trans) == keys[1:]
    assert f"For utterance {keys[1]}, auxf-impr from fMLLR is" in err
    for W in trans.values():   # diag: the square part stays diagonal
        assert np.count_nonzero(W[:, :DIM] - np.diag(np.diag(W[:, :DIM]))) == 0
