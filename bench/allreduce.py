#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""All-reduce time against message size, for every nnetmix algorithm and 2, 4, 8 ranks.

Seed 004's experiment (time against message size and process count for MPI's own all-reduce,
tree/butterfly and blocking/non-blocking ring) on nnetmix.parallel.AllReducer. For each N this
script launches ``mpiexec -n N [--oversubscribe] python bench/allreduce.py --worker ...`` itself;
in the job every rank averages a float32 buffer of each size (4 KB to 160 MB, log-spaced) with
each algorithm. A repetition's time is the slowest rank's (barrier, then time the call); the
table shows medians. In the same job, as references: ``memcpy`` (np.copyto of the same size,
every rank at once: the local memory limit) and ``sendrecv`` (one Sendrecv of the whole buffer
around the ring, every rank at once: the point-to-point limit).

Fits. Per algorithm, one alpha-beta model over all N and sizes, in the algorithm's own form
(n bytes; local additions not modelled, so they land in beta):
ring/ring-async 2(N-1) alpha + 2(N-1)/N n beta; recursive-doubling log2 N (alpha + n beta);
tree 2 log2 N (alpha + n beta); mpi (unknown inside) alpha + n beta per N. Least squares on
relative error, so small messages count. Also a plain time = alpha + beta n line per (algorithm,
N).

This machine has 2 cores: with 4 and 8 ranks the ranks time-share cores (oversubscribed), and
all "network" traffic is shared-memory copies. Read those rows as relative, not as cluster
numbers. Outputs: a markdown table on stdout and in bench/out/allreduce.md, the raw rows in
bench/out/allreduce.json, the plot in bench/out/allreduce.png (matplotlib, the ``bench`` extra;
without it the plot is skipped with a note). Rows hold the median of each series and, under
``quartiles``, its 25th and 75th percentiles (the plot's error bars).

With ``--compression none,fp16,bf16,1bit,topk`` (``--mix-compression``'s names) the job also
times one compressed mix per compression (nnetmix.parallel.ErrorFeedback on a model-averaging
update: compress, Allgather, decompress and sum every payload), and the table gains rows of
bytes on the wire and time: one rank's payload, the bytes each rank sends ((N - 1) payloads),
and, for ``none``, MPI's all-reduce of the float32 buffer with a ring all-reduce's
2 (N - 1)/N 4n bytes per rank. The topk rows use ``--topk-fraction`` (default 0.01).

Usage: bench/allreduce.py [--quick] [--ranks 2,4,8] [--algorithms mpi,ring,...]
       [--compression none,1bit,...] [--out-dir bench/out]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.experiments.plot import PALETTE, new_figure, save  # noqa: E402  (after ROOT)

ALGS = ("mpi", "ring", "ring-async", "recursive-doubling", "tree")
FULL_SIZES = [4096, 16384, 65536, 262144, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 160_000_000]
QUICK_SIZES = [4096, 262144, 16 << 20]


def get_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="3 sizes up to 16 MB, 3 repetitions")
    p.add_argument("--ranks", default="2,4,8", help="comma list of rank counts")
    p.add_argument("--algorithms", default=",".join(ALGS), help="comma list of: " + ", ".join(ALGS))
    p.add_argument("--sizes", default="", help="comma list of message sizes in bytes "
                   "(default: 4 KB .. 160 MB, x4 steps)")
    p.add_argument("--reps", type=int, default=0, help="timed repetitions (default: by size)")
    p.add_argument("--compression", default="", help="comma list of --mix-compression names: "
                   "add rows of bytes on the wire and time per compressed mix (none: MPI's "
                   "all-reduce)")
    p.add_argument("--topk-fraction", type=float, default=0.01, help="the topk rows' fraction")
    p.add_argument("--out-dir", default=str(ROOT / "bench" / "out"))
    p.add_argument("--worker", default="", help=argparse.SUPPRESS)
    return p.parse_args(argv)


# ---------------------------------------------------------------- worker side (under mpiexec)

def _reps(nbytes: int, fixed: int) -> int:
    if fixed > 0:
        return fixed
    return 30 if nbytes <= 1 << 20 else 10 if nbytes <= 16 << 20 else 5


def _timed(comm, fn, reps: int) -> np.ndarray:
    """The slowest rank's time of fn() in each of ``reps`` repetitions (one warm-up first)."""
    from mpi4py import MPI
    fn()
    times = np.empty(reps)
    for i in range(reps):
        comm.Barrier()
        t0 = time.perf_counter()
        fn()
        times[i] = time.perf_counter() - t0
    comm.Allreduce(MPI.IN_PLACE, times, op=MPI.MAX)
    return times


def _summarise(row: dict, name: str, times: np.ndarray) -> None:
    """The median as ``row[name]``, the quartiles as ``row["quartiles"][name]`` (error bars)."""
    row[name] = float(np.median(times))
    row.setdefault("quartiles", {})[name] = [float(q) for q in np.percentile(times, [25, 75])]


def worker(spec: dict) -> None:
    from mpi4py import MPI

    from nnetmix.parallel import AllReducer, run_ranks
    comm = MPI.COMM_WORLD

    def body() -> None:
        rank, size = comm.Get_rank(), comm.Get_size()
        right, left = (rank + 1) % size, (rank - 1) % size
        for nbytes in spec["sizes"]:
            count = nbytes // 4
            reps = _reps(nbytes, spec["reps"])
            x = np.random.default_rng(rank).standard_normal(count).astype(np.float32)
            y = np.empty_like(x)
            row = {"bytes": count * 4, "ranks": size, "reps": reps}
            _summarise(row, "memcpy", _timed(comm, lambda: np.copyto(y, x), reps))
            _summarise(row, "sendrecv",
                       _timed(comm, lambda: comm.Sendrecv(x, right, 0, y, left, 0), reps))
            del y
            for alg in spec["algorithms"]:
                with AllReducer(comm, alg, count) as red:
                    _summarise(row, alg, _timed(comm, lambda: red.average(x), reps))
            if rank == 0:
                print("ROW " + json.dumps(row), flush=True)
            for name in spec.get("compression", []):
                crow = compressed_row(comm, name, x, reps, spec.get("topk_fraction", 0.01))
                if rank == 0:
                    print("CROW " + json.dumps(crow), flush=True)

    run_ranks(comm, body)


def compressed_row(comm, name: str, x: np.ndarray, reps: int, fraction: float) -> dict:
    """One row of bytes and time of a compressed mix of ``x`` (``none``: MPI's all-reduce)."""
    from nnetmix.parallel import AllReducer, ErrorFeedback
    size, count = comm.Get_size(), x.shape[0]
    row = {"bytes": 4 * count, "ranks": size, "compression": name, "reps": reps}
    if name == "none":
        with AllReducer(comm, "mpi", count) as red:
            times = _timed(comm, lambda: red.average(x), reps)
        row.update(payload=4 * count, sent=int(2 * (size - 1) / size * 4 * count))
    else:
        fb = ErrorFeedback(comm, name, count, fraction)
        fb.start(x)
        y = x.copy()
        times = _timed(comm, lambda: fb.average(y), reps)
        row.update(payload=fb.payload_bytes, sent=(size - 1) * fb.payload_bytes)
        fb.free()
    _summarise(row, "time", times)
    row["load"] = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    return row


# ---------------------------------------------------------------- driver side

def run_job(n: int, spec: dict) -> list[dict]:
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    venv = Path(sys.executable).parent / "mpiexec"
    mpiexec = str(venv) if venv.exists() else "mpiexec"
    cmd = [mpiexec, "-n", str(n)]
    if n > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    cmd += [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    proc = subprocess.run(cmd, env=env, text=True, capture_output=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"allreduce.py: mpiexec -n {n} failed ({proc.returncode})")
    return [json.loads(line.split(" ", 1)[1]) | ({"kind": "compression"} if line[0] == "C" else {})
            for line in proc.stdout.splitlines() if line.startswith(("ROW ", "CROW "))]


def model_terms(alg: str, n: int) -> tuple[float, float]:
    """(latency multiplier, bandwidth multiplier) of the algorithm's alpha-beta cost."""
    log2 = float(np.ceil(np.log2(n)))
    extra = 0.0 if n & (n - 1) == 0 else 2.0
    return {"ring": (2 * (n - 1), 2 * (n - 1) / n), "ring-async": (2 * (n - 1), 2 * (n - 1) / n),
            "recursive-doubling": (log2 + extra, log2 + extra), "tree": (2 * log2, 2 * log2),
            }.get(alg, (1.0, 1.0))


def fit(rows: list[dict], alg: str, ranks=None) -> tuple[float, float, float]:
    """(alpha s, beta s/byte, rms relative error) by least squares on relative error."""
    a_rows, t = [], []
    for r in rows:
        if alg in r and (ranks is None or r["ranks"] == ranks):
            ka, kb = model_terms(alg, r["ranks"]) if ranks is None else (1.0, 1.0)
            a_rows.append([ka, kb * r["bytes"]])
            t.append(r[alg])
    if len(t) < 2:
        return float("nan"), float("nan"), float("nan")
    A, t = np.array(a_rows), np.array(t)
    w = 1.0 / t
    coef, *_ = np.linalg.lstsq(A * w[:, None], t * w, rcond=None)
    rel = (A @ coef - t) / t
    return float(coef[0]), float(coef[1]), float(np.sqrt(np.mean(rel ** 2)))


def _fmt_bytes(b: int) -> str:
    units = (("MiB", 1 << 20), ("KiB", 1 << 10)) if b % 1024 == 0 else (("MB", 1e6), ("KB", 1e3))
    for unit, div in units:
        if b >= div:
            v = b / div
            return f"{v:.0f} {unit}" if v >= 10 else f"{v:.3g} {unit}"
    return f"{b} B"


def compression_report(rows: list[dict]) -> list[str]:
    """The compressed-mixing rows: bytes on the wire and time per mix."""
    if not rows:
        return []
    loads = [r["load"] for r in rows if r.get("load") is not None]  # measured with the row
    load = (f" Load average (1 min) after each row: {min(loads):.1f} to {max(loads):.1f}."
            if loads else "")
    out = ["## Compressed mixing: bytes on the wire and time per mix", "",
           "One model-averaging mix of a float32 buffer (nnetmix.parallel.ErrorFeedback: "
           "compress with error feedback, Allgather, decompress and sum all payloads); none is "
           "MPI's all-reduce, its bytes those of a ring all-reduce, 2(N-1)/N x 4n per rank."
           + load, "",
           "| ranks | buffer | compression | payload | sent per rank | x fewer than float32 | "
           "ms per mix |", "|---:|---:|---|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["ranks"], r["bytes"])):
        ring = 2 * (r["ranks"] - 1) / r["ranks"] * r["bytes"]
        out.append(f"| {r['ranks']} | {_fmt_bytes(r['bytes'])} | {r['compression']} | "
                   f"{_fmt_bytes(r['payload'])} | {_fmt_bytes(r['sent'])} | "
                   f"{r['bytes'] / r['payload']:.1f} (wire {ring / r['sent']:.1f}) | "
                   f"{1e3 * r['time']:.3g} |")
    return out + [""]


def report(rows: list[dict], algs: list[str], ranks: list[int], cores: int | None = None) -> str:
    """The tables of a run's rows; ``cores``: the cores of the machine that ran it (default:
    this one's), so a stored run renders the same on any machine."""
    compressed = [r for r in rows if r.get("kind") == "compression"]
    rows = [r for r in rows if r.get("kind") != "compression"]
    cores = cores or os.cpu_count() or 1
    out = [f"# All-reduce time against message size (nnetmix.parallel, {cores} cores)", "",
           "Median of the slowest rank's time per call, ms (average of a float32 buffer). "
           "memcpy: np.copyto of the same size on every rank at once (local limit); sendrecv: one "
           "Sendrecv of the whole buffer around the ring on every rank at once.", ""]
    if any(n > cores for n in ranks):
        out += [f"**Oversubscribed:** with more ranks than the {cores} cores here "
                f"({', '.join(str(n) for n in ranks if n > cores)} ranks) the ranks time-share "
                "cores and every message is a shared-memory copy: compare algorithms within a "
                "table, not with a cluster.", ""]
    cols = algs + ["memcpy", "sendrecv"]
    for n in ranks:
        sub = sorted((r for r in rows if r["ranks"] == n), key=lambda r: r["bytes"])
        if not sub:
            continue
        note = " (oversubscribed)" if n > cores else ""
        out += [f"## {n} ranks{note}", "", "| size | " + " | ".join(cols) + " |",
                "|---:|" + "---:|" * len(cols)]
        for r in sub:
            out.append(f"| {_fmt_bytes(r['bytes'])} | "
                       + " | ".join(f"{1e3 * r[c]:.3g}" if c in r else "" for c in cols) + " |")
        out.append("")
    if len({r["bytes"] for r in rows}) < 2:  # a line through one point is no fit
        out += ["One message size: no alpha-beta fit.", ""] + compression_report(compressed)
        return "\n".join(out).rstrip("\n") + "\n"
    out += ["## alpha-beta fits", "",
            "Per algorithm over every N and size, in the algorithm's own cost form "
            "(ring: 2(N-1) a + 2(N-1)/N n b; recursive-doubling: log2 N (a + n b); tree: "
            "2 log2 N (a + n b); mpi: a + n b): alpha in us, 1/beta in GB/s, rms relative error.",
            "", "| algorithm | alpha (us) | 1/beta (GB/s) | rms rel. err |", "|---|---:|---:|---:|"]
    for alg in algs:
        a, b, e = fit(rows, alg)
        out.append(f"| {alg} | {a * 1e6:.1f} | {1e-9 / b if b > 0 else float('nan'):.2f} | "
                   f"{e:.2f} |")
    out += ["", "Plain line time = alpha + beta n per (algorithm, N): alpha us / effective GB/s "
            "(bytes of the buffer per second).", "",
            "| algorithm | " + " | ".join(f"N={n}" for n in ranks) + " |",
            "|---|" + "---:|" * len(ranks)]
    for alg in algs + ["memcpy", "sendrecv"]:
        cells = []
        for n in ranks:
            a, b, _ = fit(rows, alg, n)
            cells.append(f"{a * 1e6:.0f} us / {1e-9 / b:.2f} GB/s" if b > 0 else "n/a")
        out.append(f"| {alg} | " + " | ".join(cells) + " |")
    out += [""] + compression_report(compressed)
    return "\n".join(out).rstrip("\n") + "\n"


# ---------------------------------------------------------------- the plot

_COLORS = {"mpi": PALETTE[0], "ring": PALETTE[1], "ring-async": PALETTE[2],
           "recursive-doubling": PALETTE[3], "tree": PALETTE[4], "memcpy": "0.45",
           "sendrecv": PALETTE[8]}


def _bytes_tick(b: float, _pos=None) -> str:
    return _fmt_bytes(int(round(b))).replace(" ", "\u2009")


def plot(rows: list[dict], algs: list[str], ranks: list[int], path: Path,
         cores: int | None = None) -> None:
    """One log-log panel per N: ms per call against message size, a line per algorithm and
    reference, error bars from the 25th to the 75th percentile of the repetitions."""
    series = algs + ["memcpy", "sendrecv"]
    panels = [n for n in ranks if any(r["ranks"] == n for r in rows)]
    if not panels:
        return
    fig = new_figure(path, figsize=(4.2 * len(panels) + 1.8, 4.2))
    if fig is None:
        return
    from matplotlib.ticker import FuncFormatter, LogLocator  # matplotlib is there (new_figure)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    cores = cores or os.cpu_count() or 1
    for ax, n in zip(axes, panels):
        sub = sorted((r for r in rows if r["ranks"] == n), key=lambda r: r["bytes"])
        for s in series:
            pts = [r for r in sub if s in r and r[s] > 0]
            if not pts:
                continue
            xs = [r["bytes"] for r in pts]
            ys = [1e3 * r[s] for r in pts]
            q = [r.get("quartiles", {}).get(s) for r in pts]
            err = None
            if all(q):
                err = [[max(y - 1e3 * lo, 0.0) for y, (lo, _) in zip(ys, q)],
                       [max(1e3 * hi - y, 0.0) for y, (_, hi) in zip(ys, q)]]
            ref = s in ("memcpy", "sendrecv")
            ax.errorbar(xs, ys, yerr=err, color=_COLORS[s], marker="o", markersize=3,
                        linestyle=":" if ref else "-", linewidth=1 if ref else 1.6, capsize=2,
                        label=s)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10))
        ax.xaxis.set_major_formatter(FuncFormatter(_bytes_tick))
        ax.grid(True, which="major", color="0.88")
        ax.set_title(f"{n} ranks" + (f" (oversubscribed, {cores} cores)" if n > cores else ""))
        ax.set_xlabel("message size (float32 buffer)")
    axes[0].set_ylabel("time per all-reduce (ms, median; bars: quartiles)")
    axes[-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small",
                    frameon=False)
    fig.suptitle("All-reduce time against message size (nnetmix.parallel.AllReducer)")
    save(fig, path)


def main(argv=None) -> int:
    args = get_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    algs = [a for a in args.algorithms.split(",") if a]
    bad = [a for a in algs if a not in ALGS]
    if bad:
        raise SystemExit(f"allreduce.py: unknown algorithm {bad[0]} (expected {', '.join(ALGS)})")
    ranks = [int(n) for n in args.ranks.split(",") if n]
    sizes = ([int(float(s)) for s in args.sizes.split(",") if s] if args.sizes
             else QUICK_SIZES if args.quick else FULL_SIZES)
    spec = {"sizes": sizes, "algorithms": algs, "reps": args.reps or (3 if args.quick else 0)}
    if args.compression:
        from nnetmix.parallel import check_compression
        spec["compression"] = [c for c in args.compression.split(",") if c]
        for c in spec["compression"]:
            check_compression(c, args.topk_fraction)
        spec["topk_fraction"] = args.topk_fraction
    rows: list[dict] = []
    for n in ranks:
        t0 = time.perf_counter()
        rows += run_job(n, spec)
        print(f"allreduce.py: {n} ranks done in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    text = report(rows, algs, ranks)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "allreduce.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "allreduce.md").write_text(text)
    plot([r for r in rows if r.get("kind") != "compression"], algs, ranks, out / "allreduce.png")
    print(text)
    print(f"wrote {out / 'allreduce.md'}, {out / 'allreduce.json'}, {out / 'allreduce.png'}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
