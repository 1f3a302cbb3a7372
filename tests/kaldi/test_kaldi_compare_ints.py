"""bin/compare-int-vector.py behaves like Kaldi's compare-int-vector (src/bin/): per-key
lines over the shorter vector, the total and difference counts and the confusion matrix, on a
hand-worked example."""
import numpy as np

from helpers import load_bin
from nnetmix.kaldi import TableWriter, read_object


def write(path, items):
    with TableWriter(f"ark:{path}", "ivec") as w:
        for k, v in items.items():
            w[k] = np.asarray(v, np.int32)
    return f"ark:{path}"


def errors(err):
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.startswith("ERROR")]


def test_compare_int_vector(tmp_path, capsys):
    a = write(tmp_path / "a.ark", {"u1": [1, 2, 3, 4], "u2": [5, 5], "u3": [1]})
    b = write(tmp_path / "b.ark", {"u1": [1, 3, 3, 4, 7], "u2": [5, 6]})
    tool = load_bin("compare-int-vector.py")
    assert tool.main([f"--write-tot-counts={tmp_path}/tot.vec",
                      f"--write-diff-counts={tmp_path}/diff.vec",
                      f"--write-confusion-matrix={tmp_path}/conf.mat", a, b]) == 0
    out, err = capsys.readouterr()
    assert out == "u1 4 1\nu2 2 1\n"
    assert "For utterance u1, lengths differ 4 vs. 5" in err
    assert "No key u3 found in second input." in err
    assert "Computed difference for 2 utterances, of which 1 had mismatched lengths; " \
        "corresponding utterance not found for 1" in err
    assert "Average p(different) is 33.33%, over 6 frames." in err
    np.testing.assert_array_equal(read_object(str(tmp_path / "tot.vec"), "vec"),
                                  [0, 1, 1, 1, 1, 2])
    np.testing.assert_array_equal(read_object(str(tmp_path / "diff.vec"), "vec"),
                                  [0, 0, 0.5, 0.5, 0, 0.5, 0.5])
    conf = np.zeros((7, 7))
    for i, j in ((1, 1), (2, 3), (3, 3), (4, 4), (5, 5), (5, 6)):
        conf[i, j] = 1
    assert (tmp_path / "conf.mat").read_bytes()[:5] == b"\0BDM "  # double, as Kaldi's
    np.testing.assert_array_equal(read_object(str(tmp_path / "conf.mat"), "mat"), conf)
    # without count outputs a negative value is compared as any other
    neg = write(tmp_path / "n.ark", {"u1": [-1, 2]})
    assert tool.main([neg, a]) == 0
    assert capsys.readouterr().out == "u1 2 1\n"
    assert tool.main([f"--write-tot-counts={tmp_path}/t2.vec", neg, a]) == 1
    (line,) = errors(capsys.readouterr().err)
    assert "utterance u1: contents of vectors cannot be negative" in line
    assert not (tmp_path / "t2.vec").exists()
    other = write(tmp_path / "o.ark", {"x": [1]})
    assert tool.main([a, other]) == 1
    (line,) = errors(capsys.readouterr().err)
    assert f"{a}: none of its keys is in {other}" in line
