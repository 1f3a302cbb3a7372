"""bin/matrix-sum.py, vector-sum.py, sum-matrices.py, vector-scale.py, paste-vectors.py,
matrix-dim.py and matrix-sum-rows.py behave like Kaldi's binaries (src/bin/, src/featbin/paste-vectors.cc)."""
import numpy as np
import pytest

from helpers import load_bin
from nnetmix.kaldi import SequentialReader, TableWriter, read_object, write_object


def read(spec, kind):
    with SequentialReader(spec, kind) as r:
        return dict(r)


def write(path, items, kind, text=False):
    with TableWriter(f"ark{',t' if text else ''}:{path}", kind) as w:
        for k, v in items.items():
            w[k] = v
    return f"ark:{path}"


def errors_of(err):
    lines = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert "Traceback" not in err
    return lines


@pytest.fixture
def mats(tmp_path):
    rng = np.random.default_rng(0)
    a = {k: rng.standard_normal((3, 4)).astype(np.float32) for k in ("u1", "u2", "u3")}
    b = {k: rng.standard_normal((3, 4)).astype(np.float32) for k in ("u1", "u3")}
    b["u3"] = rng.standard_normal((2, 4)).astype(np.float32)  # dimension mismatch
    return a, b, write(tmp_path / "a.ark", a, "mat"), write(tmp_path / "b.ark", b, "mat", True)


def test_matrix_sum_tables(tmp_path, mats, capsys):
    a, b, ra, rb = mats
    tool = load_bin("matrix-sum.py")
    out = tmp_path / "s.ark"
    assert tool.main(["--scale1=2", "--scale2=-0.5", ra, rb, f"ark,t:{out}"]) == 0
    got = read(f"ark:{out}", "mat")
    assert list(got) == ["u1", "u2", "u3"]
    b1 = read(rb, "mat")["u1"]  # as written in text: 7 digits
    ref = np.float32(2) * a["u1"] + np.float32(-0.5) * b1
    np.testing.assert_allclose(got["u1"], ref, rtol=1e-6)  # text output: 7 digits
    np.testing.assert_allclose(got["u2"], 2 * a["u2"], rtol=1e-6)
    np.testing.assert_allclose(got["u3"], 2 * a["u3"], rtol=1e-6)  # b's u3 left out
    err = capsys.readouterr().err
    assert "No matrix found for utterance u2 for system 2, rspecifier: " + rb in err
    assert "Dimension mismatch for utterance u3 : 2 by 4 for system 2" in err
    assert "Processed 3 utterances: with a total of 5 matrices across 2 different systems" in err
    assert "Produced output for 3 utterances; 1 total missing matrices" in err
    assert tool.main(["--average=true", ra, ra, f"ark:{tmp_path}/avg.ark"]) == 0
    avg = read(f"ark:{tmp_path}/avg.ark", "mat")
    assert (tmp_path / "avg.ark").read_bytes()[:8] == b"u1 \0BFM "
    np.testing.assert_array_equal(avg["u2"], a["u2"] * np.float32(0.5) * 2)


def test_matrix_sum_table_to_matrix_and_files(tmp_path, mats, capsys):
    a, b, ra, rb = mats
    tool = load_bin("matrix-sum.py")
    assert tool.main(["--binary=false", ra, str(tmp_path / "sum.mat")]) == 0
    ref = sum(m.astype(np.float64) for m in a.values()).astype(np.float32)
    text = (tmp_path / "sum.mat").read_text()
    assert text.startswith(" [\n  ")
    np.testing.assert_allclose(read_object(str(tmp_path / "sum.mat"), "mat"), ref, rtol=1e-6)
    assert f"Summed 3 matrices, 0 with errors; wrote sum to {tmp_path / 'sum.mat'}" in \
        capsys.readouterr().err
    # a mismatched matrix is warned about and counted; with errors on half, Kaldi's status 1
    assert tool.main(["--binary=false", rb, "-"]) == 1
    assert "Dimension mismatch for key u3: 2 by 4 vs. 3 by 4" in capsys.readouterr().err
    for k, m in a.items():
        write_object(str(tmp_path / f"{k}.mat"), m, "mat")
    files = [str(tmp_path / f"{k}.mat") for k in a]
    assert tool.main(["--average=true", *files, str(tmp_path / "avg.mat")]) == 0
    np.testing.assert_allclose(read_object(str(tmp_path / "avg.mat"), "mat"),
                               ref / 3, rtol=1e-6)
    assert "Summed 3 matrices; wrote sum to" in capsys.readouterr().err
    # an rxfilename with an offset (ark:offset) is a single matrix too
    with TableWriter(f"ark,scp:{tmp_path}/x.ark,{tmp_path}/x.scp", "mat") as w:
        w["k"] = a["u1"]
    offset = (tmp_path / "x.scp").read_text().split()[1]
    assert tool.main([offset, files[1], str(tmp_path / "two.mat")]) == 0
    np.testing.assert_array_equal(read_object(str(tmp_path / "two.mat"), "mat"),
                                  a["u1"] + a["u2"])


def test_matrix_sum_bad_inputs(tmp_path, mats, capsys):
    a, b, ra, rb = mats
    tool = load_bin("matrix-sum.py")
    write_object(str(tmp_path / "small.mat"), np.zeros((2, 4), np.float32), "mat")
    write_object(str(tmp_path / "big.mat"), np.zeros((3, 4), np.float32), "mat")
    out = tmp_path / "out.mat"
    assert tool.main([str(tmp_path / "big.mat"), str(tmp_path / "small.mat"), str(out)]) == 1
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and "small.mat: matrix is 2 by 4, but" in errors[0]
    assert not out.exists()
    (tmp_path / "bad.ark").write_bytes(b"u1 \0BFM \x04\x03\x00\x00\x00\x04\x04")
    assert tool.main([ra, "ark:" + str(tmp_path / "bad.ark"), f"ark:{tmp_path}/o.ark"]) == 1
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and "bad.ark: truncated" in errors[0] and "u1" in errors[0]
    assert not (tmp_path / "o.ark").exists()
    assert tool.main(["--average=true", ra, str(out)]) == 1
    assert "--average option not compatible with type two usage." in capsys.readouterr().err
    assert tool.main([ra, ra, str(out)]) == 1  # tables in, a file out: no such form
    assert "fit none of the three usages" in capsys.readouterr().err and not out.exists()


def test_vector_sum_three_forms(tmp_path, capsys):
    tool = load_bin("vector-sum.py")
    v = {"a": np.array([1, 2, 3], np.float32), "b": np.array([0.5, 0, -1], np.float32)}
    r1 = write(tmp_path / "v1.ark", v, "vec")
    r2 = write(tmp_path / "v2.ark", {"a": np.array([10, 20, 30], np.float32)}, "vec", True)
    # half the lookups missing: written, and status 1 (Kaldi's n_missing < n_success - n_missing)
    assert tool.main([r1, r2, f"ark,t:{tmp_path}/s.ark"]) == 1
    assert (tmp_path / "s.ark").read_text() == "a  [ 11 22 33 ]\nb  [ 0.5 0 -1 ]\n"
    err = capsys.readouterr().err
    assert "No vector found for utterance b for system 2" in err
    assert "Produced output for 2 utterances; 1 total missing vectors" in err
    assert tool.main(["--binary=false", "--average=true", r1, str(tmp_path / "m.vec")]) == 0
    assert (tmp_path / "m.vec").read_text() == " [ 0.75 1 1 ]\n"
    assert "Summed 2 vectors, 0 with errors; wrote sum to" in capsys.readouterr().err
    write_object(str(tmp_path / "1.vec"), v["a"], "vec")
    write_object(str(tmp_path / "2.vec"), v["b"], "vec", binary=False)
    assert tool.main([str(tmp_path / "1.vec"), str(tmp_path / "2.vec"), str(tmp_path / "3.vec")]) == 0
    np.testing.assert_array_equal(read_object(str(tmp_path / "3.vec"), "vec"), [1.5, 2, 2])
    write_object(str(tmp_path / "4.vec"), np.ones(4, np.float32), "vec")
    assert tool.main([str(tmp_path / "1.vec"), str(tmp_path / "4.vec"), str(tmp_path / "5.vec")]) == 1
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and "4.vec: vector is 4, but" in errors[0]
    assert not (tmp_path / "5.vec").exists()


def test_sum_matrices(tmp_path, capsys):
    tool = load_bin("sum-matrices.py")
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    write_object(str(tmp_path / "1.mat"), m, "mat")
    write_object(str(tmp_path / "2.mat"), m.astype(np.float64), "mat", binary=False)
    assert tool.main(["--binary=false", str(tmp_path / "s.mat"), str(tmp_path / "1.mat"),
                      str(tmp_path / "2.mat")]) == 0
    assert (tmp_path / "s.mat").read_text() == " [\n  0 2 4 \n  6 8 10 ]\n"
    assert "Summed 2 matrices  of dimension 2 by 3" in capsys.readouterr().err
    (tmp_path / "bad.mat").write_text(" [ 1 2 \n 3 ]\n")
    assert tool.main([str(tmp_path / "t.mat"), str(tmp_path / "1.mat"),
                      str(tmp_path / "bad.mat")]) == 1
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and "bad.mat" in errors[0] and not (tmp_path / "t.mat").exists()


def test_vector_scale(tmp_path, capsys):
    tool = load_bin("vector-scale.py")
    write_object(str(tmp_path / "1.vec"), np.array([1, -2], np.float64), "vec")
    assert tool.main(["--scale=-1.5", str(tmp_path / "1.vec"), str(tmp_path / "2.vec")]) == 0
    assert (tmp_path / "2.vec").read_text() == " [ -1.5 3 ]\n"  # --binary=false, Kaldi's default
    spec = write(tmp_path / "v.ark", {"k": np.array([2, 4], np.float32)}, "vec")
    assert tool.main(["--scale=0.5", spec, f"ark,t:{tmp_path}/w.ark"]) == 0
    assert (tmp_path / "w.ark").read_text() == "k  [ 1 2 ]\n"
    assert tool.main([spec, str(tmp_path / "x.vec")]) == 1
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and "cannot mix archives with regular files" in errors[0]
    assert not (tmp_path / "x.vec").exists()


def test_paste_vectors(tmp_path, capsys):
    tool = load_bin("paste-vectors.py")
    r1 = write(tmp_path / "1.ark", {"a": np.array([1, 2], np.float32),
                                    "b": np.array([3], np.float32)}, "vec")
    r2 = write(tmp_path / "2.ark", {"a": np.array([9], np.float32)}, "vec", True)
    assert tool.main([r1, r2, f"ark,t:{tmp_path}/p.ark"]) == 0
    assert (tmp_path / "p.ark").read_text() == "a  [ 1 2 9 ]\n"
    err = capsys.readouterr().err
    assert f"Missing utt b from input {r2}" in err and "Done 1 utts, errors on 1" in err
    assert tool.main([r1, "ark:" + str(tmp_path / "none.ark"), f"ark:{tmp_path}/q.ark"]) == 1
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and "none.ark" in errors[0] and not (tmp_path / "q.ark").exists()
    assert tool.main([str(tmp_path / "1.vec"), r2, f"ark:{tmp_path}/q.ark"]) == 1
    assert "only on tables" in capsys.readouterr().err


def test_matrix_dim(tmp_path, capsys):
    tool = load_bin("matrix-dim.py")
    spec = write(tmp_path / "m.ark", {"a": np.zeros((3, 2)), "b": np.zeros((0, 0))}, "mat")
    assert tool.main([spec]) == 0
    assert capsys.readouterr().out == "a\t3\t2\nb\t0\t0\n"
    write_object(str(tmp_path / "one.mat"), np.zeros((4, 5), np.float32), "mat", binary=False)
    assert tool.main([str(tmp_path / "one.mat")]) == 0
    assert capsys.readouterr().out == "4\t5\n"
    (tmp_path / "empty.ark").write_bytes(b"")
    assert tool.main([f"ark:{tmp_path}/empty.ark"]) == 1
    assert "No features read from rspecifier" in capsys.readouterr().err
    (tmp_path / "garbage.ark").write_bytes(b"a \0BXM junk")
    assert tool.main([f"ark:{tmp_path}/garbage.ark"]) == 1
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and "garbage.ark" in errors[0] and "key a" in errors[0]


def test_matrix_sum_rows(tmp_path, capsys):
    """Kaldi's matrix-sum-rows: rows summed in double, written as a float vector per key
    (1e8 + 1 - 1e8 keeps its 1 in double, which a float32 sum loses)."""
    m = {"u1": np.array([[1e8, 2.0], [1.0, 3.0], [-1e8, 0.5]], np.float32),
         "u2": np.zeros((0, 2), np.float32)}
    rspec = write(tmp_path / "m.ark", m, "mat")
    tool = load_bin("matrix-sum-rows.py")
    assert tool.main([rspec, f"ark,t:{tmp_path}/v.ark"]) == 0
    got = read(f"ark:{tmp_path}/v.ark", "vec")
    np.testing.assert_array_equal(got["u1"], np.array([1.0, 5.5], np.float32))
    np.testing.assert_array_equal(got["u2"], np.zeros(2, np.float32))
    assert (tmp_path / "v.ark").read_text() == "u1  [ 1 5.5 ]\nu2  [ 0 0 ]\n"
    assert "Summed rows 2 matrices, 3 rows in total." in capsys.readouterr().err
    (tmp_path / "e.ark").write_bytes(b"")
    assert tool.main([f"ark:{tmp_path}/e.ark", f"ark:{tmp_path}/e.vec"]) == 1
    assert len(errors_of(capsys.readouterr().err)) == 1
