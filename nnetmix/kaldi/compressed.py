"""Decoding Kaldi compressed matrices (``CM``, ``CM2``, ``CM3``) to float32.

Layout (src/matrix/compressed-matrix.{h,cc}): after the token comes the GlobalHeader without
its ``format`` field: float32 ``min_value``, float32 ``range``, int32 ``num_rows``, int32
``num_cols`` (16 bytes). Then

* ``CM`` (kOneByteWithColHeaders, what ``copy-feats --compress=true`` writes): one PerColHeader
  per column, four uint16 percentiles p0, p25, p75, p100 each meaning
  ``min + range * (1/65535) * u``, then one byte per value stored COLUMN by column; byte ``b``
  maps piecewise-linearly: [0, 64] onto [p0, p25], [64, 192] onto [p25, p75], [192, 255] onto
  [p75, p100].
* ``CM2`` (kTwoByte): uint16 per value, row by row, ``min + u * (range/65535)``.
* ``CM3`` (kOneByte): uint8 per value, row by row, ``min + u * (range/255)``.

The arithmetic follows Kaldi's float/double mix (Uint16ToFloat, CharToFloat, CopyToMat) so the
result is the float32 Kaldi's own ``copy-feats`` would print. Written here, not delegated to
kaldiio's ``compression_header``: its reader asserts on bad input and cannot tell a truncated
file from a good one, and kaldiio serves as the independent reference in the tests.
"""
from __future__ import annotations

import math
import struct
from typing import Callable

import numpy as np

from nnetmix.errors import FormatError

__all__ = ["COMPRESSED_TOKENS", "read_compressed"]

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
