# Copyright 2026 nnetmix authors. Apache 2.0.
"""Line charts as PNG files with no plotting library: matplotlib is not among nnetmix's pinned
dependencies, and bench/allreduce.py already draws with numpy + zlib (its 3x5 pixel font, line
and PNG writer, reused here). Text is lower case; letters, digits and ``- . = ( ) / :`` only."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Sequence

import numpy as np

from bench.allreduce import _line, _text, _write_png

__all__ = ["Series", "line_chart", "PALETTE"]

PALETTE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (90, 90, 90), (23, 190, 207)]


@dataclasses.dataclass
class Series:
    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    color: tuple = (0, 0, 0)
    kind: str = "line"        #: line | dashed | points (markers only)


def _dashed(img, x0, y0, x1, y1, color) -> None:
    n = max(2, int(math.hypot(x1 - x0, y1 - y0) // 6))
    for i in range(0, n, 2):
        a, b = i / n, min(1.0, (i + 1) / n)
        _line(img, x0 + a * (x1 - x0), y0 + a * (y1 - y0), x0 + b * (x1 - x0),
              y0 + b * (y1 - y0), color, 2)


def line_chart(path: Path, series: Sequence[Series], title: str, xlabel: str, ylabel: str,
               xlog2: bool = True, ymax: float | None = None, ylog2: bool = False) -> None:
    """One panel: x on a log2 axis (workers) or linear, y linear from 0 (or log2 from 1, for
    speedups: linear scaling is then a straight line), a legend on the right."""
    w, h, ml, mr, mt, mb, legend_w = 520, 380, 50, 14, 30, 40, 330
    img = np.full((h, w + legend_w, 3), 255, dtype=np.uint8)
    xs = [x for s in series for x in s.xs]
    ys = [y for s in series for y in s.ys if y is not None]
    if not xs or not ys:
        return
    fx = (lambda x: math.log2(x)) if xlog2 else (lambda x: x)   # noqa: E731
    x0, x1 = fx(min(xs)), fx(max(xs))
    x1 = x1 if x1 > x0 else x0 + 1
    top = ymax if ymax else max(ys) * 1.08
    X = lambda x: ml + (fx(x) - x0) / (x1 - x0) * (w - ml - mr)   # noqa: E731
    if ylog2:
        lt = math.log2(top)
        Y = lambda y: mt + (1 - math.log2(max(y, 1.0)) / lt) * (h - mt - mb)   # noqa: E731
    else:
        Y = lambda y: mt + (1 - y / top) * (h - mt - mb)          # noqa: E731
    ticks = sorted(set(xs))
    for t in ticks:
        px = int(X(t))
        img[mt:h - mb, px] = (228, 228, 228)
        _text(img, px - 4, h - mb + 6, f"{t:g}")
    if ylog2:
        yticks = [2.0 ** k for k in range(0, int(math.log2(top)) + 1)]
    else:
        step = 10 ** math.floor(math.log10(top / 2)) if top > 0 else 1
        step = step * 2 if top / step > 8 else step
        yticks = [i * step for i in range(int(top // step) + 1)]
    for v in yticks:
        py = int(Y(v))
        img[py, ml:w - mr] = (228, 228, 228)
        _text(img, 4, py - 5, f"{v:g}")
    img[mt:h - mb, ml] = 0
    img[h - mb, ml:w - mr] = 0
    _text(img, ml, 6, title)
    _text(img, w - mr - 8 * len(xlabel), h - 14, xlabel)
    _text(img, w + 8, h - 14, "y: " + ylabel)
    for i, s in enumerate(series):
        pts = [(X(x), Y(y)) for x, y in zip(s.xs, s.ys) if y is not None]
        if s.kind in ("line", "dashed"):
            for (ax, ay), (bx, by) in zip(pts, pts[1:]):
                (_dashed if s.kind == "dashed" else _line)(img, ax, ay, bx, by, s.color)
        for px, py in pts:
            r = 4 if s.kind == "points" else 2
            img[max(int(py) - r, 0):int(py) + r + 1, max(int(px) - r, 0):int(px) + r + 1] = s.color
        ly = mt + 8 + i * 18
        if s.kind == "dashed":
            for k in range(0, 18, 6):
                img[ly:ly + 4, w + 8 + k:w + 11 + k] = s.color
        elif s.kind == "points":
            img[ly - 2:ly + 6, w + 13:w + 21] = s.color
        else:
            img[ly:ly + 4, w + 8:w + 26] = s.color
        _text(img, w + 32, ly - 3, s.name)
    _write_png(Path(path), img)
