# Copyright 2026 nnetmix authors. Apache 2.0.
"""bench/RESULTS.md and the speed charts in docs/img, written from the speed store alone
(``bench/results/speed/``, the records of bench/plans/speed.toml's ``[[bench]]`` entries), so
that ``bench/campaign.py --plan bench/plans/speed.toml --tables-only`` rewrites them byte for
byte on any clone: no clock, no host name, nothing but the stored outputs.

Each benchmark's section names its record, command, machine (CPU model, cores) and the load
average before -> after it ran, then the tables the script itself prints (rendered by the
script's own ``report`` from its stored JSON), each with nnetmix's ratio against the reference
measured in the same run. The charts go where the docs pages can include them: the repository
of a store ``<repo>/bench/results`` writes ``<repo>/bench/RESULTS.md`` and
``<repo>/docs/img/speed_<bench>.png`` (:func:`outputs`).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from bench.experiments.plot import PALETTE, Series, bar_chart, have_matplotlib
from bench.experiments.report import write_atomic
from bench.experiments.store import BenchRecord, Store

__all__ = ["outputs", "render", "draw", "write_speed_tables", "CHARTED"]

#: the benchmarks with a chart, and what it shows
CHARTED = {"feature_speed": "MFCC frames per second against kaldi-native-fbank",
           "train_throughput": "training frames per second against PyTorch",
           "allreduce": "all-reduce time against message size"}

TITLES = {"feature_speed": "Feature extraction: MFCC and PLP against kaldi-native-fbank",
          "train_throughput": "DNN training throughput against PyTorch",
          "rbm_throughput": "RBM pretraining (CD-1) throughput against PyTorch",
          "ngsgd_overhead": "NG-SGD's cost per training step against plain SGD",
          "allreduce": "All-reduce time against message size",
          "decode_speed": "Decoding real-time factor against Kaldi's C++ decoder",
          "determinize_speed": "Lattice determinization: compiled against the Python reference",
          "scaling": "Data-parallel training throughput against one rank"}


def outputs(store: Store) -> tuple[Path, Path]:
    """(RESULTS.md, chart directory) of a store at ``<repo>/bench/results``."""
    bench_dir = store.root.resolve().parent
    return bench_dir / "RESULTS.md", bench_dir.parent / "docs" / "img"


def chart_name(bench: str) -> str:
    return f"speed_{bench}.png"


def _first(benches: list[BenchRecord]) -> dict[str, BenchRecord]:
    """The record each chart is drawn from: the first of its benchmark in id order."""
    out: dict[str, BenchRecord] = {}
    for b in benches:
        out.setdefault(b.spec.bench, b)
    return out


def _section(b: BenchRecord) -> list[str]:
    """The tables the benchmark prints, rendered from its stored output."""
    name = b.spec.bench
    if name == "feature_speed":
        from bench.feature_speed import report
        return report(json.loads(b.text("feature_speed.json"))).splitlines()
    if name == "train_throughput":
        from bench.train_throughput import report
        data = json.loads(b.text("train_throughput.json"))
        return report(data["rows"], data["torch"]).splitlines()
    if name in ("rbm_throughput", "ngsgd_overhead"):   # their "# title" under this "##"
        module = __import__(f"bench.{name}", fromlist=["report"])
        text = module.report(json.loads(b.text(f"{name}.json")))
        return [("##" + ln if ln.startswith("#") else ln) for ln in text.splitlines()]
    if name == "allreduce":
        from bench.allreduce import ALGS, report
        rows = json.loads(b.text("allreduce.json"))
        algs = [a for a in ALGS if any(a in r for r in rows)]
        text = report(rows, algs, sorted({r["ranks"] for r in rows}), b.result["machine"]["cores"])
        # under this section's "##": the report's title and blank line go, its "##" become "###"
        return [("#" + ln if ln.startswith("#") else ln) for ln in text.splitlines()[2:]]
    return b.text(f"{name}.txt").splitlines()  # scaling, decode_speed, determinize_speed


def render(store: Store) -> str:
    """bench/RESULTS.md's text; it links the charts :func:`draw` writes (whether or not
    matplotlib is installed here)."""
    md, img = outputs(store)
    benches = list(store.benches())
    lines = ["# Speed benchmarks", "",
             "Written by `bench/campaign.py --plan bench/plans/speed.toml` from the records under "
             "`bench/results/speed/` alone (`--tables-only` rewrites this file and the charts "
             "in `docs/img/` byte for byte). Each benchmark ran alone, one after another; each "
             "table compares nnetmix with a reference measured in the same run (the ratio "
             "columns). The machine may be shared: read the ratios more than the absolute "
             "rates, beside the load average each section gives (before -> after the run).", ""]
    if not benches:
        return "\n".join(lines + ["No benchmark is stored yet.", ""])
    charted = _first(benches)
    for b in sorted(benches, key=lambda b: (list(TITLES).index(b.spec.bench)
                                             if b.spec.bench in TITLES else 99, b.path.name)):
        res, m = b.result, b.result["machine"]
        rel = os.path.relpath(b.path, md.parent)
        title = TITLES.get(b.spec.bench, b.spec.bench)
        if charted.get(b.spec.bench) is not b and res.get("name"):
            title += f": {res['name']}"  # a second record of one benchmark: the plan's name
        lines += [f"## {title}", "",
                  f"Machine: {m['cpu']}, {m['cores']} cores; load average "
                  f"{res.get('load', '')}; {res['seconds']['run']:.0f} s. "
                  f"[{b.path.name}]({rel}/result.json): `{' '.join(res['command'])}`.", ""]
        lines += _section(b) + [""]
        if charted.get(b.spec.bench) is b and b.spec.bench in CHARTED:
            png = os.path.relpath(img / chart_name(b.spec.bench), md.parent)
            lines += [f"![{CHARTED[b.spec.bench]}]({png})", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _throughput_chart(b: BenchRecord, path: Path) -> None:
    data = json.loads(b.text("train_throughput.json"))
    rows = [r for r in data["rows"] if "rnn" not in r and r.get("ours_fps")]
    labels = [f"{'-'.join(map(str, r['dims'][:2]))}x{len(r['dims']) - 2}-{r['dims'][-1]}\n"
              f"mb {r['mb']}, {r['threads']} thr" for r in rows]
    ours = [r["ours_fps"] for r in rows]
    theirs = [r.get("torch_fps") if data["torch"] else None for r in rows]
    notes = [f"{o / t:.2f}x" if t else "" for o, t in zip(ours, theirs)]
    xs = list(range(len(rows)))
    bar_chart(path, labels, [Series("nnetmix", xs, ours, PALETTE[0]),
                             Series("PyTorch (CPU)", xs, theirs, PALETTE[1])],
              "Training frames per second, nnetmix against PyTorch (ratio above)",
              "frames per second (median, log scale)", notes, ylog=True)


def _feature_chart(b: BenchRecord, path: Path) -> None:
    data = json.loads(b.text("feature_speed.json"))
    rows = data["mfcc"]
    labels, xs = [f"nj {r['nj']}" for r in rows], list(range(len(rows)))
    series = [Series("nnetmix end to end", xs, [r["frames"] / r["ours_e2e_s"] for r in rows],
                     PALETTE[0]),
              Series("nnetmix compute only", xs,
                     [r["frames"] / r["ours_compute_s"] for r in rows], PALETTE[2]),
              Series("kaldi-native-fbank direct", xs, [r["frames"] / r["knf_s"] for r in rows],
                     PALETTE[1])]
    notes = [f"{r['knf_s'] / r['ours_compute_s']:.2f}x" for r in rows]
    bar_chart(path, labels, series, "MFCC frames per second (compute only / direct above)",
              "frames per second (median)", notes)


def _allreduce_chart(b: BenchRecord, path: Path) -> None:
    from bench.allreduce import ALGS, plot
    rows = [r for r in json.loads(b.text("allreduce.json")) if r.get("kind") != "compression"]
    plot(rows, [a for a in ALGS if any(a in r for r in rows)], sorted({r["ranks"] for r in rows}),
         path, b.result["machine"]["cores"])


def draw(store: Store) -> list[Path]:
    """Draw each charted benchmark's chart into docs/img; the files drawn (none without
    matplotlib: the charts already there stay)."""
    if not have_matplotlib():
        print("campaign.py: WARNING: matplotlib is not installed, the charts are not redrawn "
              "(pip install -e '.[bench]')", file=sys.stderr)
        return []
    _, img = outputs(store)
    img.mkdir(parents=True, exist_ok=True)
    drawers = {"feature_speed": _feature_chart, "train_throughput": _throughput_chart,
               "allreduce": _allreduce_chart}
    drawn = []
    for name, b in _first(list(store.benches())).items():
        if name in drawers:
            drawers[name](b, img / chart_name(name))
            drawn.append(img / chart_name(name))
    return [p for p in drawn if p.exists()]


def write_speed_tables(store: Store) -> list[Path]:
    """Rewrite bench/RESULTS.md and the charts; the files written."""
    md, _ = outputs(store)
    drawn = draw(store)
    write_atomic(md, render(store))
    return [md] + drawn
