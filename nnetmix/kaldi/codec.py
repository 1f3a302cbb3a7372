"""Reading and writing one table value of each kind, binary and text, byte for byte as Kaldi.

Kinds and the Kaldi code they match:

* ``mat``: Matrix Write/Read (src/matrix/kaldi-matrix.cc). Binary ``FM``/``DM`` + int32 rows +
  int32 cols + raw little-endian data; compressed ``CM``/``CM2``/``CM3`` are read (to float32).
  Text ``' [\\n  1 2 3 \\n  4 5 6 ]\\n'`` (``' [ ]\\n'`` when empty). Read as stored: float32 or
  float64; written as DM for a float64 array, else FM. Text reads as float32 (Kaldi's BaseFloat).
  A :class:`~nnetmix.kaldi.compressed.Compressed` value is written as CompressedMatrix::Write
  does: ``CM``/``CM2``/``CM3`` in binary, the decompressed matrix in text.
* ``vec``: Vector Write/Read (kaldi-vector.cc): ``FV``/``DV`` + int32 dim + data; text
  ``' [ 1 2 3 ]\\n'``.
* ``ivec``: in a table, BasicVectorHolder<int32> (util/kaldi-holder-inl.h): int32 size then each
  element as ``\\4`` + int32; text ``'1 2 3 \\n'``. As a single object, Write/ReadIntegerVector
  (base/io-funcs-inl.h): ``\\4`` + int32 size + raw int32s; text ``'[ 1 2 3 ]\\n'``.
* ``post``: Write/ReadPosterior (hmm/posterior.cc): int32 frames, per frame int32 count, per
  pair int32 id and float32 weight, each with its size byte; text ``'[ 3 1 ] [ 4 0.5 5 0.5 ] \\n'``.
* ``pairvec``: BasicPairVectorHolder<BaseFloat> (util/kaldi-holder-inl.h), the table kind of
  BaseFloatPairVectorWriter (lattice-mbr-decode's --times-wspecifier): int32 size, then each pair
  as two floats, each with its size byte (4; a double's 8 is read too); text ``'0 1.5 ; 1.5 2 \\n'``
  (``';'`` between pairs, ``'\\n'`` alone when empty). Values are (N, 2) float32 arrays.
* ``gpost``: GaussPostHolder (hmm/posterior.cc), Gaussian-level posteriors: int32 frames, per
  frame int32 count, per entry an int32 transition-id and a Vector (the pdf's component
  posteriors, ``FV``); the same layout in text (``'1 1 5  [ 0.5 0.5 ]\\n\\n'``: ints with a
  space after each, vectors as Vector::Write, one ``'\\n'`` at the end). Values are lists of
  frames, each a list of (id, float32 vector) pairs.
* ``float``: BasicHolder<BaseFloat> (util/kaldi-holder-inl.h), the tables of one number per key
  (scale-post's scales): ``\\4`` + a float32 (a double's 8 is read too); text ``'0.5 \\n'``.
  Values are Python floats (float32-rounded).

An int32 on disk is Kaldi's WriteBasicType: a size byte 4, then 4 little-endian bytes. Binary
objects start with ``\\0B`` (InitKaldiOutputStream); text floats are printed with 7 significant
digits, the precision Kaldi sets on text streams. Errors are :class:`FormatError` naming the file,
the key and what was expected, never a raw struct.error. Written here rather than delegated to
kaldiio (which reads FM/DM/FV/DV/CM*): kaldiio has no posteriors, writes text int vectors in a
form Kaldi cannot read, asserts on bad data, and is our independent reference in the tests.
"""
from __future__ import annotations

import re
import struct
from typing import Any, Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi.compressed import (COMPRESSED_TOKENS, Compressed, compress_matrix, decompress,
                                      read_compressed)
from nnetmix.kaldi.stream import InputStream

__all__ = ["KINDS", "Where", "read_value", "skip_value", "encode_value", "Posterior",
           "text_round_trip"]

KINDS = ("mat", "vec", "ivec", "post", "pairvec", "gpost", "float")
Posterior = list  # list of frames, each a list of (int id, float weight) pairs

_BIG_READ = 1 << 24
_WS = b" \t\n\r\v\f"
_IVEC_DTYPE = np.dtype([("size", "u1"), ("value", "<i4")])
_FPAIR_DTYPE = np.dtype([("size1", "u1"), ("first", "<f4"), ("size2", "u1"), ("second", "<f4")])
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


class Where:
    """Names the file and key being read, so every error says where it happened."""

    def __init__(self, name: str, key: Optional[str] = None):
        self.name = name
        self.key = key

    def fail(self, problem: str, detail: str = "") -> FormatError:
        key = f" for key {self.key}" if self.key is not None else ""
        return FormatError(f"{self.name}: {problem}{key}" + (f": {detail}" if detail else ""))


# -- binary primitives -------------------------------------------------------------------------
def _need(src: InputStream, n: int, where: Where, what: str) -> bytes:
    if n <= _BIG_READ:
        data = src.read(n)
    else:  # a corrupt size must not make us allocate gigabytes before noticing the end
        parts, got = [], 0
        while got < n:
            want = min(_BIG_READ, n - got)
            part = src.read(want)
            parts.append(part)
            got += len(part)
            if len(part) < want:
                break
        data = b"".join(parts)
    if len(data) != n:
        raise where.fail(f"truncated {what}", f"expected {n} bytes, got {len(data)}")
    return data


def _read_int32(src: InputStream, where: Where, what: str) -> int:
    b = _need(src, 5, where, what)
    if b[0] != 4:
        raise where.fail(f"bad {what}", f"expected an int32 (size byte 4), got size byte {b[0]}")
    return int.from_bytes(b[1:], "little", signed=True)


def _read_size(src: InputStream, where: Where, what: str) -> int:
    n = _read_int32(src, where, what)
    if n < 0:
        raise where.fail(f"bad {what}", f"expected a size >= 0, got {n}")
    return n


def _read_token(src: InputStream, where: Where, expected: str) -> str:
    word = src.read_word(limit=32)
    after = src.read(1)
    if not word:
        raise where.fail("truncated object", f"expected {expected}, got end of file")
    if not after or after not in _WS:
        shown = (word + after)[:20]
        raise where.fail("bad token", f"expected {expected}, got {shown!r}")
    return word.decode("latin-1")


def _int32(x: int) -> bytes:
    return b"\x04" + int(x).to_bytes(4, "little", signed=True)


# -- binary readers ---------------------------------------------------------------------------
def _read_mat_bin(src: InputStream, where: Where, table: bool) -> np.ndarray:
    expected = "FM, DM, CM, CM2 or CM3"
    tok = _read_token(src, where, expected)
    if tok in COMPRESSED_TOKENS:
        return read_compressed(tok, lambda n, what: _need(src, n, where, what), where.fail)
    if tok not in ("FM", "DM"):
        hint = " (a vector, not a matrix)" if tok in ("FV", "DV") else ""
        raise where.fail("bad token", f"expected {expected}, got '{tok}'{hint}")
    rows = _read_size(src, where, f"{tok} row count")
    cols = _read_size(src, where, f"{tok} column count")
    dtype = np.dtype("<f4" if tok == "FM" else "<f8")
    data = _need(src, rows * cols * dtype.itemsize, where, f"{tok} matrix data ({rows}x{cols})")
    return np.frombuffer(data, dtype=dtype).reshape(rows, cols).astype(dtype.newbyteorder("="))


def _read_vec_bin(src: InputStream, where: Where, table: bool) -> np.ndarray:
    tok = _read_token(src, where, "FV or DV")
    if tok not in ("FV", "DV"):
        hint = " (a matrix, not a vector)" if tok in ("FM", "DM") + COMPRESSED_TOKENS else ""
        raise where.fail("bad token", f"expected FV or DV, got '{tok}'{hint}")
    dim = _read_size(src, where, f"{tok} dimension")
    dtype = np.dtype("<f4" if tok == "FV" else "<f8")
    data = _need(src, dim * dtype.itemsize, where, f"{tok} vector data ({dim})")
    return np.frombuffer(data, dtype=dtype).astype(dtype.newbyteorder("="))


def _read_ivec_bin(src: InputStream, where: Where, table: bool) -> np.ndarray:
    n = _read_size(src, where, "int32 vector size")
    if not table:  # ReadIntegerVector: raw int32s after the size
        data = _need(src, 4 * n, where, f"int32 vector data ({n})")
        return np.frombuffer(data, dtype="<i4").astype(np.int32)
    items = np.frombuffer(_need(src, 5 * n, where, f"int32 vector data ({n} elements)"),
                          dtype=_IVEC_DTYPE)
    bad = np.flatnonzero(items["size"] != 4)
    if bad.size:
        i = int(bad[0])
        raise where.fail("bad int32 vector",
                         f"element {i}: expected size byte 4, got {int(items['size'][i])}")
    return items["value"].astype(np.int32)


_PAIR_STRUCTS: dict[int, struct.Struct] = {}


def _pairs_struct(n: int) -> struct.Struct:
    """Unpacks n (id, weight) pairs, skipping their size bytes: '<xixf' n times."""
    st = _PAIR_STRUCTS.get(n)
    if st is None:
        st = struct.Struct("<" + "xixf" * n)
        if n <= 64:
            _PAIR_STRUCTS[n] = st
    return st


#: one frame of one (id, weight) pair, as ali-to-post writes every frame: its count, the id and
#: the weight, each behind its size byte (15 bytes, packed)
_ONE_PAIR_FRAME = np.dtype([("count_size", "u1"), ("count", "<i4"), ("id_size", "u1"),
                            ("id", "<i4"), ("weight_size", "u1"), ("weight", "<f4")])


def _one_pair_records(src: InputStream, frames: int) -> Optional[np.ndarray]:
    """The next ``frames`` frames as :data:`_ONE_PAIR_FRAME` records when every one holds one
    pair of 4-byte values; None, with the stream where it was, otherwise. The frames are
    checked in step with the layout, so the first frame that differs fails the check."""
    n = _ONE_PAIR_FRAME.itemsize * frames
    if not 0 < n <= _BIG_READ:
        return None
    raw = src.read(n)
    if len(raw) == n:
        rec = np.frombuffer(raw, dtype=_ONE_PAIR_FRAME)
        if ((rec["count_size"] == 4) & (rec["count"] == 1) & (rec["id_size"] == 4)
                & (rec["weight_size"] == 4)).all():
            return rec
    src.unread(raw)
    return None


def _read_post_bin(src: InputStream, where: Where, table: bool) -> list:
    """A posterior: read at once when each frame holds one pair (as ali-to-post writes every
    frame), a target archive of a million frames in about a second rather than several; else
    taken apart in large reads (:func:`_read_post_buffered`)."""
    frames = _read_size(src, where, "posterior frame count")
    rec = _one_pair_records(src, frames)
    if rec is not None:
        return [[pair] for pair in zip(rec["id"].tolist(), rec["weight"].tolist())]
    return _read_post_buffered(src, where, frames)


def _read_post_buffered(src: InputStream, where: Where, frames: int, keep: bool = True) -> list:
    """A posterior's ``frames`` frames of any number of pairs, taken apart in reads of many
    frames at once (weight-silence-post's silence frames hold none, lattice-to-post's several):
    about twice as fast as a read per frame on utterances of a few hundred frames, and linear in
    the utterance's length (bench/target_read_speed.py --empty-share). The
    first frame the buffer cannot take apart (a double weight, a bad size byte, the end of the
    stream) and every frame after it go frame by frame, whose errors name the frame. With
    ``keep`` false (an archive's index) the frames are checked but not built: [] is returned."""
    post: list = []
    done = 0
    while done < frames:
        raw = src.read(min(15 * (frames - done), _BIG_READ))
        used, n = _parse_post_frames(raw, frames - done, post if keep else None)
        if used == 0 and len(raw) >= 5 and raw[0] == 4:     # a frame longer than the read
            need = 5 + 10 * _INT32.unpack_from(raw, 1)[0]
            if len(raw) < need <= _BIG_READ:
                raw += src.read(need - len(raw))
                used, n = _parse_post_frames(raw, frames - done, post if keep else None)
        src.unread(raw[used:])        # less than one frame, or where the parsing stopped
        done += n
        if used == 0:
            break
    if done < frames:
        rest = _read_post_frames(src, where, frames - done, first=done)
        if keep:
            post += rest
    return post


_INT32 = struct.Struct("<i")


def _parse_post_frames(raw: bytes, frames: int, post: Optional[list]) -> tuple[int, int]:
    """The whole frames at the start of ``raw`` (at most ``frames``) whose values are all
    4-byte, appended to ``post`` (checked only, where it is None): the bytes they took and how
    many frames."""
    off, end_of, n_done = 0, len(raw), 0
    while n_done < frames and off + 5 <= end_of and raw[off] == 4:
        n = _INT32.unpack_from(raw, off + 1)[0]
        end = off + 5 + 10 * n
        if n < 0 or end > end_of:
            break
        if n and raw[off + 5:end:5] != b"\x04" * (2 * n):
            break
        if post is not None:
            if n:
                flat = _pairs_struct(n).unpack_from(raw, off + 5)
                post.append(list(zip(flat[0::2], flat[1::2])))
            else:
                post.append([])
        off = end
        n_done += 1
    return off, n_done


def _read_post_frames(src: InputStream, where: Where, frames: int, first: int = 0) -> list:
    """A posterior's ``frames`` frames one by one, with an error naming the frame at fault
    (counted from ``first``)."""
    post = []
    for t in range(first, first + frames):
        n = _read_size(src, where, f"posterior frame {t} size")
        raw = _need(src, 10 * n, where, f"posterior frame {t} ({n} pairs)")
        if raw[0::5] == b"\x04" * (2 * n):  # every id and weight is a 5-byte int32/float32
            flat = _pairs_struct(n).unpack(raw)
            post.append(list(zip(flat[0::2], flat[1::2])))
            continue
        src.unread(raw)  # some weight was written as a double: read pair by pair
        pairs = []
        for _ in range(n):
            i = _read_int32(src, where, f"posterior id in frame {t}")
            size = _need(src, 1, where, f"posterior weight in frame {t}")[0]
            if size not in (4, 8):
                raise where.fail("bad posterior weight",
                                 f"frame {t}: expected size byte 4 or 8, got {size}")
            w = np.frombuffer(_need(src, size, where, f"posterior weight in frame {t}"),
                              dtype="<f4" if size == 4 else "<f8")[0]
            pairs.append((i, float(np.float32(w))))
        post.append(pairs)
    return post


def _read_float(src: InputStream, where: Where, what: str) -> float:
    """ReadBasicType<float>: size byte 4 then a float32, or 8 then a double (kept as float)."""
    size = _need(src, 1, where, what)[0]
    if size not in (4, 8):
        raise where.fail(f"bad {what}", f"expected a float (size byte 4 or 8), got size byte {size}")
    return float(np.frombuffer(_need(src, size, where, what), "<f4" if size == 4 else "<f8")[0])


def _read_pairvec_bin(src: InputStream, where: Where, table: bool) -> np.ndarray:
    n = _read_size(src, where, "float-pair vector size")
    raw = _need(src, 10 * n, where, f"float-pair vector data ({n} pairs)")
    items = np.frombuffer(raw, dtype=_FPAIR_DTYPE)
    if np.all(items["size1"] == 4) and np.all(items["size2"] == 4):
        return np.stack([items["first"], items["second"]], axis=1).astype(np.float32)
    src.unread(raw)  # some value was written as a double: read value by value
    values = [_read_float(src, where, f"float-pair vector element {i // 2}")
              for i in range(2 * n)]
    return np.array(values, dtype=np.float64).astype(np.float32).reshape(n, 2)


# -- text readers -----------------------------------------------------------------------------
def _parse_floats(tokens: Sequence[str]) -> np.ndarray:
    """Text numbers as float32, the way every text reader here parses them (via float64)."""
    return np.array(tokens, dtype=np.float64).astype(np.float32)


def _floats(tokens: Sequence[str], where: Where, what: str) -> np.ndarray:
    try:
        return _parse_floats(tokens)
    except ValueError:
        for tok in tokens:
            try:
                float(tok)
            except ValueError:
                raise where.fail(f"bad {what}", f"expected a number, got '{tok[:20]}'") from None
        raise


def _ints(tokens: Sequence[str], where: Where, what: str) -> np.ndarray:
    values = []
    for tok in tokens:
        try:
            v = int(tok)
        except ValueError:
            raise where.fail(f"bad {what}", f"expected an integer, got '{tok[:20]}'") from None
        if not _INT32_MIN <= v <= _INT32_MAX:
            raise where.fail(f"bad {what}", f"{v} does not fit in an int32")
        values.append(v)
    return np.array(values, dtype=np.int32)


def _open_bracket(src: InputStream, where: Where, what: str) -> bool:
    """Read '[' (True) or '[]' (False: empty), as Kaldi's text Matrix/Vector Read."""
    word = src.read_word(limit=32)
    if word == b"[]":
        return False
    if word != b"[":
        got = repr(word[:20].decode("latin-1")) if word else "end of file"
        raise where.fail(f"bad text {what}", f"expected '[', got {got}")
    return True


def _give_back_after_bracket(src: InputStream, rest: bytes) -> None:
    """Kaldi eats one newline after ']'; anything else on the line belongs to the next read."""
    if rest.startswith(b"\r\n"):
        rest = rest[2:]
    elif rest.startswith(b"\n"):
        rest = rest[1:]
    src.unread(rest)


def _read_mat_text(src: InputStream, where: Where, table: bool) -> np.ndarray:
    if not _open_bracket(src, where, "matrix"):
        return np.zeros((0, 0), dtype=np.float32)
    rows: list[np.ndarray] = []
    while True:
        line = src.readline()
        if not line:
            raise where.fail("truncated text matrix", "expected ']', got end of file")
        body, bracket, rest = line.partition(b"]")
        for part in body.decode("latin-1").split(";"):
            tokens = part.split()
            if tokens:
                rows.append(_floats(tokens, where, "text matrix"))
        if bracket:
            _give_back_after_bracket(src, rest)
            break
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    width = rows[0].size
    for i, r in enumerate(rows):
        if r.size != width:
            raise where.fail("bad text matrix",
                             f"row {i} has {r.size} values, expected {width} like row 0")
    return np.vstack(rows)


def _read_vec_text(src: InputStream, where: Where, table: bool) -> np.ndarray:
    if not _open_bracket(src, where, "vector"):
        return np.zeros(0, dtype=np.float32)
    line = src.readline()
    body, bracket, rest = line.partition(b"]")
    if not bracket:
        if not line.endswith(b"\n"):
            raise where.fail("truncated text vector", "the file ends before its ']'")
        raise where.fail("bad text vector", "expected ']' before the end of the line (a text "
                         "vector is one line)")
    _give_back_after_bracket(src, rest)
    return _floats(body.decode("latin-1").split(), where, "text vector")


def _read_ivec_text(src: InputStream, where: Where, table: bool) -> np.ndarray:
    if table:  # BasicVectorHolder: the rest of the line
        line = src.readline()
        if not line:
            raise where.fail("truncated text int32 vector", "expected a line, got end of file")
        tokens = line.decode("latin-1").split()
        if tokens[:1] == ["["] and tokens[-1:] == ["]"]:  # as kaldiio writes them; Kaldi won't
            tokens = tokens[1:-1]
        return _ints(tokens, where, "text int32 vector")
    if not _open_bracket(src, where, "int32 vector"):
        return np.zeros(0, dtype=np.int32)
    tokens: list[str] = []
    while True:
        line = src.readline()
        if not line:
            raise where.fail("truncated text int32 vector", "expected ']', got end of file")
        body, bracket, rest = line.partition(b"]")
        tokens += body.decode("latin-1").split()
        if bracket:
            src.unread(rest)
            return _ints(tokens, where, "text int32 vector")


_POST_FRAME = re.compile(r"\[([^\[\]]*)\]")


def _read_post_text(src: InputStream, where: Where, table: bool) -> list:
    line = src.readline()
    if not line:
        raise where.fail("truncated text posterior", "expected a line, got end of file")
    text = line.decode("latin-1").strip()
    post = []
    pos = 0
    for m in _POST_FRAME.finditer(text):
        if text[pos:m.start()].strip():
            break
        tokens = m.group(1).split()
        if len(tokens) % 2:
            raise where.fail("bad text posterior",
                             f"frame {len(post)}: expected id weight pairs, got '{m.group(1)[:40]}'")
        ids = _ints(tokens[0::2], where, "text posterior")
        weights = _floats(tokens[1::2], where, "text posterior")
        post.append(list(zip(ids.tolist(), weights.tolist())))
        pos = m.end()
    if text[pos:].strip():
        raise where.fail("bad text posterior",
                         f"expected '[ id weight ... ]' frames, got '{text[pos:pos + 20]}'")
    return post


def _read_pairvec_text(src: InputStream, where: Where, table: bool) -> np.ndarray:
    """One line of ``a b`` pairs separated by ``;`` (which need no spaces around it)."""
    line = src.readline()
    if not line:
        raise where.fail("truncated text float-pair vector", "expected a line, got end of file")
    if not line.strip():
        return np.zeros((0, 2), dtype=np.float32)
    pairs = line.decode("latin-1").split(";")
    rows = []
    for i, pair in enumerate(pairs):
        tokens = pair.split()
        if len(tokens) != 2:
            raise where.fail("bad text float-pair vector",
                             f"pair {i}: expected 2 numbers, got {len(tokens)}")
        rows.append(_floats(tokens, where, "text float-pair vector"))
    return np.array(rows, dtype=np.float32).reshape(len(rows), 2)


def _read_float_text(src: InputStream, where: Where, table: bool) -> float:
    """BasicHolder<BaseFloat>::Read in text: one number, then nothing else on its line."""
    line = src.readline() if table else src.read_word(limit=64)
    tokens = line.decode("latin-1").split()
    if not tokens:
        raise where.fail("truncated text float", "expected a number, got end of line")
    if len(tokens) > 1:
        raise where.fail("bad text float", f"expected one number, got '{' '.join(tokens)[:40]}'")
    return float(np.float32(_floats(tokens, where, "text float")[0]))


def _read_text_int(src: InputStream, where: Where, what: str) -> int:
    word = src.read_word(limit=32)
    try:
        value = int(word)
    except ValueError:
        got = repr(word[:20].decode("latin-1")) if word else "end of file"
        raise where.fail(f"bad {what}", f"expected an integer, got {got}") from None
    if not _INT32_MIN <= value <= _INT32_MAX:
        raise where.fail(f"bad {what}", f"{value} does not fit in an int32")
    return value


def _read_gpost(src: InputStream, where: Where, binary: bool) -> list:
    """GaussPostHolder::Read: the same sequence of int32s and Vectors in both modes."""
    if binary:
        def count(what: str) -> int:
            return _read_size(src, where, what)

        def tid(what: str) -> int:
            return _read_int32(src, where, what)

        def vec() -> np.ndarray:
            return _read_vec_bin(src, where, True)
    else:
        def count(what: str) -> int:
            n = _read_text_int(src, where, what)
            if n < 0:
                raise where.fail(f"bad {what}", f"expected a size >= 0, got {n}")
            return n

        def tid(what: str) -> int:
            return _read_text_int(src, where, what)

        def vec() -> np.ndarray:
            return _read_vec_text(src, where, True)
    frames = count("Gaussian-posterior frame count")
    gpost = []
    for t in range(frames):
        n = count(f"Gaussian-posterior frame {t} size")
        gpost.append([(tid(f"Gaussian-posterior id in frame {t}"), vec()) for _ in range(n)])
    return gpost


_NAMES = {"mat": "matrix", "vec": "vector", "ivec": "int32 vector", "post": "posterior",
          "pairvec": "float-pair vector", "gpost": "Gaussian-level posterior", "float": "float"}
_BIN = {"mat": _read_mat_bin, "vec": _read_vec_bin, "ivec": _read_ivec_bin,
        "post": _read_post_bin, "pairvec": _read_pairvec_bin,
        "gpost": lambda src, where, table: _read_gpost(src, where, True),
        "float": lambda src, where, table: float(np.float32(_read_float(src, where, "float")))}
_TEXT = {"mat": _read_mat_text, "vec": _read_vec_text, "ivec": _read_ivec_text,
         "post": _read_post_text, "pairvec": _read_pairvec_text,
         "gpost": lambda src, where, table: _read_gpost(src, where, False),
        "float": _read_float_text}


def read_value(src: InputStream, kind: str, where: Where, table: bool = True) -> Any:
    """Read one object of ``kind`` at the stream's position, binary (``\\0B``) or text.

    ``table`` selects the table-holder layout for ``ivec`` (see the module docstring).
    """
    head = src.peek(2)
    if not head:
        raise where.fail("truncated object", f"expected a {_NAMES[kind]}, got end of file")
    if head[:1] == b"\0":
        if head != b"\0B":
            raise where.fail("bad binary header", f"expected '\\0B', got {head!r}")
        src.read(2)
        return _BIN[kind](src, where, table)
    return _TEXT[kind](src, where, table)


def skip_value(src: InputStream, kind: str, where: Where, table: bool = True) -> None:
    """Move past one object of ``kind``, checked as :func:`read_value` checks it, without
    building it where that is the cost: an archive's index needs only where each object
    starts, and a million frames of one-pair posteriors as Python lists take seconds."""
    if kind == "post" and src.peek(2) == b"\0B":
        src.read(2)
        frames = _read_size(src, where, "posterior frame count")
        if _one_pair_records(src, frames) is None:
            _read_post_buffered(src, where, frames, keep=False)
        return
    read_value(src, kind, where, table)


# -- writers ----------------------------------------------------------------------------------
_fmt = "{:.7g}".format  # C++ ostream with precision 7, the precision Kaldi sets for text


def text_round_trip(values: np.ndarray) -> np.ndarray:
    """float32 ``values`` as a text stream writes them (precision 7) and reads them back: what a
    model written with --binary=false holds when read, for state files that must name it."""
    a = np.asarray(values, dtype=np.float32)
    return _parse_floats([_fmt(x) for x in a.ravel().tolist()]).reshape(a.shape)


def _as_array(value: Any, ndim: int, where: Where, what: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != ndim:
        raise where.fail(f"cannot write {what}", f"expected a {ndim}-D array, got shape {arr.shape}")
    return arr


def _float_array(value: Any, ndim: int, where: Where, what: str) -> np.ndarray:
    arr = _as_array(value, ndim, where, what)
    if arr.dtype != np.float64:
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) or \
                np.issubdtype(arr.dtype, np.complexfloating):
            raise where.fail(f"cannot write {what}", f"expected real numbers, got {arr.dtype}")
        arr = arr.astype(np.float32)
    return arr


def _int_array(value: Any, where: Where) -> np.ndarray:
    arr = _as_array(value, 1, where, "int32 vector")
    if arr.size == 0:
        return arr.astype(np.int32)
    if not np.issubdtype(arr.dtype, np.integer):
        raise where.fail("cannot write int32 vector", f"expected integers, got {arr.dtype}")
    if arr.min() < _INT32_MIN or arr.max() > _INT32_MAX:
        raise where.fail("cannot write int32 vector", "a value does not fit in an int32")
    return arr.astype(np.int32)


def _encode_mat(value: Any, binary: bool, table: bool, where: Where) -> bytes:
    if isinstance(value, Compressed):
        blob = compress_matrix(_float_array(value.matrix, 2, where, "matrix"), value.method,
                               where.fail)
        if binary:
            return b"\0B" + blob
        value = decompress(blob)  # Kaldi writes a CompressedMatrix in text as its values
    arr = _float_array(value, 2, where, "matrix")
    if binary:
        tok, dt = (b"DM ", "<f8") if arr.dtype == np.float64 else (b"FM ", "<f4")
        return (b"\0B" + tok + _int32(arr.shape[0]) + _int32(arr.shape[1])
                + np.ascontiguousarray(arr, dtype=dt).tobytes())
    if arr.shape[1] == 0:
        return b" [ ]\n"
    parts = [" ["]
    for row in arr.tolist():
        parts.append("\n  " + "".join(_fmt(x) + " " for x in row))
    parts.append("]\n")
    return "".join(parts).encode("ascii")


def _encode_vec(value: Any, binary: bool, table: bool, where: Where) -> bytes:
    arr = _float_array(value, 1, where, "vector")
    if binary:
        tok, dt = (b"DV ", "<f8") if arr.dtype == np.float64 else (b"FV ", "<f4")
        return b"\0B" + tok + _int32(arr.size) + np.ascontiguousarray(arr, dtype=dt).tobytes()
    return (" [ " + "".join(_fmt(x) + " " for x in arr.tolist()) + "]\n").encode("ascii")


def _encode_ivec(value: Any, binary: bool, table: bool, where: Where) -> bytes:
    arr = _int_array(value, where)
    if binary:
        if not table:
            return b"\0B" + _int32(arr.size) + arr.astype("<i4").tobytes()
        items = np.empty(arr.size, dtype=_IVEC_DTYPE)
        items["size"] = 4
        items["value"] = arr
        return b"\0B" + _int32(arr.size) + items.tobytes()
    body = "".join(f"{x} " for x in arr.tolist())
    return (body + "\n" if table else "[ " + body + "]\n").encode("ascii")


def _post_arrays(value: Any, where: Where) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flatten a posterior to (pairs per frame, ids, weights)."""
    try:
        frames = [list(frame) for frame in value]
        counts = np.array([len(f) for f in frames], dtype=np.int64)
        ids = np.array([p[0] for f in frames for p in f], dtype=np.int64)
        weights = np.array([p[1] for f in frames for p in f], dtype=np.float32)
    except (TypeError, IndexError, ValueError) as e:
        raise where.fail("cannot write posterior",
                         f"expected a list of frames of (id, weight) pairs ({e})") from None
    if ids.size and (ids.min() < _INT32_MIN or ids.max() > _INT32_MAX):
        raise where.fail("cannot write posterior", "an id does not fit in an int32")
    return counts, ids.astype(np.int32), weights


def _encode_post(value: Any, binary: bool, table: bool, where: Where) -> bytes:
    counts, ids, weights = _post_arrays(value, where)
    if binary:
        # The whole object is a run of 5-byte items (size byte 4 + int32 or float32): the frame
        # count, then per frame its pair count followed by id, weight, id, weight, ...
        items = np.empty(1 + counts.size + 2 * ids.size, dtype=_IVEC_DTYPE)
        items["size"] = 4
        items["value"][0] = counts.size
        heads = 1 + np.arange(counts.size) + 2 * (np.cumsum(counts) - counts)
        items["value"][heads] = counts
        pair_pos = np.repeat(heads + 1, counts) + 2 * (np.arange(ids.size)
                                                      - np.repeat(np.cumsum(counts) - counts, counts))
        items["value"][pair_pos] = ids
        items["value"][pair_pos + 1] = weights.view(np.int32)
        return b"\0B" + items.tobytes()
    out = []
    start = 0
    id_list, w_list = ids.tolist(), weights.tolist()
    for n in counts.tolist():
        out.append("[ " + "".join(f"{id_list[j]} {_fmt(w_list[j])} " for j in range(start, start + n))
                   + "] ")
        start += n
    return ("".join(out) + "\n").encode("ascii")


def _encode_pairvec(value: Any, binary: bool, table: bool, where: Where) -> bytes:
    arr = _float_array(value, 2, where, "float-pair vector") if np.size(value) else \
        np.zeros((0, 2), dtype=np.float32)
    if arr.shape[1] != 2:
        raise where.fail("cannot write float-pair vector",
                         f"expected N x 2 values, got shape {arr.shape}")
    arr = arr.astype(np.float32)  # BaseFloat
    if binary:
        items = np.empty(arr.shape[0], dtype=_FPAIR_DTYPE)
        items["size1"] = items["size2"] = 4
        items["first"], items["second"] = arr[:, 0], arr[:, 1]
        return b"\0B" + _int32(arr.shape[0]) + items.tobytes()
    return ("; ".join(f"{_fmt(a)} {_fmt(b)} " for a, b in arr.tolist()) + "\n").encode("ascii")


def _encode_gpost(value: Any, binary: bool, table: bool, where: Where) -> bytes:
    """GaussPostHolder::Write: counts and ids as WriteBasicType, each vector as Vector::Write
    (float32, Kaldi's BaseFloat)."""
    def basic(n: int) -> bytes:
        return _int32(n) if binary else f"{n} ".encode("ascii")

    try:
        frames = [list(frame) for frame in value]
        parts = [b"\0B" if binary else b"", basic(len(frames))]
        for frame in frames:
            parts.append(basic(len(frame)))
            for i, v in frame:
                if not _INT32_MIN <= int(i) <= _INT32_MAX:
                    raise where.fail("cannot write Gaussian-level posterior",
                                     "an id does not fit in an int32")
                vec = np.asarray(v, dtype=np.float32)
                parts.append(basic(int(i)))
                parts.append(_encode_vec(vec, binary, table, where)[2 if binary else 0:])
    except (TypeError, ValueError) as e:
        raise where.fail("cannot write Gaussian-level posterior",
                         f"expected a list of frames of (id, vector) pairs ({e})") from None
    if not binary:
        parts.append(b"\n")
    return b"".join(parts)


def _encode_float(value: Any, binary: bool, table: bool, where: Where) -> bytes:
    try:
        x = np.float32(value)
    except (TypeError, ValueError):
        raise where.fail("cannot write float", f"expected a number, got {value!r}") from None
    if binary:
        return b"\0B\x04" + x.astype("<f4").tobytes()
    return (_fmt(float(x)) + " " + ("\n" if table else "")).encode("ascii")


_ENC = {"mat": _encode_mat, "vec": _encode_vec, "ivec": _encode_ivec, "post": _encode_post,
        "pairvec": _encode_pairvec, "gpost": _encode_gpost, "float": _encode_float}


def encode_value(value: Any, kind: str, binary: bool, where: Where, table: bool = True) -> bytes:
    """The bytes Kaldi writes for one object (with ``\\0B`` when binary, nothing before text)."""
    return _ENC[kind](value, binary, table, where)


def check_kind(kind: str, context: str = "") -> str:
    """Refuse an unknown kind with the list of known ones."""
    if kind not in KINDS:
        where = f"{context}: " if context else ""
        raise ValueError(f"{where}unknown kind '{kind}' (expected one of {', '.join(KINDS)})")
    return kind
