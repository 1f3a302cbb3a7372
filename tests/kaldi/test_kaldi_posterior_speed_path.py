"""Posterior archives read whole when every frame holds one pair (ali-to-post's output), taken
apart in large reads otherwise (weight-silence-post's empty frames, lattice-to-post's several
pairs), and frame by frame from the first frame neither can take: every way gives the same
values, the same errors, the same index."""
import numpy as np
import pytest

import nnetmix.kaldi.codec as codec
from nnetmix.errors import FormatError
from nnetmix.kaldi import RandomAccessReader, SequentialReader, TableWriter


def _frame_by_frame(monkeypatch):
    monkeypatch.setattr(codec, "_one_pair_records", lambda src, frames: None)
    monkeypatch.setattr(codec, "_read_post_buffered",
                        lambda src, where, frames, keep=True:
                        codec._read_post_frames(src, where, frames))


def _fails_as_frame_by_frame(monkeypatch, read, rspec, match=None) -> str:
    """The error reading ``rspec`` gives, checked equal to the frame-by-frame reader's."""
    with pytest.raises(FormatError, match=match) as fast:
        read(rspec)
    _frame_by_frame(monkeypatch)
    with pytest.raises(FormatError) as by_frame:
        read(rspec)
    assert str(fast.value) == str(by_frame.value)
    return str(fast.value)


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
    error = _fails_as_frame_by_frame(monkeypatch, read, f"ark:{path}")
    assert str(path) in error and "for key b" in error


def test_a_bad_count_size_byte_fails_as_frame_by_frame(tmp_path, monkeypatch):
    path = tmp_path / "post.ark"
    _archive(path, {"a": [[(1, 1.0)]] * 3})
    raw = bytearray(path.read_bytes())
    raw[len(b"a \0B") + 5 + 15] = 5  # the second frame's count: size byte 5
    path.write_bytes(bytes(raw))
    _fails_as_frame_by_frame(monkeypatch, _read_all, f"ark:{path}", "posterior frame 1 size")


def _mixed(frames, seed):
    """Frames of 0 to 3 pairs, about a third empty (silence frames after weight-silence-post)."""
    rng = np.random.default_rng(seed)
    return [[(int(rng.integers(0, 5000)), float(np.float32(rng.random())))
             for _ in range(int(rng.choice(4, p=[0.3, 0.5, 0.1, 0.1])))] for _ in range(frames)]


@pytest.mark.parametrize("read", [_read_all, _random_access])
def test_mixed_frames_are_taken_apart_in_large_reads(tmp_path, monkeypatch, read):
    """Empty and several-pair frames, in utterances of 1 to 20,000 frames: the buffered reader
    takes every frame apart itself (no frame goes frame by frame) and gives the values the
    frame-by-frame reader gives."""
    posts = {f"u{i}": _mixed(n, i) for i, n in enumerate((1, 2, 37, 400, 20000))}
    path = tmp_path / "post.ark"
    _archive(path, posts)
    by_frames, slow = [], codec._read_post_frames

    def spy(src, where, frames, first=0):
        by_frames.append(frames)
        return slow(src, where, frames, first)

    monkeypatch.setattr(codec, "_read_post_frames", spy)
    got = read(f"ark:{path}")
    assert by_frames == [] and got == posts
    monkeypatch.setattr(codec, "_read_post_frames", slow)
    _frame_by_frame(monkeypatch)
    assert read(f"ark:{path}") == posts


def test_the_index_checks_mixed_frames_without_building_them(tmp_path, monkeypatch):
    """An archive's index (skip_value) of empty and several-pair frames takes no frame apart
    into pairs, and still finds every key where the values start; a cut in the middle of a
    frame fails the index as it fails frame by frame."""
    posts = {f"u{i}": _mixed(n, i) for i, n in enumerate((3, 400, 5000))}
    path = tmp_path / "post.ark"
    _archive(path, posts)

    def no_pairs(n):
        raise AssertionError(f"the index built a frame of {n} pairs")

    with monkeypatch.context() as m:
        m.setattr(codec, "_pairs_struct", no_pairs)
        with RandomAccessReader(f"ark:{path}", "post") as r:
            assert r.keys() == list(posts)
    assert _random_access(f"ark:{path}") == posts
    path.write_bytes(path.read_bytes()[:-23])
    error = _fails_as_frame_by_frame(monkeypatch, _random_access, f"ark:{path}")
    assert "for key u2" in error


def test_a_double_weight_midway_goes_on_frame_by_frame(tmp_path):
    """Frames before a double weight are taken apart in the large read, that frame and the rest
    frame by frame; the values are those written."""
    head = _mixed(300, 1)
    enc = codec.encode_value(head, "post", True, codec.Where("x"))
    double = b"\x04\x01\x00\x00\x00\x04\x06\x00\x00\x00\x08" + np.float64(0.5).tobytes()
    tail = codec.encode_value([[(7, 1.0)], []], "post", True, codec.Where("x"))
    # one posterior of 303 frames: head's frames, the double-weight frame, tail's frames
    body = _int32(303) + enc[7:] + double + tail[7:]
    (tmp_path / "p.ark").write_bytes(b"a \0B" + body)
    assert _read_all(f"ark:{tmp_path}/p.ark") == {"a": head + [[(6, 0.5)], [(7, 1.0)], []]}


def test_a_bad_weight_size_byte_names_its_frame(tmp_path, monkeypatch):
    """Past the buffered frames the error still names the frame at fault, as frame by frame."""
    post = _mixed(500, 2)
    post[321] = [(4, 0.5)]
    path = tmp_path / "post.ark"
    _archive(path, {"a": post})
    raw = bytearray(path.read_bytes())
    start = len(b"a \0B") + 5 + len(codec.encode_value(post[:321], "post", True,
                                                         codec.Where("x"))) - 7
    assert raw[start:start + 5] == b"\x04\x01\x00\x00\x00" and raw[start + 10] == 4
    raw[start + 10] = 5                    # frame 321's weight: size byte 5
    path.write_bytes(bytes(raw))
    _fails_as_frame_by_frame(monkeypatch, _read_all, f"ark:{path}",
                             "frame 321: expected size byte 4 or 8, got 5")


def _int32(n):
    return b"\x04" + int(n).to_bytes(4, "little", signed=True)
