"""InputStream's push-back buffer: every mix of reads, give-backs, peeks, lines and words hands
out the same bytes, in the same order and at the same positions, as a plain bytes model of the
stream; a give-back larger than a scan's piece is read across the pieces."""
import io
import random

import pytest

from nnetmix.kaldi.stream import _CHUNK, _WS, InputStream


class _Model:
    """What the stream should do: the bytes not yet consumed, and how many were."""

    def __init__(self, data: bytes):
        self.rest, self.pos = data, 0

    def take(self, n: int) -> bytes:
        head, self.rest = self.rest[:n], self.rest[n:]
        self.pos += len(head)
        return head

    def unread(self, data: bytes) -> None:
        self.rest, self.pos = data + self.rest, self.pos - len(data)

    def readline(self) -> bytes:
        i = self.rest.find(b"\n")
        return self.take(i + 1 if i >= 0 else len(self.rest))

    def skip_space(self) -> None:
        self.take(len(self.rest) - len(self.rest.lstrip(_WS)))

    def read_word(self) -> bytes:
        self.skip_space()
        n = next((i for i, c in enumerate(self.rest) if c in _WS), len(self.rest))
        return self.take(n)


def _data(rng: random.Random, size: int) -> bytes:
    words = [b"ab", b"[", b"]", b"1.5", b"\x00\x04", b"token" * 7]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words) + rng.choice([b" ", b"\n", b"  \t", b""])
    return bytes(out[:size])


@pytest.mark.parametrize("seed", range(30))
def test_every_mix_of_operations_reads_as_a_plain_model(seed):
    rng = random.Random(seed)
    data = _data(rng, rng.choice([50, 700, 5000]))
    raw = io.BufferedReader(io.BytesIO(data), buffer_size=rng.choice([1, 7, 64]))
    s, m = InputStream(raw, "x"), _Model(data)
    last = b""
    for _ in range(300):
        op = rng.choice(["read", "read", "unread_last", "unread_other", "peek", "readline",
                         "word", "space"])
        if op == "read":
            n = rng.choice([1, 2, 5, 40, 900])
            last = s.read(n)
            assert last == m.take(n)
        elif op == "unread_last" and last:
            k = rng.randint(1, len(last))  # the tail of the last read, as parsers give back
            s.unread(last[-k:])
            m.unread(last[-k:])
            last = b""
        elif op == "unread_other":
            other = _data(rng, rng.choice([1, 3, 30]))
            s.unread(other)
            m.unread(other)
            last = b""
        elif op == "peek":
            assert s.peek(3) == m.rest[:3]
        elif op == "readline":
            last = s.readline()
            assert last == m.readline()
        elif op == "word":
            last = s.read_word()
            assert last == m.read_word()
        else:
            s.skip_space()
            m.skip_space()
            last = b""
        assert s.pos == m.pos
    assert s.read(len(data) + 10) == m.rest


def test_a_give_back_larger_than_a_scan_piece_reads_across_pieces():
    """Words, spaces and lines that straddle the push-back buffer's pieces and its end."""
    word = b"w" * 100
    lead = _CHUNK - 10                  # the word starts in the first piece, ends in the second
    data = b" " * lead + word + b" " * (_CHUNK + 5) + b"next\nline two\n" + b"tail"
    s = InputStream(io.BytesIO(data), "x")
    s.unread(s.read(len(data) - 4))     # everything but "tail" pushed back
    assert s.read_word() == word
    s.skip_space()
    assert s.pos == lead + len(word) + _CHUNK + 5
    assert s.readline() == b"next\n"
    assert s.readline() == b"line two\n"
    assert s.readline() == b"tail"
    assert s.read(1) == b"" and s.pos == len(data)


def test_a_seek_drops_what_was_given_back():
    s = InputStream(io.BytesIO(b"0123456789"), "x")
    s.unread(s.read(8)[4:])
    s.seek(2)
    assert (s.read(3), s.pos) == (b"234", 5)
