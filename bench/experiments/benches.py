# Copyright 2026 nnetmix authors. Apache 2.0.
"""A plan's benchmark entries (``[[bench]]``, or a digits plan's ``include = ["seed004",
"scaling"]``): bench/allreduce.py (seed 004's all-reduce algorithms; the all-reduce the scaling
model fits its link to) and bench/scaling.py (compute time per minibatch, the scaling model's
other input), each run once, alone, and stored beside the runs so that the seeds' timing claims
are decided from the store like the others.

The speed plan (bench/plans/speed.toml) runs bench/feature_speed.py, bench/train_throughput.py,
bench/rbm_throughput.py and bench/ngsgd_overhead.py the same way, each writing its JSON into its
directory and its printed tables kept beside, and bench/decode_speed.py and
bench/determinize_speed.py, whose printed tables are kept (bench/experiments/speed_tables.py
renders bench/RESULTS.md from them).

A benchmark runs in ``<work>/benches/<id>/`` (its :data:`OUTPUTS` entry says how it is pointed
there), its log in ``<work>/logs/<id>.log``; what is stored is ``result.json`` (the entry,
command, machine, load, seconds) and the benchmark's text output (``allreduce.json``,
``scaling.txt``, ...), not its plots (the tables render those from the stored output).
"""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from bench.experiments.collect import machine
from bench.experiments.spec import BENCHES, BenchSpec, bench_id
from bench.experiments.store import Store, StoreError

__all__ = ["Outputs", "OUTPUTS", "command", "run_bench"]


@dataclasses.dataclass(frozen=True)
class Outputs:
    """How a benchmark is pointed at its output directory and what the store keeps of it."""

    options: tuple[str, ...]    #: appended options; ``{out}`` is the output directory
    stdout: Optional[str]       #: the file its stdout goes to (None: into the log)
    files: tuple[str, ...]      #: what the store keeps


OUTPUTS = {"allreduce": Outputs(("--out-dir", "{out}"), None, ("allreduce.json",)),
           "scaling": Outputs((), "scaling.txt", ("scaling.txt",)),
           "feature_speed": Outputs(("--json", "{out}/feature_speed.json"), "feature_speed.md",
                                    ("feature_speed.json", "feature_speed.md")),
           "train_throughput": Outputs(("--json", "{out}/train_throughput.json"),
                                       "train_throughput.md",
                                       ("train_throughput.json", "train_throughput.md")),
           "rbm_throughput": Outputs(("--json", "{out}/rbm_throughput.json"), "rbm_throughput.md",
                                     ("rbm_throughput.json", "rbm_throughput.md")),
           "ngsgd_overhead": Outputs(("--out", "{out}/ngsgd_overhead"), None,
                                     ("ngsgd_overhead.json", "ngsgd_overhead.md")),
           # these print their tables only: the printed text is what is kept and rendered
           "decode_speed": Outputs((), "decode_speed.txt", ("decode_speed.txt",)),
           "determinize_speed": Outputs((), "determinize_speed.txt",
                                        ("determinize_speed.txt",))}


def command(spec: BenchSpec, repo: Path, out: Path) -> list[str]:
    """The benchmark's command line, its output options pointing into ``out``."""
    return [sys.executable, str(repo / BENCHES[spec.bench]), *spec.args,
            *(o.format(out=out) for o in OUTPUTS[spec.bench].options)]


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return ""


def run_bench(spec: BenchSpec, repo: Path, work: Path, store: Store, code: str) -> Path:
    """Run one benchmark and store it; the record's path. A failed run raises
    :class:`StoreError` naming its log and stores nothing."""
    bid = bench_id(spec)
    out = work / "benches" / bid
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (work / "logs").mkdir(parents=True, exist_ok=True)
    log = work / "logs" / f"{bid}.log"
    cmd = command(spec, repo, out)
    load, t0 = _load(), time.time()
    with open(log, "w") as f:
        f.write(f"# {' '.join(cmd)}\n")
        f.flush()
        keep = OUTPUTS[spec.bench].stdout
        stdout = open(out / keep, "w") if keep else f
        try:
            rc = subprocess.call(cmd, cwd=repo, stdout=stdout, stderr=f)
        finally:
            if stdout is not f:
                stdout.close()
    if rc != 0:
        raise StoreError(f"{BENCHES[spec.bench]} exited {rc} (log: {log})")
    files = {}
    for name in OUTPUTS[spec.bench].files:
        p = out / name
        if not p.exists() or p.stat().st_size == 0:
            raise StoreError(f"{p}: {BENCHES[spec.bench]} left no {name} (log: {log})")
        files[name] = p.read_bytes()
    result = {"run_id": bid, "kind": "bench", "bench": spec.key(), "name": spec.name,
              "command": [BENCHES[spec.bench], *spec.args], "code": code,
              "machine": machine(), "load": f"{load} -> {_load()}",
              "seconds": {"run": round(time.time() - t0, 1)}, "files": sorted(files)}
    path = store.write_bench(result, files)
    shutil.rmtree(out, ignore_errors=True)
    return path
