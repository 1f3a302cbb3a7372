"""Float-pair vector tables (BaseFloatPairVectorWriter, lattice-mbr-decode's times) as Kaldi
writes them: the expected bytes are built here from Kaldi's holder layout, not by nnetmix."""
import struct

import numpy as np
import pytest

from nnetmix.errors import FormatError
from nnetmix.kaldi import RandomAccessReader, SequentialReader, TableWriter

TIMES = {"utt1": [(0.0, 0.31), (0.31, 1.2), (1.2, 1e-8)], "utt2": [], "utt3": [(3.5, -2.25)]}


def kaldi_binary(pairs):
    """BasicPairVectorHolder::Write, binary: '\\0B', int32 size, then every float as size byte
    4 and its float32 (WriteBasicType)."""
    out = b"\0B" + b"\x04" + struct.pack("<i", len(pairs))
    for a, b in pairs:
        out += b"\x04" + struct.pack("<f", a) + b"\x04" + struct.pack("<f", b)
    return out


def write(path, spec="ark"):
    with TableWriter(f"{spec}:{path}", "pairvec") as w:
        for key, pairs in TIMES.items():
            w.write(key, np.array(pairs, dtype=np.float32).reshape(-1, 2))


def read_all(spec):
    with SequentialReader(spec, "pairvec") as r:
        return {k: v for k, v in r}


def test_binary_bytes_are_kaldis(tmp_path):
    write(tmp_path / "t.ark")
    want = b"".join(k.encode() + b" " + kaldi_binary(p) for k, p in TIMES.items())
    assert (tmp_path / "t.ark").read_bytes() == want
    got = read_all(f"ark:{tmp_path}/t.ark")
    for key, pairs in TIMES.items():
        assert got[key].dtype == np.float32 and got[key].shape == (len(pairs), 2)
        np.testing.assert_array_equal(got[key], np.array(pairs, np.float32).reshape(-1, 2))


def test_text_is_kaldis(tmp_path):
    write(tmp_path / "t.ark", "ark,t")
    # WriteBasicType prints each float and a space; '; ' goes between pairs, '\n' ends the line
    assert (tmp_path / "t.ark").read_text() == (
        "utt1 0 0.31 ; 0.31 1.2 ; 1.2 1e-08 \nutt2 \nutt3 3.5 -2.25 \n")
    # Kaldi's reader needs no space around ';' and takes any run of spaces between numbers
    (tmp_path / "h.ark").write_text("a 1 2;3   4\nb\n")
    got = read_all(f"ark:{tmp_path}/h.ark")
    assert got["a"].tolist() == [[1, 2], [3, 4]] and got["b"].shape == (0, 2)


def test_doubles_scp_and_random_access(tmp_path):
    # ReadBasicType<float> also takes a double (size byte 8)
    raw = (b"x \0B\x04" + struct.pack("<i", 1) + b"\x08" + struct.pack("<d", 0.25)
           + b"\x04" + struct.pack("<f", 0.5))
    (tmp_path / "d.ark").write_bytes(raw)
    assert read_all(f"ark:{tmp_path}/d.ark")["x"].tolist() == [[0.25, 0.5]]
    with TableWriter(f"ark,scp:{tmp_path}/s.ark,{tmp_path}/s.scp", "pairvec") as w:
        w.write("k1", np.array([[1, 2]], np.float32))
        w.write("k2", np.array([[3, 4], [5, 6]], np.float32))
    with RandomAccessReader(f"scp:{tmp_path}/s.scp", "pairvec") as r:
        assert r["k2"].tolist() == [[3, 4], [5, 6]]


@pytest.mark.parametrize("content,problem", [
    (b"u \0B\x04\x02\x00\x00\x00\x04\x00\x00\x00\x00", "truncated"),
    (b"u \0B\x04\x01\x00\x00\x00\x02\x00\x00\x00\x00\x04\x00\x00\x00\x00", "size byte 2"),
    (b"u 1 2 3\n", "expected 2 numbers, got 3"),
    (b"u 1 2 ; \n", "expected 2 numbers, got 0"),
    (b"u 1 x\n", "expected a number, got 'x'"),
])
def test_bad_input_is_one_line_naming_file_and_key(tmp_path, content, problem):
    (tmp_path / "b.ark").write_bytes(content)
    with pytest.raises(FormatError) as e:
        read_all(f"ark:{tmp_path}/b.ark")
    msg = str(e.value)
    assert "\n" not in msg and str(tmp_path / "b.ark") in msg and "key u" in msg
    assert problem in msg


def test_write_refuses_wrong_shape(tmp_path):
    with pytest.raises(FormatError, match="N x 2"):
        with TableWriter(f"ark:{tmp_path}/w.ark", "pairvec") as w:
            w.write("u", np.zeros((2, 3), np.float32))
