"""Kaldi's token-level object I/O (src/base/io-funcs.cc), the one set of rules every model file
shares: nnet1 networks (nnetmix.nnet), the topology, transition model, GMMs and tree.

What Kaldi writes, and :class:`TokenWriter` with it:

* a token: ``<Token> `` (the space after it in binary and text alike);
* WriteBasicType: an int32 is binary a size byte 4 then 4 little-endian bytes, a uint32 size byte
  0xFC then 4 bytes, a float a size byte 4 then a float32; text ``123 `` and floats with 7
  significant digits (the precision Kaldi sets on text streams);
* WriteIntegerVector: binary size byte 4, int32 count, raw int32s; text ``[ 1 2 3 ]\\n``;
* matrices and vectors: the objects of :mod:`nnetmix.kaldi.codec` minus the ``\\0B`` header,
  which :func:`write_object_bytes` (Kaldi's Output) writes once at the start of the file.

:class:`TokenReader` reads the same back (ReadToken, ExpectToken, Peek, ReadBasicType, ...; a
binary float may also be a double, narrowed, as Kaldi accepts). Every read error is a
:class:`~nnetmix.errors.FormatError` naming the file, the byte offset where the bad item starts,
the part being read (``context``, e.g. ``component 3 <AffineTransform>``) and what was expected.
"""
from __future__ import annotations

import struct
from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError
import nnetmix.kaldi.codec as codec
from nnetmix.kaldi.codec import Where
from nnetmix.kaldi.stream import InputStream, open_input, open_output

__all__ = ["TokenReader", "TokenWriter", "open_object", "write_object_bytes", "format_float",
           "add_objects", "read_object_with"]

_WS = b" \t\n\r\v\f"


def format_float(x: float) -> str:
    """A float32 as C++ ``os << f`` prints it at precision 7 (Kaldi's text streams)."""
    return "{:.7g}".format(float(np.float32(x)))


class _At(Where):
    """A codec ``Where`` that reports through the reader (byte offset and context)."""

    def __init__(self, reader: "TokenReader"):
        super().__init__(reader.name)
        self.reader = reader

    def fail(self, problem: str, detail: str = "") -> FormatError:
        return self.reader.fail(problem, detail)


class TokenReader:
    """Reads tokens, basic types, integer vectors, vectors and matrices from a binary or text
    Kaldi stream (the ``\\0B`` header already consumed: see :func:`open_object`)."""

    def __init__(self, src: InputStream, binary: bool, name: Optional[str] = None):
        self.src = src
        self.binary = binary
        self.name = name or src.name
        self.context = ""       #: e.g. "component 3 <AffineTransform>", for error messages
        self.start = src.pos    #: where the item being read starts
        self._where = _At(self)

    def fail(self, problem: str, detail: str = "", pos: Optional[int] = None) -> FormatError:
        """The error for the item that starts at ``pos`` (default: the one being read)."""
        ctx = f" in {self.context}" if self.context else ""
        msg = f"{self.name}: byte {self.start if pos is None else pos}{ctx}: {problem}"
        return FormatError(msg + (f": {detail}" if detail else ""))

    def _begin(self) -> None:
        self.src.skip_space()
        self.start = self.src.pos

    # -- peeking ------------------------------------------------------------------------------
    def peek_char(self) -> str:
        """Kaldi's Peek: the next character, after whitespace in text mode ('' at end of file)."""
        if not self.binary:
            self.src.skip_space()
        return self.src.peek(1).decode("latin-1")

    def peek_token(self) -> str:
        """The next word, not consumed ('' at end of file)."""
        self._begin()
        word = self.src.read_word(limit=256)
        self.src.unread(word)
        return word.decode("latin-1")

    # -- tokens -------------------------------------------------------------------------------
    def token(self, what: str = "a token", allow_eof: bool = False) -> str:
        """ReadToken: a word and one whitespace character after it (consumed); ``allow_eof``
        accepts the end of the file instead (as ``is >> token`` does)."""
        self._begin()
        word = self.src.read_word(limit=256)
        if not word:
            raise self.fail("truncated", f"expected {what}, got end of file")
        after = self.src.read(1)
        if not after and not allow_eof:
            raise self.fail("truncated", f"expected {what}, got "
                            f"{word[:40].decode('latin-1')!r} and then end of file")
        if after and after not in _WS:
            raise self.fail("bad token", f"expected {what}, got "
                            f"{(word + after)[:40].decode('latin-1')!r} (no space after it)")
        return word.decode("latin-1")

    def expect(self, token: str) -> None:
        """ExpectToken (which also takes ``Token>`` for ``<Token>``, as Kaldi's does)."""
        got = self.token(f"token {token}")
        if got != token and not (token.startswith("<") and got == token[1:]):
            raise self.fail(f"expected token {token}, got {got[:40]!r}")

    # -- basic types --------------------------------------------------------------------------
    def _sized(self, size_byte: int, fmt: str, what: str):
        b = self.src.read(1 + struct.calcsize(fmt))
        if len(b) < 1 + struct.calcsize(fmt):
            raise self.fail("truncated", f"expected {what} ({1 + struct.calcsize(fmt)} bytes), "
                            f"got {len(b)} bytes")
        if b[0] != size_byte:
            raise self.fail(f"bad {what}", f"expected size byte {size_byte}, got {b[0]}")
        return struct.unpack(fmt, b[1:])[0]

    def _text_word(self, what: str, kind: str) -> str:
        word = self.src.read_word(limit=64)
        if not word:
            raise self.fail("truncated", f"expected {what} ({kind}), got end of file")
        return word.decode("latin-1")

    def _text_int(self, what: str, lo: int, hi: int) -> int:
        word = self._text_word(what, "an integer")
        try:
            value = int(word)
        except ValueError:
            raise self.fail(f"bad {what}", f"expected an integer, got {word[:40]!r}") from None
        if not lo <= value < hi:
            raise self.fail(f"bad {what}", f"{value} is out of range")
        return value

    def int32(self, what: str = "an int32") -> int:
        self._begin()
        if self.binary:
            return self._sized(4, "<i", what)
        return self._text_int(what, -(1 << 31), 1 << 31)

    def uint32(self, what: str = "a uint32") -> int:
        self._begin()
        if self.binary:
            return self._sized(0xFC, "<I", what)
        return self._text_int(what, 0, 1 << 32)

    def float32(self, what: str = "a float") -> np.float32:
        """ReadBasicType<float>: binary size byte 4 (float) or 8 (double, narrowed)."""
        self._begin()
        if self.binary:
            if self.src.peek(1) == b"\x08":
                return np.float32(self._sized(8, "<d", what))
            return np.float32(self._sized(4, "<f", what))
        word = self._text_word(what, "a number")
        try:
            return np.float32(float(word))
        except ValueError:
            raise self.fail(f"bad {what}", f"expected a number, got {word[:40]!r}") from None

    def float64(self, what: str = "a double") -> float:
        """ReadBasicType<double>: binary size byte 8 (double) or 4 (float, widened)."""
        self._begin()
        if self.binary:
            if self.src.peek(1) == b"\x04":
                return float(self._sized(4, "<f", what))
            return float(self._sized(8, "<d", what))
        word = self._text_word(what, "a number")
        try:
            return float(word)
        except ValueError:
            raise self.fail(f"bad {what}", f"expected a number, got {word[:40]!r}") from None

    # -- objects ------------------------------------------------------------------------------
    def int_vector(self, what: str = "an integer vector") -> np.ndarray:
        """ReadIntegerVector<int32> (e.g. Splice's frame offsets, a topology's phones)."""
        self._begin()
        read = codec._read_ivec_bin if self.binary else codec._read_ivec_text
        return read(self.src, self._where, False)

    def vector(self, what: str = "a vector") -> np.ndarray:
        """Vector<BaseFloat>::Read: FV (DV narrowed) or text [ ... ]; float32."""
        self._begin()
        read = codec._read_vec_bin if self.binary else codec._read_vec_text
        return np.ascontiguousarray(read(self.src, self._where, False), dtype=np.float32)

    def matrix(self, what: str = "a matrix") -> np.ndarray:
        """Matrix<BaseFloat>::Read: FM (DM narrowed) or text [ rows ]; float32."""
        self._begin()
        read = codec._read_mat_bin if self.binary else codec._read_mat_text
        return np.ascontiguousarray(read(self.src, self._where, False), dtype=np.float32)


    def matrix64(self, what: str = "a double matrix") -> np.ndarray:
        """Matrix<double>::Read: DM (FM widened) or text [ rows ], float64 (text parsed as
        doubles, not narrowed through float32, so a text file reads back to what it says)."""
        self._begin()
        if self.binary:
            return np.ascontiguousarray(codec._read_mat_bin(self.src, self._where, False),
                                        dtype=np.float64)
        word = self._text_word(what, "'['")
        if word != "[":
            raise self.fail(f"bad {what}", f"expected '[', got {word[:40]!r}")
        rows: list[list[float]] = [[]]
        while True:
            self.src.skip_space()
            line = self.src.readline()
            if not line:
                raise self.fail(f"truncated {what}", "expected ']', got end of file")
            body, bracket, rest = line.partition(b"]")
            words = body.split()
            if words:
                try:
                    rows[-1].extend(float(t) for t in words)
                except ValueError:
                    raise self.fail(f"bad {what}", f"expected numbers, got {body[:40]!r}") \
                        from None
                rows.append([])
            if bracket:
                self.src.unread(rest)
                break
        rows = [r for r in rows if r]
        if rows and any(len(r) != len(rows[0]) for r in rows):
            raise self.fail(f"bad {what}", "rows of different lengths")
        return np.array(rows, dtype=np.float64).reshape(len(rows), -1)

    def boolean(self, what: str = "a bool") -> bool:
        """ReadBasicType<bool>: the character T or F (after whitespace in text mode)."""
        self._begin()
        c = self.src.read(1)
        if c not in (b"T", b"F"):
            raise self.fail(f"bad {what}", f"expected T or F, got {c!r}")
        return c == b"T"

    def sp_matrix(self, what: str = "a packed symmetric matrix") -> np.ndarray:
        """SpMatrix<BaseFloat>::Read: binary ``FP``/``DP`` then the lower triangle row by row;
        text ``[`` rows ``]`` (or the old ``FP n values``). Returns the full symmetric matrix
        in float64 (a float file's values exactly)."""
        tok = self.token(what)
        if tok in ("FP", "DP"):
            n = self.int32(f"{what}: size")
            if n < 0:
                raise self.fail(f"bad {what}", f"negative size {n}")
            count = n * (n + 1) // 2
            if self.binary:
                dt = np.dtype("<f4" if tok == "FP" else "<f8")
                raw = self.src.read(count * dt.itemsize)
                if len(raw) < count * dt.itemsize:
                    raise self.fail("truncated", f"{what}: expected {count} values")
                packed = np.frombuffer(raw, dtype=dt).astype(np.float64)
            else:
                packed = np.array([self.float32(what) for _ in range(count)], dtype=np.float64)
        elif tok == "[" or tok.startswith("["):
            values = []
            if tok != "[":
                raise self.fail(f"bad {what}", f"expected '[', got {tok[:40]!r}")
            while True:
                word = self._text_word(what, "a number or ']'")
                if word == "]":
                    break
                try:
                    values.append(float(word))
                except ValueError:
                    raise self.fail(f"bad {what}", f"expected a number, got {word[:40]!r}") from None
            n = int(round((np.sqrt(8 * len(values) + 1) - 1) / 2))
            if n * (n + 1) // 2 != len(values):
                raise self.fail(f"bad {what}", f"{len(values)} values do not fill a triangle")
            packed = np.asarray(values, dtype=np.float64)
        else:
            raise self.fail(f"bad {what}", f"expected FP, DP or '[', got {tok[:40]!r}")
        full = np.zeros((n, n), dtype=np.float64)
        rows, cols = np.tril_indices(n)
        full[rows, cols] = packed
        full[cols, rows] = packed
        return full


class TokenWriter:
    """Collects the bytes Kaldi's WriteToken/WriteBasicType/... write (no ``\\0B`` header)."""

    def __init__(self, binary: bool, name: str = "object"):
        self.binary = binary
        self._parts: list[bytes] = []
        self._where = Where(name)

    def getvalue(self) -> bytes:
        return b"".join(self._parts)

    def raw(self, data: bytes) -> None:
        self._parts.append(data)

    def newline(self) -> None:
        """Kaldi's ``if (!binary) os << "\\n"`` after many tokens."""
        if not self.binary:
            self._parts.append(b"\n")

    def token(self, tok: str) -> None:
        self._parts.append(tok.encode("latin-1") + b" ")

    def int32(self, value: int) -> None:
        value = int(value)
        self._parts.append(b"\x04" + struct.pack("<i", value) if self.binary
                           else f"{value} ".encode("ascii"))

    def uint32(self, value: int) -> None:
        value = int(value)
        self._parts.append(b"\xfc" + struct.pack("<I", value) if self.binary
                           else f"{value} ".encode("ascii"))

    def float32(self, value: float) -> None:
        self._parts.append(b"\x04" + np.float32(value).astype("<f4").tobytes() if self.binary
                           else (format_float(value) + " ").encode("ascii"))

    def float64(self, value: float) -> None:
        """WriteBasicType<double>: size byte 8 and the double; text as the float's."""
        self._parts.append(b"\x08" + struct.pack("<d", float(value)) if self.binary
                           else ("{:.7g}".format(float(value)) + " ").encode("ascii"))

    def _object(self, value: np.ndarray, kind: str) -> None:
        data = codec.encode_value(value, kind, self.binary, self._where, table=False)
        self._parts.append(data[2:] if self.binary else data)

    def int_vector(self, value: Sequence[int]) -> None:
        self._object(np.asarray(value, dtype=np.int32), "ivec")

    def vector(self, value: np.ndarray) -> None:
        self._object(np.asarray(value, dtype=np.float32), "vec")

    def matrix(self, value: np.ndarray) -> None:
        self._object(np.asarray(value, dtype=np.float32), "mat")

    def matrix64(self, value: np.ndarray) -> None:
        """Matrix<double>::Write: binary ``DM``, text as a float matrix."""
        self._object(np.asarray(value, dtype=np.float64), "mat")

    def boolean(self, value: bool) -> None:
        """WriteBasicType<bool>: ``T``/``F`` (and a space in text mode)."""
        self._parts.append((b"T" if value else b"F") + (b"" if self.binary else b" "))

    def sp_matrix(self, value: np.ndarray, double: bool = False) -> None:
        """SpMatrix::Write of a symmetric matrix (its lower triangle): ``FP`` floats, or with
        ``double`` ``DP`` doubles (SpMatrix<double>, as MlltAccs writes its G)."""
        a = np.asarray(value)
        n = int(a.shape[0])
        packed = a[np.tril_indices(n)].astype(np.float64 if double else np.float32)
        if self.binary:
            self.token("DP" if double else "FP")
            self.int32(n)
            self._parts.append(packed.astype("<f8" if double else "<f4").tobytes())
            return
        if n == 0:
            self._parts.append(b"[ ]\n")
            return
        out, i = ["[\n"], 0
        for j in range(n):
            out.append("".join(("{:.7g}".format(float(x)) if double else format_float(x)) + " "
                               for x in packed[i:i + j + 1]))
            out.append("]\n" if j == n - 1 else "\n")
            i += j + 1
        self._parts.append("".join(out).encode("ascii"))


def open_object(rxfilename: str) -> TokenReader:
    """Open an rxfilename as Kaldi's Input(rxfilename, &binary): ``\\0B`` means binary."""
    src = open_input(rxfilename)
    head = src.peek(2)
    name = src.name
    if head[:1] == b"\0":
        if head != b"\0B":
            src.close(check=False)
            raise FormatError(f"{name}: byte 0: bad binary header: expected '\\0B', got {head!r}")
        src.read(2)
        return TokenReader(src, True, name)
    return TokenReader(src, False, name)


def read_object_with(rxfilename: str, read):
    """Kaldi's ReadKaldiObject: open ``rxfilename`` (binary or text) and return ``read(reader)``
    (e.g. ``TreeStats.read``)."""
    r = open_object(rxfilename)
    try:
        return read(r)
    finally:
        r.src.close(check=False)


def add_objects(rxfilenames, acc) -> None:
    """``acc.add_from(reader)`` for each file in turn (Kaldi's Read(..., add=true) over the
    statistics files a tool sums, e.g. est-lda's and est-mllt's)."""
    for path in rxfilenames:
        r = open_object(path)
        try:
            acc.add_from(r)
        finally:
            r.src.close(check=False)


def write_object_bytes(wxfilename: str, data: bytes, binary: bool) -> None:
    """Write one object's bytes as Kaldi's Output(wxfilename, binary) (``\\0B`` first when binary),
    through a temporary name renamed into place (nnetmix.kaldi.stream.OutputSink)."""
    sink = open_output(wxfilename)
    try:
        sink.write((b"\0B" if binary else b"") + data)
    except BaseException:
        sink.abort()
        raise
    sink.commit()
