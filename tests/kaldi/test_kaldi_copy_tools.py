"""bin/copy-int-vector.py, copy-vector.py and copy-post.py behave like Kaldi's binaries."""
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
