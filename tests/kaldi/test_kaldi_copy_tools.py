"""bin/copy-int-vector.py, copy-vector.py, copy-matrix.py and copy-post.py behave like Kaldi's
binaries."""
import numpy as np
import pytest

from helpers import load_bin
from nnetmix.kaldi import SequentialReader, TableWriter, read_object, write_object


def read(spec, kind):
    with SequentialReader(spec, kind) as r:
        return dict(r)


def test_copy_int_vector_from_gzip_pipe(kaldi_fixtures, tmp_path, capsys):
    tool = load_bin("copy-int-vector.py")
    gz = kaldi_fixtures / "yesno" / "ali.1.gz"
    assert tool.main([f"ark:gunzip -c {gz} |", f"ark,t:{tmp_path}/ali.txt"]) == 0
    err = capsys.readouterr().err
    assert "LOG (copy-int-vector.py[" in err and "Copied 31 vectors of int32." in err
    text = (tmp_path / "ali.txt").read_text().splitlines()
    assert len(text) == 31 and text[0].startswith("0_0_0_0_1_1_1_1 3 1 1 ")
    ours, ref = read(f"ark:{tmp_path}/ali.txt", "ivec"), read(f"ark:gunzip -c {gz} |", "ivec")
    assert list(ours) == list(ref) and all(np.array_equal(ours[k], ref[k]) for k in ref)


def test_copy_int_vector_objects_and_errors(tmp_path, capsys):
    tool = load_bin("copy-int-vector.py")
    write_object(str(tmp_path / "v"), [1, 2, 3], "ivec")
    assert tool.main(["--binary=false", str(tmp_path / "v"), str(tmp_path / "v.txt")]) == 0
    assert (tmp_path / "v.txt").read_text() == "[ 1 2 3 ]\n"
    assert tool.main([str(tmp_path / "v"), f"ark:{tmp_path}/x.ark"]) == 1
    assert "cannot mix archives with regular files" in capsys.readouterr().err
    (tmp_path / "empty.ark").write_bytes(b"")
    assert tool.main([f"ark:{tmp_path}/empty.ark", f"ark:{tmp_path}/y.ark"]) == 1  # none copied
    assert "y.ark: nothing to write" in capsys.readouterr().err
    assert not (tmp_path / "y.ark").exists()
    (tmp_path / "bad.ark").write_bytes(b"k \0B\x04\x05\x00\x00\x00")
    assert tool.main([f"ark:{tmp_path}/bad.ark", f"ark:{tmp_path}/z.ark"]) == 1
    err = capsys.readouterr().err
    errors = [l for l in err.splitlines() if l.startswith("ERROR")]
    assert len(errors) == 1 and "bad.ark: truncated" in errors[0] and "for key k" in errors[0]
    assert "Traceback" not in err and not (tmp_path / "z.ark").exists()
    assert tool.main(["only-one"]) == 1
    assert "Usage: copy-int-vector.py" in capsys.readouterr().err


def test_copy_post_scale(tmp_path, capsys):
    tool = load_bin("copy-post.py")
    post = {"a": [[(3, 1.0)], [(4, 0.5), (5, 0.5)]], "b": []}
    with TableWriter(f"ark:{tmp_path}/p.ark", "post") as w:
        for k, v in post.items():
            w[k] = v
    assert tool.main(["--scale=0.5", f"ark:{tmp_path}/p.ark", f"ark,t:{tmp_path}/q.ark"]) == 0
    assert (tmp_path / "q.ark").read_text() == "a [ 3 0.5 ] [ 4 0.25 5 0.25 ] \nb \n"
    assert "Copied 2 posteriors." in capsys.readouterr().err


@pytest.mark.parametrize("argv,expect", [([], [1, 2, 3]), (["--scale=2"], [2, 4, 6]),
                                         (["--change-dim=5"], [1, 2, 3, 0, 0]),
                                         (["--change-dim=2", "--scale=-1"], [-1, -2])])
def test_copy_vector(tmp_path, argv, expect):
    tool = load_bin("copy-vector.py")
    write_object(str(tmp_path / "v"), np.array([1, 2, 3], np.float32), "vec")
    assert tool.main(argv + [str(tmp_path / "v"), str(tmp_path / "w")]) == 0
    np.testing.assert_array_equal(read_object(str(tmp_path / "w"), "vec"), expect)
    with TableWriter(f"ark:{tmp_path}/v.ark", "vec") as w:
        w["k"] = np.array([1, 2, 3], np.float64)
    assert tool.main(argv + [f"ark:{tmp_path}/v.ark", f"ark:{tmp_path}/w.ark"]) == 0
    got = read(f"ark:{tmp_path}/w.ark", "vec")["k"]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expect)


def cmvn_like_stats(seed=0):
    """Two speakers' CMVN stats: 2 x 14 double matrices (sums, sums of squares, count)."""
    rng = np.random.default_rng(seed)
    stats = {}
    for spk in ("s1", "s2"):
        feats = rng.standard_normal((300, 13)) * 4 + 10
        m = np.zeros((2, 14))
        m[0, :13], m[1, :13], m[0, 13] = feats.sum(0), (feats ** 2).sum(0), len(feats)
        stats[spk] = m
    return stats


def test_copy_matrix_double_table_and_object(tmp_path, capsys):
    """CMVN stats (DM) copy as Kaldi's copy-matrix copies them: read as double, written as float
    (BaseFloat), in a table (text with ,t) or as one object (text with --binary=false)."""
    tool = load_bin("copy-matrix.py")
    stats = cmvn_like_stats()
    with TableWriter(f"ark,scp:{tmp_path}/cmvn.ark,{tmp_path}/cmvn.scp", "mat") as w:
        for k, v in stats.items():
            w[k] = v
    assert tool.main([f"scp:{tmp_path}/cmvn.scp", f"ark:{tmp_path}/f.ark"]) == 0
    assert "Copied 2 matrices." in capsys.readouterr().err
    got = read(f"ark:{tmp_path}/f.ark", "mat")
    assert (tmp_path / "f.ark").read_bytes()[:8] == b"s1 \0BFM "
    for k, v in stats.items():
        assert got[k].dtype == np.float32
        np.testing.assert_array_equal(got[k], v.astype(np.float32))
    assert tool.main([f"ark:{tmp_path}/cmvn.ark", f"ark,t:{tmp_path}/t.ark"]) == 0
    assert (tmp_path / "t.ark").read_text().startswith("s1  [\n  ")
    write_object(str(tmp_path / "one.mat"), stats["s2"], "mat")
    assert tool.main(["--binary=false", str(tmp_path / "one.mat"), str(tmp_path / "one.txt")]) == 0
    assert f"Copied matrix to {tmp_path / 'one.txt'}" in capsys.readouterr().err
    text = (tmp_path / "one.txt").read_text()
    assert text.startswith(" [\n  ") and text.endswith(" ]\n") and text.count("\n") == 3
    np.testing.assert_allclose(read_object(str(tmp_path / "one.txt"), "mat"), stats["s2"],
                               rtol=1e-6)


def softmax_rows(m):
    e = np.exp(m - m.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@pytest.mark.parametrize("argv,ref", [
    (["--scale=-0.5"], lambda m: -0.5 * m),
    (["--apply-log=true"], lambda m: np.log(np.maximum(m, 1e-20))),
    (["--scale=0.1", "--apply-exp=true"], lambda m: np.exp(0.1 * m)),
    (["--apply-softmax-per-row=true"], softmax_rows),
    (["--apply-softmax-per-row=true", "--apply-power=2"], lambda m: softmax_rows(m) ** 2),
    (["--apply-power=0.5"], lambda m: np.abs(m) ** 0.5),
])
def test_copy_matrix_options_in_kaldis_order(tmp_path, capsys, argv, ref):
    """Each option against a float64 reference, within float32 rounding (1e-6 relative)."""
    tool = load_bin("copy-matrix.py")
    rng = np.random.default_rng(4)
    mats = {"a": rng.standard_normal((5, 7)) * 3, "b": np.abs(rng.standard_normal((3, 4)))}
    mats["a"][0, :3] = [0.0, -1.0, 1e-30]  # floored at 1e-20 before the log
    if "--apply-power=0.5" in argv:
        mats = {k: np.abs(v) for k, v in mats.items()}
    with TableWriter(f"ark:{tmp_path}/m.ark", "mat") as w:
        for k, v in mats.items():
            w[k] = v.astype(np.float32)
    assert tool.main(argv + [f"ark:{tmp_path}/m.ark", f"ark:{tmp_path}/o.ark"]) == 0
    got = read(f"ark:{tmp_path}/o.ark", "mat")
    for k, v in mats.items():
        np.testing.assert_allclose(got[k], ref(v.astype(np.float32).astype(np.float64)),
                                   rtol=2e-6, atol=1e-7)


def test_copy_matrix_reads_compressed_and_refuses_what_kaldi_refuses(tmp_path, capsys):
    from nnetmix.kaldi import Compressed

    tool = load_bin("copy-matrix.py")
    m = np.random.default_rng(5).standard_normal((20, 3)).astype(np.float32)
    with TableWriter(f"ark:{tmp_path}/c.ark", "mat") as w:
        w["k"] = Compressed(m)
    assert tool.main([f"ark:{tmp_path}/c.ark", f"ark:{tmp_path}/o.ark"]) == 0
    assert (tmp_path / "o.ark").read_bytes()[:7] == b"k \0BFM "
    np.testing.assert_array_equal(read(f"ark:{tmp_path}/o.ark", "mat")["k"],
                                  read(f"ark:{tmp_path}/c.ark", "mat")["k"])
    capsys.readouterr()
    for opts, target, msg in [
            (["--apply-log=true", "--apply-exp=true"], f"ark:{tmp_path}/p.ark",
             "Only one of apply-log, apply-exp and apply-softmax-per-row can be given"),
            ([], str(tmp_path / "x.mat"), "cannot mix archives with regular files")]:
        assert tool.main(opts + [f"ark:{tmp_path}/c.ark", target]) == 1
        errors = [l for l in capsys.readouterr().err.splitlines() if l.startswith("ERROR")]
        assert len(errors) == 1 and msg in errors[0]
    (tmp_path / "empty.ark").write_bytes(b"")
    assert tool.main([f"ark:{tmp_path}/empty.ark", f"ark:{tmp_path}/y.ark"]) == 1
    assert not (tmp_path / "y.ark").exists()
