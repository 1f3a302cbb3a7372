# Copyright 2026 nnetmix authors. Apache 2.0.
"""The campaign's two charts, drawn from the results store alone beside its RESULTS.md:
``wer_workers_<size>.png`` (WER on the claims' test condition against workers, one line per
mixing method, each point with its 95% bootstrap interval) and ``cv_epochs_<size>.png`` (CV
frame accuracy per epoch of each method's run at 16 workers and of one worker).

They are drawn with matplotlib when it is installed (the bench extra, ``make bench``); without
it nothing is drawn and the PNGs already in the store stay. The runs shown are those of the
seed tables' roles: seed 777 and, for a learning-rate grid, the CV-chosen rate (mixing as the
seeds ran it: no compressed or overlapped runs).
"""
from __future__ import annotations

import sys
from pathlib import Path

from bench.experiments.plot import PALETTE, Series, have_matplotlib, line_chart
from bench.experiments.spec import NO_EPOCH_AVERAGE, seeds_epoch_average
from bench.experiments.store import Record
from bench.experiments.stored import FIRST_SEED, cv_rank

__all__ = ["plot_names", "draw"]

METHODS = ("average", "butterfly", "ring", "bmuf-cbm", "bmuf-nbm")


def plot_names(size: str) -> tuple[str, str]:
    return f"wer_workers_{size}.png", f"cv_epochs_{size}.png"


def _best(recs: list[Record]) -> Record | None:
    return max(recs, key=cv_rank, default=None)


def _default_dnn(r: Record) -> bool:
    """The sigmoid DNN at the defaults, each mixing as the seeds ran it."""
    s = r.spec
    return (s.network == "dnn" and s.seed == FIRST_SEED and s.average_every == 10
            and s.minibatch == 256 and s.scheduler == "newbob" and s.optimizer == "ngsgd"
            and s.init == "rbm" and s.scale_lr is None and s.max_change is None
            and s.mix_variant == ("" if seeds_epoch_average(s.mixing) else NO_EPOCH_AVERAGE))


def draw(out: Path, task: str, size: str, recs: list[Record], decode: str,
         intervals: dict) -> list[Path]:
    """Draw the two charts into ``out``; the files drawn (none without matplotlib)."""
    if not have_matplotlib():
        print("campaign.py: WARNING: matplotlib is not installed, the charts are not redrawn "
              "(make campaign installs it; or pip install -e '.[bench]')", file=sys.stderr)
        return []
    wer_png, cv_png = (out / n for n in plot_names(size))
    dnn = [r for r in recs if _default_dnn(r) and decode in r.result["decodes"]]
    one = _best([r for r in dnn if r.spec.workers == 1])
    series = []
    for i, m in enumerate(METHODS):
        pts = []
        for n in sorted({r.spec.workers for r in dnn if r.spec.workers > 1}):
            r = _best([x for x in dnn if x.spec.workers == n and x.spec.mixing == m])
            if r is not None:
                pts.append((n, r))
        if one is not None and m == "average":
            pts.insert(0, (1, one))
        if not pts:
            continue
        ys = [r.result["decodes"][decode]["wer"] for _, r in pts]
        errs = []
        for (_, r), y in zip(pts, ys):
            lo, hi = intervals.get((r.run_id, decode), (y, y))
            errs.append((y - lo, hi - y))
        series.append(Series(m, [n for n, _ in pts], ys, PALETTE[i], yerr=errs))
    drawn = []
    if series:
        line_chart(wer_png, series, f"{task} ({size}): WER ({decode}) against workers",
                   "workers (MPI ranks)", "WER (%), 95% interval")
        drawn.append(wer_png)
    curves = []
    heads = [("1 worker", one)] + [
        (m, _best([r for r in dnn if r.spec.workers == 16 and r.spec.mixing == m]))
        for m in METHODS]
    for i, (name, r) in enumerate(heads):
        if r is None:
            continue
        ep = [e for e in r.epochs if e["epoch"] > 0]
        curves.append(Series(f"{name} ({r.spec.workers})", [e["epoch"] for e in ep],
                             [e["cv_acc"] for e in ep], PALETTE[i]))
    if curves:
        line_chart(cv_png, curves, f"{task} ({size}): CV frame accuracy per epoch", "epoch",
                   "CV frame accuracy (%)", xlog2=False)
        drawn.append(cv_png)
    return [p for p in drawn if p.exists()]
