"""Single objects through Kaldi extended filenames: files, offsets, pipes, text and binary."""
import struct
import subprocess
import sys

import numpy as np
import pytest

from nnetmix.errors import FormatError
from nnetmix.kaldi import TableWriter, read_object, write_object


def test_global_cmvn_stats_double_matrix(tmp_path):
    rng = np.random.default_rng(777)
    stats = rng.standard_normal((2, 14))  # float64: written as DM, read back as float64
    write_object(str(tmp_path / "cmvn.mat"), stats, "mat")
    raw = (tmp_path / "cmvn.mat").read_bytes()
    assert raw[:5] == b"\0BDM " and len(raw) == 5 + 10 + 2 * 14 * 8
    back = read_object(str(tmp_path / "cmvn.mat"), "mat")
    assert back.dtype == np.float64
    np.testing.assert_array_equal(back, stats)
    write_object(str(tmp_path / "cmvn.txt"), stats.astype(np.float32), "mat", binary=False)
    text = (tmp_path / "cmvn.txt").read_text()
    assert text.startswith(" [\n  ") and text.endswith(" ]\n") and text.count("\n") == 3
    np.testing.assert_allclose(read_object(str(tmp_path / "cmvn.txt"), "mat"), stats, rtol=1e-6)


def test_exact_layouts(tmp_path):
    write_object(str(tmp_path / "v"), np.array([1, 2.5], np.float32), "vec", binary=False)
    assert (tmp_path / "v").read_bytes() == b" [ 1 2.5 ]\n"
    write_object(str(tmp_path / "m"), np.array([[1, 2], [3, 4]], np.float32), "mat", binary=False)
    assert (tmp_path / "m").read_bytes() == b" [\n  1 2 \n  3 4 ]\n"
    write_object(str(tmp_path / "e"), np.zeros((0, 0), np.float32), "mat", binary=False)
    assert (tmp_path / "e").read_bytes() == b" [ ]\n"
    # an int vector object is Write/ReadIntegerVector (raw int32s), unlike the table holder
    write_object(str(tmp_path / "i"), [3, -1], "ivec")
    assert (tmp_path / "i").read_bytes() == b"\0B\x04" + struct.pack("<iii", 2, 3, -1)
    write_object(str(tmp_path / "it"), [3, -1], "ivec", binary=False)
    assert (tmp_path / "it").read_bytes() == b"[ 3 -1 ]\n"
    for name in ("i", "it"):
        np.testing.assert_array_equal(read_object(str(tmp_path / name), "ivec"), [3, -1])
    with TableWriter(f"ark:{tmp_path}/a.ark", "ivec") as w:
        w["k"] = [3, -1]
    assert (tmp_path / "a.ark").read_bytes() == b"k \0B" + b"".join(
        b"\x04" + struct.pack("<i", x) for x in (2, 3, -1))
    with TableWriter(f"ark,t:{tmp_path}/a.ark", "ivec") as w:
        w["k"] = [3, -1]
    assert (tmp_path / "a.ark").read_bytes() == b"k 3 -1 \n"
    post = [[(3, 1.0)], [(4, 0.5), (5, 0.5)], []]
    with TableWriter(f"ark,t:{tmp_path}/p.ark", "post") as w:
        w["k"] = post
    assert (tmp_path / "p.ark").read_bytes() == b"k [ 3 1 ] [ 4 0.5 5 0.5 ] [ ] \n"
    with TableWriter(f"ark:{tmp_path}/p.ark", "post") as w:
        w["k"] = post
    i32 = lambda x: b"\x04" + struct.pack("<i", x)
    f32 = lambda x: b"\x04" + struct.pack("<f", x)
    assert (tmp_path / "p.ark").read_bytes() == (
        b"k \0B" + i32(3) + i32(1) + i32(3) + f32(1.0) + i32(2) + i32(4) + f32(0.5) + i32(5)
        + f32(0.5) + i32(0))


def test_posterior_with_double_weights(tmp_path):
    i32 = lambda x: b"\x04" + struct.pack("<i", x)
    blob = b"k \0B" + i32(1) + i32(2) + i32(7) + b"\x08" + struct.pack("<d", 0.25) + i32(9) \
        + b"\x04" + struct.pack("<f", 0.75)
    (tmp_path / "p.ark").write_bytes(blob)
    from nnetmix.kaldi import SequentialReader
    with SequentialReader(f"ark:{tmp_path}/p.ark", "post") as r:
        assert list(r) == [("k", [[(7, 0.25), (9, 0.75)]])]


def test_offsets_and_pipes(tmp_path):
    v = np.arange(5, dtype=np.float32)
    with TableWriter(f"ark,scp:{tmp_path}/v.ark,{tmp_path}/v.scp", "vec") as w:
        w["a"] = v
        w["b"] = v * 2
    rx = (tmp_path / "v.scp").read_text().splitlines()[1].split()[1]
    np.testing.assert_array_equal(read_object(rx, "vec"), v * 2)
    write_object(f"| gzip -c > {tmp_path}/v.gz", v, "vec")
    np.testing.assert_array_equal(read_object(f"gunzip -c {tmp_path}/v.gz |", "vec"), v)
    with pytest.raises(FormatError, match="v.ark: bad token: expected FM"):
        read_object(rx, "mat")


def test_stdin_stdout(tmp_path):
    code = ("from nnetmix.kaldi import read_object, write_object\n"
            "write_object('-', read_object('-', 'vec') + 1, 'vec', binary=False)\n")
    write_object(str(tmp_path / "v"), np.arange(3, dtype=np.float32), "vec")
    out = subprocess.run([sys.executable, "-c", code], input=(tmp_path / "v").read_bytes(),
                         capture_output=True, check=True).stdout
    assert out == b" [ 1 2 3 ]\n"
