"""Posterior archives read whole when every frame holds one pair (ali-to-post's output), and
frame by frame otherwise: both ways give the same values, the same errors, the same index."""
import numpy as np
import pytest

import nnetmix.kaldi.codec as codec
from nnetmix.errors import FormatError
from nnetmix.kaldi import RandomAccessReader, SequentialReader, TableWriter


def _frame_by_frame(monkeypatch):
    monkeypatch.setattr(codec, "_one_pair_records", lambda src, frames: None)


def _archive(path, posts):
    with TableWriter(f"ark:{path}", "post") as w:
        for key, post in posts.items():
            w[key] = post


def _read_all(rspec):
    with SequentialReader(rspec, "post") as r:
        return {k: v for k, v in r}


def _random_access(rspec):
    with RandomAccessReader(rspec, "post") as r:
        return {k: r[k] for k in reversed(r.keys())}


POSTS = {
    "one_pair": [[(3, 1.0)], [(1463, 1.0)], [(0, 1.0)], [(7, 0.25)]],
    "two_pairs_midway": [[(3, 1.0)], [(4, 0.5), (5, 0.5)], [(6, 1.0)]],
    "empty_frame_last": [[(3, 1.0)], []],
    "no_frames": [],
    "after_the_mixed_ones": [[(9, 1.0)] for _ in range(50)],
}


@pytest.mark.parametrize("read", [_read_all, _random_access])
def test_whole_and_frame_by_frame_reading_agree(tmp_path, monkeypatch, read):
    path = tmp_path / "post.ark"
    _archive(path, POSTS)
    records, whole_reads = codec._one_pair_records, []

    def spy(src, frames):
        rec = records(src, frames)
        whole_reads.append(rec is not None)
        return rec

    monkeypatch.setattr(codec, "_one_pair_records", spy)
    whole = read(f"ark:{path}")
    # one_pair and after_the_mixed_ones, read whole (random access: indexed, then read)
    assert sum(whole_reads) == (2 if read is _read_all else 4)
    _frame_by_frame(monkeypatch)
    assert whole == read(f"ark:{path}") == POSTS
    assert all(type(w) is float and type(i) is int
               for post in whole.values() for frame in post for i, w in frame)


def test_a_double_weight_is_read_frame_by_frame(tmp_path):
    # a frame whose weight is written as a double (size byte 8) fails the one-pair layout
    post = b"\x04\x02\x00\x00\x00" + b"\x04\x01\x00\x00\x00\x04\x05\x00\x00\x00\x04" \
        + np.float32(1.0).tobytes() + b"\x04\x01\x00\x00\x00\x04\x06\x00\x00\x00\x08" \
        + np.float64(0.5).tobytes()
    (tmp_path / "p.ark").write_bytes(b"a \0B" + post + b"b \0B" + post)
    expected = [[(5, 1.0)], [(6, 0.5)]]
    assert _read_all(f"ark:{tmp_path}/p.ark") == {"a": expected, "b": expected}
    assert _random_access(f"ark:{tmp_path}/p.ark") == {"a": expected, "b": expected}


@pytest.mark.parametrize("cut", [1, 7, 15, 29])
@pytest.mark.parametrize("read", [_read_all, _random_access])
def test_a_truncated_archive_fails_as_frame_by_frame(tmp_path, monkeypatch, read, cut):
    path = tmp_path / "post.ark"
    _archive(path, {"a": [[(1, 1.0)]] * 3, "b": [[(2, 1.0)]] * 4})
    path.write_bytes(path.read_bytes()[:-cut])
    with pytest.raises(FormatError) as whole:
        read(f"ark:{path}")
    _frame_by_frame(monkeypatch)
    with pytest.raises(FormatError) as by_frame:
        read(f"ark:{path}")
    assert str(whole.value) == str(by_frame.value)
    assert str(path) in str(whole.value) and "for key b" in str(whole.value)


def test_a_bad_count_size_byte_fails_as_frame_by_frame(tmp_path, monkeypatch):
    path = tmp_path / "post.ark"
    _archive(path, {"a": [[(1, 1.0)]] * 3})
    raw = bytearray(path.read_bytes())
    raw[len(b"a \0B") + 5 + 15] = 5  # the second frame's count: size byte 5
    path.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match="posterior frame 1 size") as whole:
        _read_all(f"ark:{path}")
    _frame_by_frame(monkeypatch)
    with pytest.raises(FormatError) as by_frame:
        _read_all(f"ark:{path}")
    assert str(whole.value) == str(by_frame.value)
