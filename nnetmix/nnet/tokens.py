"""Kaldi's token-level I/O (src/base/io-funcs.cc) as the nnet1 model format uses it.

A token is written as ``<Token> `` (a space after it, binary or text). An int32 is written as
``WriteBasicType``: binary a size byte 4 then 4 little-endian bytes, text ``123 ``; a float the
same with a float32 (text printed with 7 significant digits, as Kaldi's text streams). Matrices,
vectors and integer vectors are the objects of :mod:`nnetmix.kaldi.codec`, minus the ``\\0B``
header (that is written once, at the start of the file).

:class:`TokenReader` raises :class:`~nnetmix.errors.FormatError` naming the file, the byte offset
where the bad item starts, the component being read and what was expected.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi import codec
from nnetmix.kaldi.codec import Where
from nnetmix.kaldi.stream import InputStream

__all__ = ["TokenReader", "TokenWriter", "format_float"]

_WS = b" \t\n\r\v\f"


def format_float(x: float) -> str:
    """A float32 as C++ ``os << f`` prints it at precision 7 (Kaldi's text streams)."""
    return "{:.7g}".format(float(np.float32(x)))


class _At(Where):
    """A codec ``Where`` that adds the byte offset and the component being read."""

    def __init__(self, reader: "TokenReader"):
        super().__init__(reader.name)
        self.reader = reader

    def fail(self, problem: str, detail: str = "") -> FormatError:
        return self.reader.fail(problem, detail)


class TokenReader:
    """Reads tokens, int32s, floats, matrices and vectors from a binary or text Kaldi stream."""

    def __init__(self, src: InputStream, binary: bool, name: str):
        self.src = src
        self.binary = binary
        self.name = name
        self.context = ""       #: e.g. "component 3 <AffineTransform>", for error messages
        self.start = src.pos    #: where the item being read starts
        self._where = _At(self)

    def fail(self, problem: str, detail: str = "") -> FormatError:
        ctx = f" in {self.context}" if self.context else ""
        msg = f"{self.name}: byte {self.start}{ctx}: {problem}"
        return FormatError(msg + (f": {detail}" if detail else ""))

    def _begin(self) -> None:
        self.src.skip_space()
        self.start = self.src.pos

    # -- peeking ------------------------------------------------------------------------------
    def peek_char(self) -> bytes:
        """The next non-space byte (not consumed); b'' at end of file."""
        self._begin()
        return self.src.peek(1)

    def peek_token(self) -> Optional[str]:
        """The next word (not consumed), or None at end of file."""
        self._begin()
        word = self.src.read_word(limit=64)
        self.src.unread(word)
        return word.decode("latin-1") if word else None

    # -- scalars ------------------------------------------------------------------------------
    def token(self, expected: str = "a token") -> str:
        self._begin()
        word = self.src.read_word(limit=256)
        if not word:
            raise self.fail("truncated model", f"expected {expected}, got end of file")
        after = self.src.read(1)
        if after and after not in _WS:
            raise self.fail("bad token", f"expected {expected}, got {(word + after)[:40]!r}")
        return word.decode("latin-1")

    def expect(self, token: str) -> None:
        got = self.token(token)
        if got != token:
            raise self.fail("bad token", f"expected {token}, got '{got[:40]}'")

    def int32(self, what: str) -> int:
        self._begin()
        if self.binary:
            return codec._read_int32(self.src, self._where, what)
        word = self.src.read_word(limit=64)
        if not word:
            raise self.fail("truncated model", f"expected {what} (an integer), got end of file")
        try:
            value = int(word)
        except ValueError:
            raise self.fail(f"bad {what}", f"expected an integer, got '{word[:40].decode('latin-1')}'") from None
        if not -(1 << 31) <= value < (1 << 31):
            raise self.fail(f"bad {what}", f"{value} does not fit in an int32")
        return value

    def float32(self, what: str) -> np.float32:
        self._begin()
        if self.binary:
            head = self.src.read(1)
            if not head:
                raise self.fail("truncated model", f"expected {what} (a float), got end of file")
            size = head[0]
            if size not in (4, 8):
                raise self.fail(f"bad {what}", f"expected a float (size byte 4 or 8), got size byte {size}")
            data = self.src.read(size)
            if len(data) != size:
                raise self.fail("truncated model", f"expected {what}, got end of file")
            return np.float32(np.frombuffer(data, dtype="<f4" if size == 4 else "<f8")[0])
        word = self.src.read_word(limit=64)
        if not word:
            raise self.fail("truncated model", f"expected {what} (a float), got end of file")
        try:
            return np.float32(float(word))
        except ValueError:
            raise self.fail(f"bad {what}", f"expected a number, got '{word[:40].decode('latin-1')}'") from None

    # -- objects ------------------------------------------------------------------------------
    def matrix(self, what: str) -> np.ndarray:
        self._begin()
        read = codec._read_mat_bin if self.binary else codec._read_mat_text
        return np.ascontiguousarray(read(self.src, self._where, False), dtype=np.float32)

    def vector(self, what: str) -> np.ndarray:
        self._begin()
        read = codec._read_vec_bin if self.binary else codec._read_vec_text
        return np.ascontiguousarray(read(self.src, self._where, False), dtype=np.float32)

    def int_vector(self, what: str) -> np.ndarray:
        """Kaldi's ReadIntegerVector (a CuArray<int32> such as Splice's frame offsets)."""
        self._begin()
        read = codec._read_ivec_bin if self.binary else codec._read_ivec_text
        return read(self.src, self._where, False)


class TokenWriter:
    """Collects the bytes Kaldi writes for tokens, numbers and objects (no ``\\0B`` header)."""

    def __init__(self, binary: bool, name: str = "nnet"):
        self.binary = binary
        self._parts: list[bytes] = []
        self._where = Where(name)

    def getvalue(self) -> bytes:
        return b"".join(self._parts)

    def token(self, tok: str) -> None:
        self._parts.append(tok.encode("latin-1") + b" ")

    def newline(self) -> None:
        """Kaldi's ``if (!binary) os << "\\n"``."""
        if not self.binary:
            self._parts.append(b"\n")

    def int32(self, value: int) -> None:
        if self.binary:
            self._parts.append(b"\x04" + int(value).to_bytes(4, "little", signed=True))
        else:
            self._parts.append(f"{int(value)} ".encode("ascii"))

    def float32(self, value: float) -> None:
        if self.binary:
            self._parts.append(b"\x04" + np.float32(value).astype("<f4").tobytes())
        else:
            self._parts.append((format_float(value) + " ").encode("ascii"))

    def _object(self, value: np.ndarray, kind: str) -> None:
        data = codec.encode_value(value, kind, self.binary, self._where, table=False)
        self._parts.append(data[2:] if self.binary else data)

    def matrix(self, value: np.ndarray) -> None:
        self._object(np.asarray(value, dtype=np.float32), "mat")

    def vector(self, value: np.ndarray) -> None:
        self._object(np.asarray(value, dtype=np.float32), "vec")

    def int_vector(self, value: np.ndarray) -> None:
        self._object(np.asarray(value, dtype=np.int32), "ivec")
