"""Kaldi compressed matrices (``CM``, ``CM2``, ``CM3``): reading to float32 and writing them
byte for byte as Kaldi's CompressedMatrix (src/matrix/compressed-matrix.{h,cc}).

Layout: after the token comes the GlobalHeader without its ``format`` field: float32
``min_value``, float32 ``range``, int32 ``num_rows``, int32 ``num_cols`` (16 raw bytes). Then

* ``CM`` (kOneByteWithColHeaders, what ``copy-feats --compress=true`` writes): one PerColHeader
  per column, four uint16 percentiles p0, p25, p75, p100 each meaning
  ``min + range * (1/65535) * u``, then one byte per value stored COLUMN by column; byte ``b``
  maps piecewise-linearly: [0, 64] onto [p0, p25], [64, 192] onto [p25, p75], [192, 255] onto
  [p75, p100].
* ``CM2`` (kTwoByte): uint16 per value, row by row, ``min + u * (range/65535)``.
* ``CM3`` (kOneByte): uint8 per value, row by row, ``min + u * (range/255)``.

Reading follows Kaldi's float/double mix (Uint16ToFloat, CharToFloat, CopyToMat) so the result
is the float32 Kaldi's own ``copy-feats`` would print; its reader is ours rather than kaldiio's
``compression_header``, which asserts on bad input and cannot tell a truncated file from a good
one (kaldiio is the independent reference in the tests).

Writing (:func:`compress_matrix`) takes Kaldi's seven CompressionMethods (:data:`METHODS`):
1 kAutomaticMethod (2 when the matrix has more than 8 rows, else 3), 2 kSpeechFeature (``CM``),
3 kTwoByteAuto and 4 kTwoByteSignedInteger (``CM2``), 5 kOneByteAuto, 6
kOneByteUnsignedInteger and 7 kOneByteZeroOne (``CM3``). The rules are ComputeGlobalHeader's
(the auto methods span the matrix's min to max, a constant matrix widened to ``min + 1 +
|min|``; 4, 6 and 7 fix [-32768, 32767], [0, 255] and [0, 1]), ComputeColHeader's (p0, p25,
p75, p100 are the sorted column's elements 0, n/4, 3n/4 and n-1, or its first four when n < 5,
kept strictly increasing and below 65533..65535), and FloatToUint16 / FloatToUint8 /
FloatToChar's rounding: a float32 quotient clipped to [0, 1] (Kaldi's float arithmetic), times
the top code in float, plus 0.499 (0.5 in FloatToChar) in double, truncated; a FloatToChar
quotient that is not finite (two percentiles equal as floats) truncates to INT_MIN, as
x86-64's conversion does, and so to the bottom of its range. Checked byte for byte against the
archive Kaldi's ``copy-feats --compress=true`` wrote (tests/kaldi/test_kaldi_compressed.py).

The writer is ours, vectorised over the matrix, because no maintained Python library writes
these exactly: kaldiio 2.18.1 writes all three formats (and matches Kaldi on the fixture) but
rounds in float32 where Kaldi adds in double (about 1 in 10 random matrices differs in some
byte), computes float64 input in float64, does not clip the fixed-range methods (300 under
method 6 wraps to 44 where Kaldi writes 255), writes byte 0 where a column's percentiles
coincide as floats (Kaldi: the bottom of the upper range, 192), takes NaN silently and cannot
write an empty matrix. Our writer refuses NaN and infinite values for every method
(Kaldi asserts for the auto ranges and maps NaN to code 0 under 4, 6 and 7). An empty matrix is
written as ``CM`` with a zero header of 16 bytes, which Kaldi's reader (and ours) reads back as
empty; Kaldi's own writer puts 20 bytes there (the whole GlobalHeader, format included), which
its reader leaves 4 bytes short of.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from nnetmix.errors import FormatError

__all__ = ["COMPRESSED_TOKENS", "METHODS", "Compressed", "compress_matrix", "decompress",
           "read_compressed"]

COMPRESSED_TOKENS = ("CM", "CM2", "CM3")
_U16_SCALE = np.float32(1.52590218966964e-05)  # 1/65535 as the float literal in Uint16ToFloat


def _uint16_to_float(min_value: np.float32, range_: np.float32, u: np.ndarray) -> np.ndarray:
    return min_value + (range_ * _U16_SCALE) * u.astype(np.float32)


def _char_to_float(p0, p25, p75, p100, b: np.ndarray) -> np.ndarray:
    """Kaldi's CharToFloat: float products, then a double multiply and add, rounded to float."""
    v = b.astype(np.float32)
    low = (p0.astype(np.float64)
           + ((p25 - p0) * v).astype(np.float64) * (1 / 64.0))
    mid = (p25.astype(np.float64)
           + ((p75 - p25) * (v - np.float32(64))).astype(np.float64) * (1 / 128.0))
    high = (p75.astype(np.float64)
            + ((p100 - p75) * (v - np.float32(192))).astype(np.float64) * (1 / 63.0))
    out = np.where(b <= 64, low, np.where(b <= 192, mid, high))
    return out.astype(np.float32)


def read_compressed(token: str, need: Callable[[int, str], bytes],
                    fail: Callable[[str, str], FormatError]) -> np.ndarray:
    """Read the body of a compressed matrix whose token was ``token``.

    ``need(n, what)`` returns exactly n bytes or raises the truncation error; ``fail(problem,
    detail)`` builds the FormatError naming the file and key.
    """
    min_value, range_, rows, cols = struct.unpack("<ffii", need(16, f"{token} header"))
    if rows < 0 or cols < 0:
        raise fail(f"bad {token} header", f"expected non-negative sizes, got {rows}x{cols}")
    if not (math.isfinite(min_value) and math.isfinite(range_) and range_ >= 0):
        raise fail(f"bad {token} header", f"expected a finite minimum and a finite range >= 0, "
                   f"got min {min_value} and range {range_}")
    if cols == 0:  # Kaldi's empty compressed matrix
        return np.zeros((0, 0), dtype=np.float32)
    mn, rg = np.float32(min_value), np.float32(range_)
    if token == "CM":
        heads = np.frombuffer(need(8 * cols, "CM column headers"), dtype="<u2").reshape(cols, 4)
        pct = _uint16_to_float(mn, rg, heads)  # cols x 4
        data = np.frombuffer(need(rows * cols, f"CM data ({rows}x{cols})"), dtype=np.uint8)
        data = data.reshape(cols, rows)
        p = [pct[:, i:i + 1] for i in range(4)]
        return np.ascontiguousarray(_char_to_float(*p, data).T)
    if token == "CM2":
        data = np.frombuffer(need(2 * rows * cols, f"CM2 data ({rows}x{cols})"), dtype="<u2")
        increment = np.float32(np.float64(rg) * (1.0 / 65535.0))
    else:
        data = np.frombuffer(need(rows * cols, f"CM3 data ({rows}x{cols})"), dtype=np.uint8)
        increment = np.float32(np.float64(rg) * (1.0 / 255.0))
    return (mn + data.astype(np.float32) * increment).reshape(rows, cols)


# -- writing ----------------------------------------------------------------------------------
#: Kaldi's CompressionMethod enum (compressed-matrix.h), value -> name.
METHODS = {1: "kAutomaticMethod", 2: "kSpeechFeature", 3: "kTwoByteAuto",
           4: "kTwoByteSignedInteger", 5: "kOneByteAuto", 6: "kOneByteUnsignedInteger",
           7: "kOneByteZeroOne"}
_TOKEN = {2: "CM", 3: "CM2", 4: "CM2", 5: "CM3", 6: "CM3", 7: "CM3"}
_FIXED_RANGE = {4: (-32768.0, 65535.0), 6: (0.0, 255.0), 7: (0.0, 1.0)}  # (min_value, range)
_INT_MIN = -(1 << 31)


@dataclass(frozen=True)
class Compressed:
    """A matrix to be written compressed with Kaldi's CompressionMethod ``method`` (1-7): what
    Kaldi's CompressedMatrixWriter is given. Table writers of kind ``mat`` take it; a text table
    gets the matrix as decompressed, as Kaldi writes a CompressedMatrix in text mode."""

    matrix: np.ndarray
    method: int = 1


def _fail(problem: str, detail: str = "") -> FormatError:
    return FormatError(f"{problem}: {detail}" if detail else problem)


def _to_uint(values: np.ndarray, min_value: np.float32, range_: np.float32, top: int) -> np.ndarray:
    """FloatToUint16 (top 65535) and FloatToUint8 (top 255), as int64 codes."""
    with np.errstate(over="ignore"):
        f = np.clip((values - min_value) / range_, np.float32(0), np.float32(1))
    return ((f * np.float32(top)).astype(np.float64) + 0.499).astype(np.int64)


def _x86_int(x: np.ndarray) -> np.ndarray:
    """static_cast<int>(double): truncation, INT_MIN when out of int32 range or NaN (cvttsd2si)."""
    ok = (x > -2147483649.0) & (x < 2147483648.0)
    return np.where(ok, np.trunc(np.where(ok, x, 0.0)), _INT_MIN).astype(np.int64)


def _float_to_char(p0, p25, p75, p100, v: np.ndarray) -> np.ndarray:
    """FloatToChar for every value of v (rows x cols) against its column's percentiles."""
    def piece(lo, hi, steps, base):
        f = (v - lo) / (hi - lo) * np.float32(steps)
        return np.clip(base + _x86_int(f.astype(np.float64) + 0.5), base, base + steps)

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        low, mid, high = piece(p0, p25, 64, 0), piece(p25, p75, 128, 64), piece(p75, p100, 63, 192)
    return np.where(v < p25, low, np.where(v < p75, mid, high)).astype(np.uint8)


def _col_headers(m: np.ndarray, min_value: np.float32, range_: np.float32) -> np.ndarray:
    """ComputeColHeader for every column: (cols, 4) uint16 codes p0, p25, p75, p100."""
    n = m.shape[0]
    if n >= 5:
        q = n // 4
        picks = [0, q, 3 * q, n - 1]
        rows = np.partition(m, picks, axis=0)[picks]
    else:  # the first sorted elements; a missing one acts as code 0 (the previous code + 1)
        rows = np.sort(m, axis=0)
    codes = np.zeros((4, m.shape[1]), dtype=np.int64)
    codes[:rows.shape[0]] = _to_uint(rows, min_value, range_, 65535)
    p0 = np.minimum(codes[0], 65532)
    p25 = np.minimum(np.maximum(codes[1], p0 + 1), 65533)
    p75 = np.minimum(np.maximum(codes[2], p25 + 1), 65534)
    p100 = np.maximum(codes[3], p75 + 1)
    return np.stack([p0, p25, p75, p100], axis=1).astype("<u2")


def _global_range(m: np.ndarray, method: int, fail) -> tuple[np.float32, np.float32]:
    """ComputeGlobalHeader's min_value and range."""
    if method in _FIXED_RANGE:
        lo, span = _FIXED_RANGE[method]
        return np.float32(lo), np.float32(span)
    lo, hi = m.min(), m.max()
    if hi == lo:  # a constant matrix: Kaldi widens the range (in double, then to float)
        hi = np.float32(np.float64(lo) + (1.0 + abs(np.float64(lo))))
    with np.errstate(over="ignore"):
        span = np.float32(hi - lo)
    if not (np.isfinite(hi) and np.isfinite(span)):
        raise fail("cannot compress matrix", f"its values span {float(lo):g} to {float(hi):g}, "
                   "more than a float32 range holds")
    return lo, span


def compress_matrix(matrix: np.ndarray, method: int = 1,
                    fail: Optional[Callable[[str, str], FormatError]] = None) -> bytes:
    """The bytes Kaldi's CompressedMatrix::Write puts after ``\\0B``: token, header, data.

    ``matrix`` is 2-D (float64 is taken as float32, as Kaldi's float conversions do); ``fail``
    builds the error naming the file and key (a bare FormatError without it).
    """
    fail = fail or _fail
    if method not in METHODS:
        raise fail("bad compression method", f"expected 1 through 7, got {method}")
    with np.errstate(over="ignore"):
        m = np.ascontiguousarray(matrix, dtype=np.float32)
    if m.ndim != 2:
        raise fail("cannot compress matrix", f"expected a 2-D array, got shape {m.shape}")
    rows, cols = m.shape
    if rows == 0 or cols == 0:
        return b"CM " + struct.pack("<ffii", 0.0, 0.0, 0, 0)
    bad = ~np.isfinite(m)
    if bad.any():
        r, c = (int(i) for i in np.argwhere(bad)[0])
        raise fail("cannot compress matrix", f"value {float(m[r, c])} at row {r}, column {c} "
                   "(compressed matrices hold finite values only)")
    if method == 1:
        method = 2 if rows > 8 else 3
    min_value, range_ = _global_range(m, method, fail)
    token = _TOKEN[method]
    head = token.encode() + b" " + struct.pack("<ffii", min_value, range_, rows, cols)
    if token == "CM2":
        return head + _to_uint(m, min_value, range_, 65535).astype("<u2").tobytes()
    if token == "CM3":
        return head + _to_uint(m, min_value, range_, 255).astype(np.uint8).tobytes()
    heads = _col_headers(m, min_value, range_)
    pct = _uint16_to_float(min_value, range_, heads)  # cols x 4
    data = _float_to_char(pct[:, 0], pct[:, 1], pct[:, 2], pct[:, 3], m)
    return head + heads.tobytes() + np.ascontiguousarray(data.T).tobytes()


def decompress(blob: bytes) -> np.ndarray:
    """The float32 matrix a :func:`compress_matrix` result reads back as."""
    token, _, rest = blob.partition(b" ")
    pos = 0

    def need(n: int, what: str) -> bytes:
        nonlocal pos
        if pos + n > len(rest):
            raise _fail(f"truncated {what}", f"expected {n} bytes, got {len(rest) - pos}")
        pos += n
        return rest[pos - n:pos]

    return read_compressed(token.decode("latin-1"), need, _fail)
