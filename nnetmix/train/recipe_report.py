# Copyright 2026 nnetmix authors. Apache 2.0.
"""What the recipes' RESULTS.md writers (egs/*/s5/local/make_results.py) read from ``exp/``.

A recipe's run.sh leaves, per stage, ``<dir>/stage_seconds/N`` (the wall seconds, then the load
average at the stage's end when the recipe records it) and, per decoding, local/score.sh's
``wer_LMWT_WIP`` files. This module turns them into table cells: the best WER line, a WER with
its bootstrap confidence interval and a system-against-system comparison (both through
:func:`nnetmix.score.compare.compare_decode_dirs`, bin/compare-wer.py's library, so RESULTS.md
says what ``compare-wer.py --decode-dirs=true`` says), the stage times and the machine line.
Nothing is typed by hand: each number comes from a file run.sh wrote.
"""
from __future__ import annotations

import datetime
import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from nnetmix.score.compare import CompareOptions, Comparison, compare_decode_dirs
from nnetmix.train.runlog import best_wer

__all__ = ["StageTime", "stage_seconds", "best_wer_line", "WerCi", "wer_ci", "compare_systems",
           "comparison_cells", "machine_description", "machine_line"]


@dataclass
class StageTime:
    """One stage's wall time, the 1-minute load average at its end and its CPU seconds (user +
    system, every process of the stage) when recorded."""

    seconds: int
    load: Optional[float] = None
    cpu: Optional[int] = None


def stage_seconds(d: str | os.PathLike) -> dict[int, StageTime]:
    """Stage number -> time from ``d/stage_seconds/N`` (``{} `` when the directory is absent):
    ``<wall> [<load1> <load5> <load15> [<cpu>]]``."""
    secs = Path(d) / "stage_seconds"
    if not secs.is_dir():
        return {}
    out = {}
    for f in secs.glob("[0-9]*"):
        fields = f.read_text().split()
        if fields:
            out[int(f.name)] = StageTime(int(fields[0]),
                                         float(fields[1]) if len(fields) > 1 else None,
                                         int(fields[4]) if len(fields) > 4 else None)
    return out


def best_wer_line(decode_dir: str | os.PathLike) -> Optional[str]:
    """The best ``%WER ...`` line of a decode directory with its file name, or None."""
    d = Path(decode_dir)
    best = best_wer(d)
    if best is None:
        return None
    text = (d / best[3]).read_text(errors="replace")
    line = next(x for x in text.splitlines() if x.startswith("%WER"))
    return f"{line} {d}/{best[3]}"


@dataclass
class WerCi:
    """A decode directory's best WER with its bootstrap interval (in %)."""

    wer: float
    errors: int
    words: int
    low: float
    high: float
    wer_file: str          #: the best wer_LMWT_WIP's name

    def cell(self) -> str:
        return f"{self.wer:.2f} [{self.low:.2f}, {self.high:.2f}] ({self.errors}/{self.words})"


def wer_ci(decode_dir: str | os.PathLike, opts: Optional[CompareOptions] = None) -> WerCi:
    """The best WER of ``decode_dir`` and its 95% bootstrap interval (compare-wer.py's WER-CI)."""
    cmp, best, _ = compare_decode_dirs(decode_dir, decode_dir, opts=opts)
    iv = cmp.bootstrap.wer_a
    return WerCi(iv.value, cmp.errors[0], cmp.ref_words, iv.low, iv.high,
                 Path(best.wer_line.split()[-1]).name)


def compare_systems(dir_a: str | os.PathLike, dir_b: str | os.PathLike, names: tuple[str, str],
                    opts: Optional[CompareOptions] = None) -> Comparison:
    """B against A on one test set: ``compare-wer.py --decode-dirs=true dir_a dir_b``."""
    return compare_decode_dirs(dir_a, dir_b, names=names, opts=opts)[0]


def comparison_cells(c: Comparison) -> tuple[str, str, str]:
    """(difference B - A with its interval, MAPSSWE p, verdict) for a table row. The verdict is
    "not significant" unless the bootstrap interval leaves out 0 and MAPSSWE's p is below alpha;
    when the two tests disagree, both are named."""
    b, t = c.bootstrap, c.mapsswe
    diff = f"{b.diff.value:+.2f} [{b.diff.low:+.2f}, {b.diff.high:+.2f}]"
    better = c.names[1] if b.diff.value < 0 else c.names[0]
    if b.significant and t.significant:
        verdict = f"significant, {better} better"
    elif b.significant or t.significant:
        verdict = (f"not significant by {'MAPSSWE' if b.significant else 'the bootstrap'}, "
                   f"significant by {'the bootstrap' if b.significant else 'MAPSSWE'}")
    else:
        verdict = "not significant"
    return diff, f"{t.p_value:.3g}", verdict


def machine_description() -> str:
    """This machine's cores and CPU model (``2 cores (AMD EPYC ...)``), for a RESULTS.md header
    and for the FSDD results store's record of where a split ran."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(x.split(":", 1)[1].strip() for x in fh if x.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} cores ({cpu})"


def machine_line(root: str | os.PathLike | None = None) -> str:
    """Commit of the checkout (``root``, default the current directory), cores, CPU model and
    date, for a RESULTS.md header."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True, cwd=root).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return (f"Written at commit {commit} on {machine_description()}, "
            f"{datetime.date.today().isoformat()}.")
