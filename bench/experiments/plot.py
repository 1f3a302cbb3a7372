# Copyright 2026 nnetmix authors. Apache 2.0.
"""The benchmarks' charts, drawn with matplotlib (the optional ``bench`` extra:
``pip install -e '.[bench]'``, which ``make bench`` installs).

:func:`line_chart` is one panel of lines, dashed lines and reported points, with error bars where
a series knows its spread; :func:`new_figure` gives bench/allreduce.py a figure for its own
panels and :func:`save` writes one through a temporary name. Figures are
``matplotlib.figure.Figure`` objects (no pyplot state, no display needed). Without matplotlib
nothing is drawn: :func:`new_figure` says so in one line on stderr and returns None, so a
benchmark's tables are still written.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

__all__ = ["Series", "line_chart", "bar_chart", "new_figure", "save", "PALETTE",
           "have_matplotlib"]

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#5a5a5a", "#17becf"]
"""matplotlib's tab10 less its grey (kept for references)."""


@dataclasses.dataclass
class Series:
    name: str
    xs: Sequence[float]
    ys: Sequence[Optional[float]]
    color: str = "black"
    kind: str = "line"        #: line | dashed | points (markers only)
    yerr: Optional[Sequence[tuple[float, float]]] = None
    """(below, above) the y value per point (a spread, e.g. quartiles), or None."""


def have_matplotlib() -> bool:
    """Whether the optional matplotlib is installed (tests of the plots skip without it)."""
    return importlib.util.find_spec("matplotlib") is not None


def new_figure(path: Path, **kwargs):
    """A ``matplotlib.figure.Figure(**kwargs)``, or None (with a note naming ``path``) when
    matplotlib is not installed."""
    try:  # imported here: matplotlib is an optional dependency (the bench extra)
        from matplotlib.figure import Figure
    except ImportError:
        sys.stderr.write(f"bench: matplotlib is not installed (pip install -e '.[bench]'), "
                         f"{path} not drawn\n")
        return None
    return Figure(**kwargs)


def save(fig, path: Path) -> None:
    """Write ``fig`` as a PNG through a temporary name renamed into place."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    os.replace(tmp, path)


def line_chart(path: Path, series: Sequence[Series], title: str, xlabel: str, ylabel: str,
               xlog2: bool = True, ymax: float | None = None, ylog2: bool = False) -> None:
    """One panel: x on a log2 axis (workers) or linear, y linear from 0 (or log2 from 1, for
    speedups: linear scaling is then a straight line), the legend beside the panel."""
    if not any(y is not None for s in series for y in s.ys):
        return
    fig = new_figure(path, figsize=(7.5, 4.5))
    if fig is None:
        return
    ax = fig.subplots()
    for s in series:
        pts = [(x, y, e) for x, y, e in zip(s.xs, s.ys, s.yerr or [None] * len(s.xs))
               if y is not None]
        if not pts:
            continue
        xs, ys, errs = zip(*pts)
        style = {"line": "-", "dashed": "--", "points": "none"}[s.kind]
        marker = "o" if s.kind != "dashed" else None
        yerr = None
        if s.yerr is not None:
            yerr = [[e[0] if e else 0.0 for e in errs], [e[1] if e else 0.0 for e in errs]]
        ax.errorbar(xs, ys, yerr=yerr, color=s.color, linestyle=style, marker=marker,
                    markersize=7 if s.kind == "points" else 4, capsize=3, label=s.name)
    xs_all = sorted({x for s in series for x in s.xs})
    if xlog2:
        ax.set_xscale("log", base=2)
    ax.set_xticks(xs_all, [f"{x:g}" for x in xs_all])
    if ylog2:
        ax.set_yscale("log", base=2)
        top = ymax or max(y for s in series for y in s.ys if y is not None) * 1.08
        ax.set_ylim(1, top)
        ticks = [2.0 ** k for k in range(0, int(top).bit_length())]
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    else:
        ax.set_ylim(0, ymax or max(y for s in series for y in s.ys if y is not None) * 1.08)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", color="0.9")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False)
    save(fig, path)


def bar_chart(path: Path, labels: Sequence[str], series: Sequence[Series], title: str,
              ylabel: str, notes: Optional[Sequence[str]] = None, ylog: bool = False) -> None:
    """Grouped bars: one group per label, one bar per series (its ``ys`` in label order, None
    for a missing bar); ``notes`` is written above each group (e.g. a ratio); ``ylog`` for
    values that span orders of magnitude (a small and a large network side by side)."""
    if not labels or not any(y is not None for s in series for y in s.ys):
        return
    fig = new_figure(path, figsize=(max(6.0, 1.3 * len(labels) + 3.0), 4.5))
    if fig is None:
        return
    ax = fig.subplots()
    width = 0.8 / max(1, len(series))
    for i, s in enumerate(series):
        xs = [k + (i - (len(series) - 1) / 2) * width for k in range(len(labels))]
        pts = [(x, y) for x, y in zip(xs, s.ys) if y is not None]
        if pts:
            ax.bar([x for x, _ in pts], [y for _, y in pts], width, color=s.color, label=s.name)
    values = [y for s in series for y in s.ys if y is not None]
    top = max(values)
    if ylog:
        ax.set_yscale("log")
    for k, note in enumerate(notes or []):
        if note:
            ax.text(k, top * (1.5 if ylog else 1.04), note, ha="center", va="bottom",
                    fontsize="small")
    ax.set_ylim(min(values) / 2 if ylog else 0, top * (4.0 if ylog else 1.15))
    ax.set_xticks(range(len(labels)), labels, fontsize="small")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", color="0.9")
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False)
    save(fig, path)
