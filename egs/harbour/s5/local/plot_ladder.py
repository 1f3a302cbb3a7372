#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The harbour ladder as a chart: each system's WER with its 95% bootstrap interval, one marker
per decoding condition, systems in training order (mono, tri1, tri2, tri3, the DNNs).

Read from RESULTS.md's table of the run in exp/ (the rows ``local/make_results.py`` writes from
exp/, so the chart never holds a number RESULTS.md does not): ``local/make_results.py --plot
FILE`` draws it as it writes RESULTS.md, and this script draws it from a RESULTS.md already
written. The WER axis is logarithmic, as the ladder spans an order of magnitude. Drawn with
matplotlib (the ``bench`` extra, ``pip install -e '.[bench]'``); without it one line says so.

Usage: ``local/plot_ladder.py [--results RESULTS.md] [--out ../../../docs/img/harbour_ladder.png]``
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import dataclasses
import os
import re
from pathlib import Path

from nnetmix.errors import DataDirError

from local_script import run_script, script_parser

__all__ = ["Point", "ladder", "draw"]

#: a row of RESULTS.md's system table: system (its exp/ directory in backticks), grammar (its
#: run.sh --lms name in backticks), then "WER [low, high] (errors/words)"
_ROW = re.compile(r"^\| (?P<what>[^|]*?`(?P<sys>[^`]+)`[^|]*) \| [^|]*\(`(?P<lm>[^`]+)`\) \| "
                  r"(?P<wer>[\d.]+) \[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\] \(\d+/\d+\) \|")
#: the markers of the decoding conditions (make_results.LMS's names)
_STYLE = {"wp": ("o", "#1f77b4", "word-pair grammar (wp)"), "tg": ("s", "#ff7f0e", "trigram (tg)")}


@dataclasses.dataclass(frozen=True)
class Point:
    system: str      #: the exp/ directory (mono, tri3, dnn_fmllr_rbm_w2, ...)
    lm: str          #: the decoding condition (wp, tg)
    wer: float
    low: float       #: the 95% bootstrap interval
    high: float


def ladder(lines: list[str]) -> list[Point]:
    """The system table's rows of RESULTS.md (its section on the run in exp/), in order."""
    section = False
    out = []
    for line in lines:
        if line.startswith("## "):
            section = line.startswith("## The run in exp/")
        m = _ROW.match(line) if section else None
        if m:
            out.append(Point(m["sys"], m["lm"], float(m["wer"]), float(m["lo"]), float(m["hi"])))
    return out


def draw(points: list[Point], out: Path, title: str = "harbour: WER of each system") -> bool:
    """Draw the chart into ``out`` (through a temporary name); False without matplotlib."""
    try:  # matplotlib is optional (the bench extra)
        from matplotlib.figure import Figure
    except ImportError:
        print(f"plot_ladder.py: matplotlib is not installed (pip install -e '.[bench]'), "
              f"{out} not drawn")
        return False
    systems = list(dict.fromkeys(p.system for p in points))
    fig = Figure(figsize=(max(6.0, 1.1 * len(systems) + 2.5), 4.2))
    ax = fig.subplots()
    lms = list(dict.fromkeys(p.lm for p in points))
    for i, lm in enumerate(lms):
        marker, color, label = _STYLE.get(lm, ("^", "#2ca02c", lm))
        pts = [p for p in points if p.lm == lm]
        xs = [systems.index(p.system) + (i - (len(lms) - 1) / 2) * 0.15 for p in pts]
        ax.errorbar(xs, [p.wer for p in pts],
                    yerr=[[p.wer - p.low for p in pts], [p.high - p.wer for p in pts]],
                    color=color, marker=marker, linestyle="none", capsize=3, label=label)
    ax.set_yscale("log")
    ticks = [t for t in (0.5, 1, 2, 5, 10, 20, 50, 100)
             if min(p.low for p in points) / 2 <= t <= max(p.high for p in points) * 2]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xticks(range(len(systems)), [s.replace("_", "_\n", 1) if len(s) > 8 else s
                                        for s in systems], fontsize="small")
    ax.set_ylabel("WER (%), 95% bootstrap interval")
    ax.set_title(title)
    ax.grid(True, axis="y", which="major", color="0.9")
    ax.legend(loc="upper right", fontsize="small", frameon=False)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    os.replace(tmp, out)
    return True


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--results", default="RESULTS.md", help="the RESULTS.md to read")
    p.add_argument("--out", default="../../../docs/img/harbour_ladder.png",
                   help="the PNG to write (default: the docs' copy)")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    f = Path(args.results)
    if not f.is_file():
        raise DataDirError(f"no such file {f} (run local/make_results.py first)")
    points = ladder(f.read_text().splitlines())
    if not points:
        raise DataDirError(f"{f}: no system rows with intervals under \"## The run in exp/\" "
                           f"(not written by local/make_results.py?)")
    if draw(points, Path(args.out)):
        print(f"{args.prog}: wrote {args.out} ({len(points)} WERs of "
              f"{len({p.system for p in points})} systems)")


if __name__ == "__main__":
    run_script(get_args(), main)
