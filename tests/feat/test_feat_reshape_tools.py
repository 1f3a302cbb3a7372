"""bin/select-feats.py, subsample-feats.py, shift-feats.py and concat-feats.py behave like
Kaldi's (src/featbin/)."""
import numpy as np
import pytest

from helpers import load_bin
from nnetmix.feat.reshape import parse_selection
from nnetmix.kaldi import SequentialReader, TableWriter, read_object, write_object


def read(spec):
    with SequentialReader(spec, "mat") as r:
        return dict(r)


@pytest.fixture
def feats(tmp_path):
    rng = np.random.default_rng(1)
    m = {"u1": rng.standard_normal((5, 6)).astype(np.float32),
         "u2": rng.standard_normal((2, 6)).astype(np.float32)}
    with TableWriter(f"ark,scp:{tmp_path}/f.ark,{tmp_path}/f.scp", "mat") as w:
        for k, v in m.items():
            w[k] = v
    return m, f"scp:{tmp_path}/f.scp"


def one_error(err):
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert len(lines) == 1, err
    return lines[0]


def test_parse_selection():
    assert parse_selection("0,24-22,3-5", 25).tolist() == [0, 24, 23, 22, 3, 4, 5]
    assert parse_selection("10-2", 11).tolist() == list(range(10, 1, -1))  # Kaldi reads 1-2


def test_select_feats(tmp_path, feats, capsys):
    m, spec = feats
    tool = load_bin("select-feats.py")
    assert tool.main(["5,0-1,4-3", spec, f"ark,t:{tmp_path}/s.ark"]) == 0
    got = read(f"ark:{tmp_path}/s.ark")
    for k, v in m.items():
        np.testing.assert_allclose(got[k], v[:, [5, 0, 1, 4, 3]], rtol=1e-6)
    assert tool.main(["2", spec, f"ark:{tmp_path}/b.ark"]) == 0
    assert (tmp_path / "b.ark").read_bytes()[:8] == b"u1 \0BFM "
    np.testing.assert_array_equal(read(f"ark:{tmp_path}/b.ark")["u2"], m["u2"][:, [2]])
    assert tool.main(["0,6", spec, f"ark:{tmp_path}/c.ark"]) == 1
    assert "Invalid selection index: 6 (the features have dimension 6)" in \
        one_error(capsys.readouterr().err)
    assert not (tmp_path / "c.ark").exists()
    (tmp_path / "empty.ark").write_bytes(b"")
    assert tool.main(["0", f"ark:{tmp_path}/empty.ark", f"ark:{tmp_path}/d.ark"]) == 0
    assert "Empty archive provided." in capsys.readouterr().err


def test_select_feats_narrower_matrix_later(tmp_path, capsys):
    with TableWriter(f"ark:{tmp_path}/m.ark", "mat") as w:
        w["a"], w["b"] = np.zeros((2, 4)), np.zeros((2, 2))
    assert load_bin("select-feats.py").main(["3", f"ark:{tmp_path}/m.ark",
                                             f"ark:{tmp_path}/o.ark"]) == 1
    line = one_error(capsys.readouterr().err)
    assert "key b: the features have dimension 2" in line and not (tmp_path / "o.ark").exists()


@pytest.mark.parametrize("argv,rows", [(["--n=2"], lambda n: list(range(0, n, 2))),
                                       (["--n=3", "--offset=1"], lambda n: list(range(1, n, 3))),
                                       (["--n=-2"], lambda n: [i // 2 for i in range(2 * n)])])
def test_subsample_feats(tmp_path, feats, capsys, argv, rows):
    m, spec = feats
    assert load_bin("subsample-feats.py").main(argv + [spec, f"ark:{tmp_path}/o.ark"]) == 0
    got = read(f"ark:{tmp_path}/o.ark")
    for k, v in m.items():
        np.testing.assert_array_equal(got[k], v[rows(len(v))])
    err = capsys.readouterr().err
    assert "Processed 2 feature matrices; 0 with errors." in err
    frames = sum(len(rows(len(v))) for v in m.values())
    assert f"Processed 7 input frames and {frames} output frames." in err


def test_subsample_feats_no_rows_and_bad_options(tmp_path, feats, capsys):
    m, spec = feats
    tool = load_bin("subsample-feats.py")
    assert tool.main(["--n=2", "--offset=3", spec, f"ark,t:{tmp_path}/o.ark"]) == 0
    assert list(read(f"ark:{tmp_path}/o.ark")) == ["u1"]
    err = capsys.readouterr().err
    assert "For utterance u2, output would have no rows, producing no output." in err
    assert "Processed 1 feature matrices; 1 with errors." in err
    assert tool.main(["--n=-2", "--offset=1", spec, f"ark:{tmp_path}/p.ark"]) == 1
    assert "--offset option cannot be used with negative n." in one_error(capsys.readouterr().err)
    assert not (tmp_path / "p.ark").exists()


def test_shift_feats(tmp_path, feats, capsys):
    m, spec = feats
    tool = load_bin("shift-feats.py")
    assert tool.main(["--shift=1", spec, f"ark:{tmp_path}/o.ark"]) == 0
    got = read(f"ark:{tmp_path}/o.ark")
    np.testing.assert_array_equal(got["u1"], m["u1"][[0, 0, 1, 2, 3]])
    assert "Shifted 2 features by 1 frames; 0 with errors." in capsys.readouterr().err
    # Kaldi's own test: [ 1 1; 2 2; 3 3 ] shifted by 1 in text
    (tmp_path / "in.mat").write_text("[ 1 1 \n 2 2 \n 3 3 ]\n")
    assert tool.main(["--binary=false", "--shift=-2", str(tmp_path / "in.mat"),
                      str(tmp_path / "out.mat")]) == 0
    assert (tmp_path / "out.mat").read_text() == " [\n  3 3 \n  3 3 \n  3 3 ]\n"
    assert tool.main(["--shift=1", str(tmp_path / "in.mat"), str(tmp_path / "b.mat")]) == 0
    np.testing.assert_array_equal(read_object(str(tmp_path / "b.mat"), "mat"),
                                  [[1, 1], [1, 1], [2, 2]])
    write_object(str(tmp_path / "empty.mat"), np.zeros((0, 3), np.float32), "mat")
    assert tool.main([str(tmp_path / "empty.mat"), str(tmp_path / "c.mat")]) == 1
    assert "empty.mat: Empty input matrix" in one_error(capsys.readouterr().err)
    assert not (tmp_path / "c.mat").exists()


def test_concat_feats(tmp_path, feats, capsys):
    m, _ = feats
    tool = load_bin("concat-feats.py")
    offsets = dict(line.split() for line in (tmp_path / "f.scp").read_text().splitlines())
    assert tool.main(["--binary=false", offsets["u1"], offsets["u2"], offsets["u1"],
                      str(tmp_path / "c.mat")]) == 0
    np.testing.assert_allclose(read_object(str(tmp_path / "c.mat"), "mat"),
                               np.vstack([m["u1"], m["u2"], m["u1"]]), rtol=1e-6)
    assert (tmp_path / "c.mat").read_text().startswith(" [\n  ")
    write_object(str(tmp_path / "narrow.mat"), np.zeros((2, 5), np.float32), "mat")
    assert tool.main([offsets["u1"], str(tmp_path / "narrow.mat"), str(tmp_path / "d.mat")]) == 1
    line = one_error(capsys.readouterr().err)
    assert "narrow.mat: dimension 5, but" in line and not (tmp_path / "d.mat").exists()
