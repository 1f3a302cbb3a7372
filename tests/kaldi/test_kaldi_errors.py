"""Bad input gives one-line nnetmix errors naming file and key; failed writes leave old files."""
import numpy as np
import pytest

from nnetmix.errors import FormatError, NnetmixError, UsageError
from nnetmix.kaldi import (KaldiIOError, RandomAccessReader, SequentialReader, TableKeyError,
                           TableWriter, read_object)


def write_mats(path, n=3, seed=777):
    rng = np.random.default_rng(seed)
    mats = {f"utt{i}": rng.standard_normal((4 + i, 3)).astype(np.float32) for i in range(n)}
    with TableWriter(f"ark,scp:{path}.ark,{path}.scp") as w:
        for k, v in mats.items():
            w[k] = v
    return mats


def read_all(spec, kind="mat"):
    with SequentialReader(spec, kind) as r:
        return list(r)


@pytest.mark.parametrize("cut", [4, 5, 6, 10, 14, 20, 60])
def test_truncated_binary_ark(tmp_path, cut):
    write_mats(tmp_path / "m")
    raw = (tmp_path / "m.ark").read_bytes()
    last = raw.rindex(b"utt2 ")
    (tmp_path / "t.ark").write_bytes(raw[:last + cut])
    with pytest.raises(FormatError) as e:
        read_all(f"ark:{tmp_path}/t.ark")
    msg = str(e.value)
    assert "\n" not in msg and str(tmp_path / "t.ark") in msg and "utt2" in msg
    assert "truncated" in msg and "expected" in msg


@pytest.mark.parametrize("kind,value", [("ivec", np.arange(9, dtype=np.int32)),
                                        ("post", [[(1, 0.5), (2, 0.5)]] * 4),
                                        ("vec", np.ones(8, np.float32))])
def test_truncated_other_kinds(tmp_path, kind, value):
    with TableWriter(f"ark:{tmp_path}/x.ark", kind) as w:
        w["a"] = value
        w["b"] = value
    raw = (tmp_path / "x.ark").read_bytes()
    (tmp_path / "t.ark").write_bytes(raw[:-3])
    with pytest.raises(FormatError, match=r"t\.ark: truncated .* for key b: expected"):
        read_all(f"ark:{tmp_path}/t.ark", kind)


def test_truncated_text_matrix(tmp_path):
    with TableWriter(f"ark,t:{tmp_path}/x.ark") as w:
        w["a"] = np.ones((3, 2))
    raw = (tmp_path / "x.ark").read_bytes()
    (tmp_path / "t.ark").write_bytes(raw[:-4])
    with pytest.raises(FormatError, match="for key a: expected ']'"):
        read_all(f"ark:{tmp_path}/t.ark")


@pytest.mark.parametrize("blob,match", [
    (b"k \0X junk", r"bad binary header for key k"),
    (b"k \0BXM \x04\x01\x00\x00\x00", r"bad token for key k: expected FM, DM, CM, CM2 or CM3, got 'XM'"),
    (b"k \0BFV \x04\x00\x00\x00\x00", r"a vector, not a matrix"),
    (b"k \0BFM \x05\x01\x00\x00\x00", r"bad FM row count for key k"),
    (b"k  [\n 1 2\n 3 ]\n", r"row 1 has 1 values, expected 2"),
    (b"k  [\n 1 x ]\n", r"expected a number, got 'x'"),
    (b"k", r"followed by end of file"),
    (b"k ( 1 ]\n", r"expected '\['"),
])
def test_bad_matrix_input(tmp_path, blob, match):
    (tmp_path / "b.ark").write_bytes(blob)
    with pytest.raises(FormatError, match=match):
        read_all(f"ark:{tmp_path}/b.ark")


def test_bad_ivec_and_post_text(tmp_path):
    (tmp_path / "i.ark").write_text("a 1 2 x\n")
    with pytest.raises(FormatError, match="for key a: expected an integer, got 'x'"):
        read_all(f"ark:{tmp_path}/i.ark", "ivec")
    (tmp_path / "p.ark").write_text("a [ 1 0.5 2 ]\n")
    with pytest.raises(FormatError, match="for key a: frame 0: expected id weight pairs"):
        read_all(f"ark:{tmp_path}/p.ark", "post")


def test_missing_scp_target(tmp_path):
    write_mats(tmp_path / "m")
    (tmp_path / "bad.scp").write_text((tmp_path / "m.scp").read_text()
                                      + f"uttX {tmp_path}/gone.ark:17\n")
    with pytest.raises(KaldiIOError) as e:
        read_all(f"scp:{tmp_path}/bad.scp")
    assert "uttX" in str(e.value) and "gone.ark" in str(e.value) and "No such file" in str(e.value)
    assert len(read_all(f"scp,p:{tmp_path}/bad.scp")) == 3  # permissive skips it
    with RandomAccessReader(f"scp:{tmp_path}/bad.scp") as r:
        assert "uttX" in r
        with pytest.raises(KaldiIOError, match="gone.ark"):
            r["uttX"]
    with RandomAccessReader(f"scp,p:{tmp_path}/bad.scp") as r:
        assert "uttX" not in r and r.get("uttX") is None and "utt1" in r


def test_missing_key_is_a_keyerror(tmp_path):
    write_mats(tmp_path / "m")
    with RandomAccessReader(f"ark:{tmp_path}/m.ark") as r:
        with pytest.raises(KeyError) as e:
            r["nope"]
    assert isinstance(e.value, TableKeyError) and isinstance(e.value, NnetmixError)
    assert str(e.value) == f"ark:{tmp_path}/m.ark: no entry for key nope"


def test_missing_inputs(tmp_path):
    with pytest.raises(KaldiIOError, match=f"cannot open {tmp_path}/none.ark: No such file"):
        SequentialReader(f"ark:{tmp_path}/none.ark")
    with pytest.raises(KaldiIOError, match="exited with status"):
        read_all(f"ark:gunzip -c {tmp_path}/none.gz 2>/dev/null |", "ivec")
    with pytest.raises(UsageError, match="bad rspecifier"):
        SequentialReader(f"{tmp_path}/x.ark")
    with pytest.raises(KaldiIOError, match="none.mat"):
        read_object(f"{tmp_path}/none.mat", "mat")


def test_wspecifier_to_missing_directory(tmp_path):
    for spec in (f"ark:{tmp_path}/no/dir/x.ark", f"ark,scp:{tmp_path}/x.ark,{tmp_path}/no/x.scp"):
        with pytest.raises(KaldiIOError) as e:
            TableWriter(spec)
        assert "\n" not in str(e.value) and "no such directory" in str(e.value)
        assert f"{tmp_path}/no" in str(e.value)
    assert list(tmp_path.iterdir()) == []  # the ark of the second one was not left behind


def test_exception_inside_writer_keeps_old_files(tmp_path):
    old = write_mats(tmp_path / "m", n=2)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(RuntimeError):
        with TableWriter(f"ark,scp:{tmp_path}/m.ark,{tmp_path}/m.scp") as w:
            w["new"] = np.zeros((2, 2))
            raise RuntimeError("killed half way")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    with RandomAccessReader(f"scp:{tmp_path}/m.scp") as r:
        np.testing.assert_array_equal(r["utt1"], old["utt1"])
    # a bad value is refused before anything reaches the file
    with pytest.raises(FormatError, match="key bad: expected a 2-D array"):
        with TableWriter(f"ark:{tmp_path}/m.ark") as w:
            w["bad"] = np.zeros(3)
    assert (tmp_path / "m.ark").read_bytes() == before["m.ark"]
    with pytest.raises(FormatError, match="invalid key"):
        with TableWriter(f"ark:{tmp_path}/m.ark") as w:
            w["two words"] = np.zeros((1, 1))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ark", "m.scp"]


def test_writer_dropped_without_close_leaves_nothing(tmp_path):
    w = TableWriter(f"ark:{tmp_path}/x.ark")
    w["a"] = np.zeros((1, 1))
    del w
    assert list(tmp_path.iterdir()) == []
