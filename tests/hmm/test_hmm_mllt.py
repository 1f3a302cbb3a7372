"""gmm-acc-mllt / est-mllt: Kaldi's MlltAccs file byte for byte, statistics that add across
files, an update whose auxiliary function rises at every iteration, and a rotation recovered."""
import struct

import numpy as np
import pytest
from helpers import FIXTURES, load_bin, split_feature_ark

from nnetmix.hmm.gmm_tools import read_model, write_model
from nnetmix.hmm.mllt import MlltError, MlltStats, mllt_objective, mllt_update, read_mllt_stats
from nnetmix.kaldi import SequentialReader, TableWriter, read_object, write_object
from nnetmix.kaldi.tokens import TokenWriter

YESNO = FIXTURES / "yesno"
pytestmark = pytest.mark.skipif(not YESNO.is_dir(), reason=f"no Kaldi fixtures at {YESNO}")


def test_stats_file_is_kaldis_bytes():
    st = MlltStats(2)
    st.beta = 3.5
    st.G[0] = [[2.0, 0.5], [0.5, 1.0]]
    st.G[1] = [[1.0, -0.25], [-0.25, 4.0]]
    w = TokenWriter(True)
    st.write(w)
    dp = b"".join(b"DP \x04" + struct.pack("<i", 2) + np.array(v, "<f8").tobytes()
                  for v in ([2.0, 0.5, 1.0], [1.0, -0.25, 4.0]))
    assert w.getvalue() == (b"<MlltAccs> \x08" + struct.pack("<d", 3.5) + b"\x04"
                            + struct.pack("<i", 2) + b"<G> " + dp + b"</MlltAccs> ")
    t = TokenWriter(False)
    st.write(t)
    assert t.getvalue().decode() == ("<MlltAccs> \n3.5 2 <G> \n[\n2 \n0.5 1 ]\n[\n1 \n"
                                     "-0.25 4 ]\n</MlltAccs> \n")


@pytest.fixture(scope="module")
def rotated_task(tmp_path_factory):
    """Features that are diagonal-Gaussian per pdf in a rotated basis x = Q z, and a model
    whose Gaussians are what a diagonal GMM estimates in x (means Q mu, the diagonal of the
    rotated covariance), on Kaldi's yesno transition model and alignments."""
    d = tmp_path_factory.mktemp("mllt")
    base = read_model(str(YESNO / "40.mdl"))
    rng = np.random.default_rng(2)
    dim = 3
    Q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    var_z = np.array([4.0, 1.0, 0.25])
    cov_x = Q @ np.diag(var_z) @ Q.T
    num_pdfs = base.stacked.num_pdfs
    mu = rng.normal(size=(num_pdfs, dim)) * 3

    class G:
        def __init__(self, m):
            self.weights, self.means, self.vars = np.ones(1), (Q @ m)[None], np.diag(cov_x)[None]
    write_model(str(d / "final.mdl"), base.tm, [G(m) for m in mu])
    with SequentialReader(f"ark:gunzip -c {YESNO / 'ali.1.gz'}|", "ivec") as r, \
            TableWriter(f"ark:{d / 'feats.ark'}", "mat") as fw, \
            TableWriter(f"ark:{d / 'post.ark'}", "post") as pw:
        for key, ali in r:
            z = mu[base.tm.tid2pdf[ali]] + rng.normal(size=(len(ali), dim)) * np.sqrt(var_z)
            fw.write(key, (z @ Q.T).astype(np.float32))
            pw.write(key, [[(int(a), 1.0)] for a in ali])
    return d, cov_x


def test_mllt_diagonalises_a_rotated_covariance(rotated_task, tmp_path, capsys):
    d, cov_x = rotated_task
    acc = tmp_path / "1.macc"
    assert load_bin("gmm-acc-mllt.py").main([
        "--rand-prune=0", str(d / "final.mdl"), f"ark:{d / 'feats.ark'}",
        f"ark:{d / 'post.ark'}", str(acc)]) == 0
    assert load_bin("est-mllt.py").main([str(tmp_path / "mllt.mat"), str(acc)]) == 0
    err = capsys.readouterr().err
    assert "Overall avg like per frame (Gaussian only) =" in err
    assert "MLLT objective improvement per frame by 0'th iteration is" in err
    assert (tmp_path / "mllt.mat").read_bytes()[:1] == b" "   # text by default, as Kaldi's
    A = read_object(str(tmp_path / "mllt.mat"), "mat").astype(np.float64)

    def off_diag(c):
        return np.linalg.norm(c - np.diag(np.diag(c))) / np.linalg.norm(c)
    assert off_diag(cov_x) > 0.2
    assert off_diag(A @ cov_x @ A.T) < 0.02


def test_objective_rises_every_iteration(rotated_task, tmp_path):
    d, _ = rotated_task
    assert load_bin("gmm-acc-mllt.py").main([
        str(d / "final.mdl"), f"ark:{d / 'feats.ark'}", f"ark:{d / 'post.ark'}",
        str(tmp_path / "a.macc")]) == 0
    st = read_mllt_stats([str(tmp_path / "a.macc")])
    A = np.eye(st.dim)
    objf = [mllt_objective(A, st.beta, st.G)]
    for _ in range(5):
        A, impr = mllt_update(st.beta, st.G, A)
        objf.append(mllt_objective(A, st.beta, st.G))
        assert impr >= -1e-9 * abs(objf[-1])
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(objf, objf[1:])) and objf[1] > objf[0]


def test_stats_add_across_files(rotated_task, tmp_path):
    d, _ = rotated_task
    for name, spec in split_feature_ark(d / "feats.ark", tmp_path).items():
        assert load_bin("gmm-acc-mllt.py").main([
            "--rand-prune=0", f"--binary={'false' if name == 'b' else 'true'}",
            str(d / "final.mdl"), spec, f"ark:{d / 'post.ark'}",
            str(tmp_path / f"{name}.macc")]) == 0
    both = read_mllt_stats([str(tmp_path / "a.macc"), str(tmp_path / "b.macc")])
    whole = read_mllt_stats([str(tmp_path / "all.macc")])
    assert both.beta == pytest.approx(whole.beta)
    np.testing.assert_allclose(both.G, whole.G, rtol=1e-6)


def test_bad_input(rotated_task, tmp_path, capsys):
    d, _ = rotated_task
    with TableWriter(f"ark:{tmp_path / 'p.ark'}", "post") as w:
        for key, x in SequentialReader(f"ark:{d / 'feats.ark'}", "mat"):
            w.write(key, [[(99999, 1.0)]] * x.shape[0])
    assert load_bin("gmm-acc-mllt.py").main([
        str(d / "final.mdl"), f"ark:{d / 'feats.ark'}", f"ark:{tmp_path / 'p.ark'}",
        str(tmp_path / "x.macc")]) != 0
    assert "transition-id 99999 is not in the model" in capsys.readouterr().err
    assert not (tmp_path / "x.macc").exists()
    with pytest.raises(MlltError, match="singular"):
        mllt_update(100.0, np.zeros((2, 2, 2)))


def test_gmm_transform_means(rotated_task, tmp_path):
    """Means become M mu (+ offset); variances are kept."""
    d, _ = rotated_task
    rng = np.random.default_rng(4)
    for cols in (3, 4):
        m = rng.normal(size=(3, cols)).astype(np.float32)
        write_object(str(tmp_path / "m.mat"), m, "mat")
        assert load_bin("gmm-transform-means.py").main(
            [str(tmp_path / "m.mat"), str(d / "final.mdl"), str(tmp_path / "t.mdl")]) == 0
        before, after = read_model(str(d / "final.mdl")), read_model(str(tmp_path / "t.mdl"))
        for g0, g1 in zip(before.am, after.am):
            want = g0.means @ m[:, :3].T + (m[:, 3] if cols == 4 else 0.0)
            np.testing.assert_allclose(g1.means, want, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(g1.vars, g0.vars, rtol=1e-6)
    write_object(str(tmp_path / "bad.mat"), np.eye(2, dtype=np.float32), "mat")
    assert load_bin("gmm-transform-means.py").main(
        [str(tmp_path / "bad.mat"), str(d / "final.mdl"), str(tmp_path / "u.mdl")]) != 0
    assert not (tmp_path / "u.mdl").exists()
