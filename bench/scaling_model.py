#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Predicted speedup of data-parallel training at 16, 32 and 64 workers on a cluster given on the
command line, from the alpha-beta cost of the all-reduce (fitted to bench/allreduce.py's
measurements) and the compute time per minibatch measured here (bench/scaling.py), beside the
speedups the seeds report (issue 9, item 5).

The model. Workers synchronise every S frames each (model averaging: S = average_every x
minibatch; BMUF: S = the block, seed 002's 22.5 minutes of speech per worker = 135,000 frames).
Between two synchronisations a worker computes for

    C = S * 6 P / F       (P parameters, F the worker's effective FLOP/s; a frame costs 2P
                           multiply-adds forward and 4P backward, the GEMM-bound count)

and then all workers average the n = 4P bytes of float32 parameters. With link latency alpha
(seconds per message) and inverse bandwidth beta (seconds per byte) the averaging costs, per
algorithm over p workers (Thakur, Rabenseifner and Gropp 2005; seed 004):

    ring all-reduce                   T = 2(p-1) alpha + 2(p-1)/p n beta
    recursive doubling (butterfly)    T = log2 p (alpha + n beta)
    tree (reduce + broadcast)         T = 2 log2 p (alpha + n beta)
    butterfly / ring *mixing*         T = alpha + n beta        (one pairwise exchange per mix)

BMUF communicates exactly what model averaging does, one all-reduce per block; its block-momentum
filter is a few local passes over the parameters and is left out. Every worker computes the same
number of frames (frame-balanced shards), so the time per synchronisation is C + T and the
speedup over one worker (which never communicates) is

    speedup(p) = p C / (C + T(p)),        efficiency = speedup / p.

I/o and validation are not modelled (seed 002 Table 4: validation is under 1% of a sweep); the
prediction is the throughput ratio, the seeds' "training speedup" when the number of epochs does
not change with p.

Two projections beside it, for what nnetmix adds to the seeds (docs/parallel.md), labelled as
projections in the tables since no cluster has measured them:

    overlapped (--overlap-mixing)      time per sync max(C, T): the all-reduce of block k runs
                                       while block k+1 computes (an upper bound: Open MPI
                                       progresses it only at the Test calls between minibatches)
    compressed (--mix-compression)     T = (p-1) alpha + (p-1) B beta: the ring all-gather of
                                       each rank's payload of B bytes (1bit: B = n/32 + 8 bytes per
                                       256 values, nnetmix.parallel.compress), decompressed and
                                       summed on every rank (decompress-reduce)

Neither changes how many epochs the run needs (the delayed update and the error feedback may:
that is the campaign's accuracy question, not this model's).

Inputs. alpha and beta of this machine come from fitting the chosen algorithm's form to
bench/allreduce.py's rows with at most as many ranks as cores (oversubscribed rows measure time
sharing, not a link; --max-ranks gives the cores of the machine that measured them, for rows
read on another); when no such output exists, bench/allreduce.py --quick --ranks 2 runs here
first. The cluster's link is the command line's (--bandwidth-gbps, default 56 = seed 002's FDR
InfiniBand; --latency-us, default the alpha fitted here, since nnetmix's per-message software cost
comes with it to any network). F here is 6 P m / t for the compute time t per minibatch of m
frames that bench/scaling.py measured with one rank (or --compute-ms); --worker-speed is a ratio
to it (``4x``) or frames per second of the modelled network (``4535``: a K40m on seed 002's
63M-parameter DNN, from its Table 4: 1,860 h in 2,460.6 min). The seeds' rows are also computed
at that K40m speed, the only per-GPU speed a seed states, and with the bandwidth at which the
model would give the seed's own speedup.

Check. Where bench/scaling.py's output has rank counts above one with a core each, the model's
speedup at each (its 1-rank compute time, the all-reduces the run made, the link fitted here) is
printed beside the measured one with its relative error: the model's own test on this machine.

Usage: bench/scaling_model.py [--allreduce-json bench/out/allreduce.json]
          [--scaling-output FILE | --compute-ms MS] [--bandwidth-gbps 56] [--latency-us US]
          [--worker-speed 1x] [--average-every 10] [--minibatch 1024] [--params 39928422]
          [--block-frames 135000] [--algorithm ring] [--max-ranks N] [--workers 16,32,64]
          [--out-dir bench/out]
Outputs: <out-dir>/scaling_model.md (also on stdout), scaling_model.json, scaling_model.png.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.allreduce import fit, model_terms  # noqa: E402

__all__ = ["FLOPS_PER_PARAM_FRAME", "K40M_FPS", "K40M_PARAMS", "SEED_POINTS", "Link", "Workload",
           "allreduce_seconds", "mix_seconds", "compressed_seconds", "speedup", "predict",
           "fit_link",
           "parse_scaling_output", "load_rows", "worker_flops", "bandwidth_for_speedup", "build",
           "write_outputs", "main"]

FLOPS_PER_PARAM_FRAME = 6.0
MODEL_ALGORITHMS = ("ring", "ring-async", "recursive-doubling", "tree")
K40M_FPS = 1860 * 3600 * 100 / (2460.6 * 60)   # seed 002 Table 4: single-GPU sweep, 4,535 fr/s
K40M_PARAMS = 63e6                             # seed 002: "about 63 million free parameters"
SEED001_PARAMS = 39_928_422                    # 440-6x2048-8806 (seed 001 section 5.1)
SEED002_BLOCK_FRAMES = 135_000                 # seed 002: 22.5 minutes of speech per split


@dataclasses.dataclass(frozen=True)
class Link:
    """alpha: seconds per message; beta: seconds per byte."""

    alpha: float
    beta: float

    @classmethod
    def from_gbps(cls, bandwidth_gbps: float, latency_us: float) -> "Link":
        return cls(latency_us * 1e-6, 8.0 / (bandwidth_gbps * 1e9))


@dataclasses.dataclass(frozen=True)
class Workload:
    """What one worker does between two synchronisations."""

    name: str
    params: float              #: P
    interval_frames: float     #: S (frames per worker between synchronisations)
    mixing: str = "allreduce"  #: allreduce (model averaging, BMUF) | butterfly | ring

    @property
    def nbytes(self) -> float:
        return 4.0 * self.params


def allreduce_seconds(algorithm: str, p: int, nbytes: float, link: Link) -> float:
    """T of one all-reduce of nbytes over p ranks, in the algorithm's alpha-beta form (the same
    forms bench/allreduce.py fits)."""
    if algorithm not in MODEL_ALGORITHMS:
        raise ValueError(f"scaling_model.py: algorithm {algorithm!r} has no cost form "
                         f"(expected {', '.join(MODEL_ALGORITHMS)})")
    if p <= 1:
        return 0.0
    ka, kb = model_terms(algorithm, p)
    return ka * link.alpha + kb * nbytes * link.beta


def mix_seconds(mixing: str, p: int, nbytes: float, link: Link, algorithm: str = "ring") -> float:
    """Communication of one synchronisation: an all-reduce, or one pairwise exchange."""
    if p <= 1:
        return 0.0
    if mixing == "allreduce":
        return allreduce_seconds(algorithm, p, nbytes, link)
    if mixing in ("butterfly", "ring"):
        return link.alpha + nbytes * link.beta
    raise ValueError(f"scaling_model.py: unknown mixing {mixing!r}")


def speedup(p: int, compute_s: float, comm_s: float, overlap: bool = False) -> float:
    """p C / (C + T): p workers each computing C per synchronisation and communicating T;
    ``overlap``: p C / max(C, T), the communication hidden behind the next block's compute."""
    if p <= 1:
        return 1.0
    return p * compute_s / (max(compute_s, comm_s) if overlap else compute_s + comm_s)


def compressed_seconds(compression: str, p: int, params: float, link: Link) -> float:
    """T of one compressed mix (decompress-reduce): a ring all-gather of each rank's payload,
    (p-1) alpha + (p-1) B beta, B the payload bytes of ``params`` values."""
    from nnetmix.parallel.compress import make_codec
    if p <= 1:
        return 0.0
    payload = make_codec(compression).nbytes(int(params))
    return (p - 1) * link.alpha + (p - 1) * payload * link.beta


def predict(w: Workload, p: int, link: Link, flops: float, algorithm: str = "ring",
            compression: str = "none", overlap: bool = False) -> dict:
    """The model's row for ``p`` workers; ``compression`` other than none and ``overlap`` are
    the projections of the module docstring."""
    compute = w.interval_frames * FLOPS_PER_PARAM_FRAME * w.params / flops
    if compression == "none":
        comm = mix_seconds(w.mixing, p, w.nbytes, link, algorithm)
    else:
        comm = compressed_seconds(compression, p, w.params, link)
    s = speedup(p, compute, comm, overlap)
    return {"workers": p, "compute_s": compute, "comm_s": comm, "speedup": s,
            "efficiency": s / p}


def bandwidth_for_speedup(w: Workload, p: int, target: float, latency_us: float, flops: float,
                          algorithm: str = "ring") -> Optional[float]:
    """The bandwidth (Gb/s) at which the model gives ``target``; None when no bandwidth does
    (target >= the latency-bound limit, or target <= 0). Speedup rises with bandwidth, so
    bisection on log bandwidth."""
    def s(gbps: float) -> float:
        return predict(w, p, Link.from_gbps(gbps, latency_us), flops, algorithm)["speedup"]
    lo, hi = 1e-4, 1e6
    if not s(lo) < target < s(hi):
        return None
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if s(mid) < target else (lo, mid)
        if hi / lo < 1 + 1e-9:
            break
    return math.sqrt(lo * hi)


def fit_link(rows: list, algorithm: str = "ring", max_ranks: Optional[int] = None) -> dict:
    """alpha, beta of ``algorithm``'s form fitted to bench/allreduce.py rows with at most
    ``max_ranks`` ranks (default: the cores here), by bench.allreduce.fit (least squares on
    relative error)."""
    max_ranks = max_ranks or os.cpu_count() or 1
    sub = [r for r in rows if algorithm in r and r["ranks"] <= max_ranks]
    if len({r["bytes"] for r in sub}) < 2:
        raise ValueError(f"scaling_model.py: fewer than 2 message sizes of '{algorithm}' with at "
                         f"most {max_ranks} ranks to fit (run bench/allreduce.py --ranks 2)")
    a, b, err = fit(sub, algorithm)
    return {"algorithm": algorithm, "alpha": a, "beta": b, "rms_rel_err": err,
            "rows": len(sub), "ranks": sorted({r["ranks"] for r in sub})}


_SCALING_HEAD = re.compile(r"# network ([\d-]+), minibatch (\d+), (\w+) mixing \(([\w-]+) "
                           r"all-reduce\) every (\d+) minibatches, (\d+) timed minibatches")
_SCALING_ROW = re.compile(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+"
                          r"(\d+)\b")
_SCALING_CPUS = re.compile(r", (\d+) CPUs\b")


def parse_scaling_output(text: str, source: str = "bench/scaling.py output") -> dict:
    """bench/scaling.py's stdout: the configuration line and one row per rank count."""
    head = _SCALING_HEAD.search(text)
    if head is None:
        raise ValueError(f"scaling_model.py: {source}: no '# network ...' line "
                         "(expected bench/scaling.py's stdout)")
    dims = [int(x) for x in head.group(1).split("-")]
    rows = [dict(zip(("ranks", "fps", "speedup", "optimize", "aggregate", "wall", "mixes"),
                     (int(m.group(1)), *(float(m.group(i)) for i in range(2, 7)),
                      int(m.group(7)))))
            for m in map(_SCALING_ROW.match, text.splitlines()) if m]
    if not any(r["ranks"] == 1 for r in rows):
        raise ValueError(f"scaling_model.py: {source}: no 1-rank row (run bench/scaling.py "
                         "--ranks 1,2)")
    line = text[head.start():].split("\n", 1)[0]
    cpus = _SCALING_CPUS.search(line)
    return {"dims": dims, "params": sum(a * b + b for a, b in zip(dims[:-1], dims[1:])),
            "minibatch": int(head.group(2)), "mixing": head.group(3),
            "allreduce": head.group(4), "average_every": int(head.group(5)),
            "minibatches": int(head.group(6)), "cpus": int(cpus.group(1)) if cpus else None,
            "rows": rows}


def worker_flops(spec: str, here_flops: float, params: float) -> float:
    """--worker-speed: '<r>x' (r times this machine's core) or frames/s of the modelled net."""
    s = spec.strip().lower()
    try:
        if s.endswith("x"):
            return float(s[:-1]) * here_flops
        return float(s) * FLOPS_PER_PARAM_FRAME * params
    except ValueError:
        raise SystemExit(f"scaling_model.py: --worker-speed={spec}: expected a ratio such as 4x "
                         "or frames per second such as 4535") from None


# The seeds' reported speedups over one GPU and the configuration behind each.
SEED_POINTS = [
    {"seed": "001", "method": "model averaging", "mixing": "allreduce", "workers": 16,
     "speedup": 9.3, "params": SEED001_PARAMS, "interval_frames": 10 * 1024,
     "config": "440-6x2048-8806, minibatch 1024, averaging every 10, NG-SGD, K20 GPUs "
               "(Stampede; network not stated)"},
    {"seed": "001", "method": "model averaging", "mixing": "allreduce", "workers": 32,
     "speedup": 17.0, "params": SEED001_PARAMS, "interval_frames": 10 * 1024,
     "config": "as above"},
    {"seed": "002", "method": "model averaging", "mixing": "allreduce", "workers": 8,
     "speedup": 7.3, "params": K40M_PARAMS, "interval_frames": SEED002_BLOCK_FRAMES,
     "config": "63M-parameter DNN, 8x620 partition (22.5 min of speech per split), K40m GPUs, "
               "56 Gb/s InfiniBand"},
    {"seed": "002", "method": "model averaging", "mixing": "allreduce", "workers": 16,
     "speedup": 14.5, "params": K40M_PARAMS, "interval_frames": SEED002_BLOCK_FRAMES,
     "config": "as above, 16x310"},
    {"seed": "002", "method": "model averaging", "mixing": "allreduce", "workers": 32,
     "speedup": 28.7, "params": K40M_PARAMS, "interval_frames": SEED002_BLOCK_FRAMES,
     "config": "as above, 32x155"},
    {"seed": "002", "method": "BMUF (CBM and NBM)", "mixing": "allreduce", "workers": 32,
     "speedup": 28.4, "params": K40M_PARAMS, "interval_frames": SEED002_BLOCK_FRAMES,
     "config": "as above, 32x155, block momentum 0.97"},
    {"seed": "002", "method": "BMUF-NBM", "mixing": "allreduce", "workers": 64,
     "speedup": 56.2, "params": K40M_PARAMS, "interval_frames": SEED002_BLOCK_FRAMES,
     "config": "as above, 64x78, block momentum 0.986"},
]


def load_rows(path: Path, out_dir: Path) -> tuple[list, str]:
    """bench/allreduce.py's rows from ``path``; when absent, measure them now (2 ranks, quick)."""
    if path.exists():
        try:
            return json.loads(path.read_text()), str(path)
        except json.JSONDecodeError as e:
            raise SystemExit(f"scaling_model.py: {path}: not bench/allreduce.py's JSON ({e})")
    dest = out_dir / "scaling_model_allreduce"
    print(f"scaling_model.py: {path} not found; measuring: bench/allreduce.py --quick --ranks 2 "
          f"--out-dir {dest}", file=sys.stderr)
    subprocess.run([sys.executable, str(ROOT / "bench" / "allreduce.py"), "--quick", "--ranks",
                    "2", "--algorithms", "mpi,ring,recursive-doubling,tree", "--out-dir",
                    str(dest)], check=True, stdout=subprocess.DEVNULL)
    f = dest / "allreduce.json"
    return json.loads(f.read_text()), f"{f} (measured in this run)"


def _compute_here(args) -> dict:
    """Compute time per minibatch here: --compute-ms, else bench/scaling.py's output (a file,
    or run now with one rank)."""
    if args.compute_ms:
        return {"source": "--compute-ms", "ms": args.compute_ms, "params": args.params,
                "minibatch": args.minibatch, "scaling": None}
    if args.scaling_output:
        p = Path(args.scaling_output)
        if not p.exists():
            raise SystemExit(f"scaling_model.py: no such file {p}")
        text, source = p.read_text(), str(p)
    else:
        print("scaling_model.py: no --compute-ms or --scaling-output; measuring: bench/scaling.py "
              "--ranks 1 --minibatches 5", file=sys.stderr)
        proc = subprocess.run([sys.executable, str(ROOT / "bench" / "scaling.py"), "--ranks", "1",
                               "--minibatches", "5"], text=True, capture_output=True)
        if proc.returncode != 0:
            raise SystemExit(f"scaling_model.py: bench/scaling.py failed:\n{proc.stderr[-2000:]}")
        text, source = proc.stdout, "bench/scaling.py --ranks 1 (measured in this run)"
    sc = parse_scaling_output(text, source)
    one = next(r for r in sc["rows"] if r["ranks"] == 1)
    return {"source": source, "ms": 1e3 * one["optimize"] / sc["minibatches"],
            "params": sc["params"], "minibatch": sc["minibatch"], "scaling": sc}


def _check_here(sc: Optional[dict], link: Link, algorithm: str) -> Optional[dict]:
    """The model against bench/scaling.py's own measurements on this machine: its speedup at
    every measured rank count above one that had a core per rank (the model assumes one;
    oversubscribed rows measure time sharing), from the 1-rank compute time, the all-reduces each
    run made and the link fitted here. None without such a row."""
    if not sc:
        return None
    one = next(r for r in sc["rows"] if r["ranks"] == 1)
    cpus = sc["cpus"] or 2          # not stated: the 2-rank row alone, the fewest that mix
    wl = Workload("bench/scaling.py", sc["params"], sc["average_every"] * sc["minibatch"])
    t_mb = one["optimize"] / sc["minibatches"]
    rows, body = [], []
    for r in sorted(sc["rows"], key=lambda r: r["ranks"]):
        p = r["ranks"]
        if p < 2 or p > cpus:
            continue
        wall = sc["minibatches"] * t_mb + r["mixes"] * mix_seconds(
            "allreduce", p, wl.nbytes, link, algorithm)
        pred = p * sc["minibatches"] * t_mb / wall
        err = pred / r["speedup"] - 1
        rows.append({"ranks": p, "mixes": r["mixes"], "measured": r["speedup"],
                     "predicted": pred, "rel_err": err})
        body.append(f"| {p} | {r['mixes']} | {r['speedup']:.2f} | {pred:.2f} | "
                    f"{100 * err:+.0f}% |")
    if not rows:
        return None
    where = f"{cpus} CPUs" if sc["cpus"] else "CPUs not stated"
    text = "\n".join([
        f"Check on this machine: bench/scaling.py's measured speedups at the rank counts with a "
        f"core each ({where}), against the model's from the 1-rank compute time, the "
        f"all-reduces of {wl.nbytes / 1e6:.0f} MB each run made and the link fitted here "
        f"(error: model / measured - 1).", "",
        "| ranks | all-reduces | measured speedup | model | error |",
        "|---:|---:|---:|---:|---:|", *body])
    return {"rows": rows, "text": text}


def get_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--allreduce-json", default=str(ROOT / "bench" / "out" / "allreduce.json"),
                   help="bench/allreduce.py's rows (measured now when absent)")
    p.add_argument("--scaling-output", default="", help="bench/scaling.py's stdout saved to a file")
    p.add_argument("--compute-ms", type=float, default=0.0,
                   help="compute time per minibatch here (of --minibatch frames, --params net)")
    p.add_argument("--bandwidth-gbps", type=float, default=56.0, help="cluster link, Gb/s")
    p.add_argument("--latency-us", type=float, default=None,
                   help="cluster per-message latency, us (default: alpha fitted here)")
    p.add_argument("--worker-speed", default="1x",
                   help="per worker: '<r>x' times this machine's core, or frames/s of the net")
    p.add_argument("--average-every", type=int, default=10, help="model averaging interval")
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--params", type=float, default=SEED001_PARAMS, help="model parameters")
    p.add_argument("--block-frames", type=float, default=SEED002_BLOCK_FRAMES,
                   help="BMUF block: frames per worker between synchronisations")
    p.add_argument("--algorithm", default="ring", choices=MODEL_ALGORITHMS,
                   help="all-reduce algorithm whose form is fitted and used")
    p.add_argument("--max-ranks", type=int, default=None,
                   help="fit alpha and beta to rows of at most this many ranks: the cores of "
                        "the machine that measured them (default: the cores here)")
    p.add_argument("--workers", default="16,32,64")
    p.add_argument("--out-dir", default=str(ROOT / "bench" / "out"))
    return p.parse_args(argv)


def _f(x: float, nd: int = 2) -> str:
    return f"{x:.{nd}f}"


def build(args) -> tuple[str, dict]:
    out_dir = Path(args.out_dir)
    workers = [int(x) for x in args.workers.split(",") if x]
    rows, rows_src = load_rows(Path(args.allreduce_json), out_dir)
    here_fit = fit_link(rows, args.algorithm, args.max_ranks)
    here_link = Link(here_fit["alpha"], here_fit["beta"])
    comp = _compute_here(args)
    here_flops = FLOPS_PER_PARAM_FRAME * comp["params"] * comp["minibatch"] / (comp["ms"] / 1e3)
    latency_us = args.latency_us if args.latency_us is not None else here_fit["alpha"] * 1e6
    link = Link.from_gbps(args.bandwidth_gbps, latency_us)
    flops = worker_flops(args.worker_speed, here_flops, args.params)
    k40 = K40M_FPS * FLOPS_PER_PARAM_FRAME * K40M_PARAMS
    ma = Workload(f"model averaging every {args.average_every} x {args.minibatch}", args.params,
                  args.average_every * args.minibatch)
    bmuf = Workload(f"BMUF, block {args.block_frames:g} frames", args.params, args.block_frames)
    res = {"fit": here_fit, "allreduce_source": rows_src, "compute": {
        k: v for k, v in comp.items() if k != "scaling"}, "here_gflops": here_flops / 1e9,
        "cluster": {"bandwidth_gbps": args.bandwidth_gbps, "latency_us": latency_us,
                    "worker_gflops": flops / 1e9, "worker_speed": args.worker_speed},
        "predictions": [], "seeds": []}
    lines = ["## Scaling model: predicted speedup on a cluster (issue 9 item 5)", "",
             "speedup(p) = p C / (C + T(p)): C = S x 6P / F compute between synchronisations "
             f"(S frames per worker, P parameters, F FLOP/s), T(p) the {args.algorithm} "
             "all-reduce of 4P bytes, 2(p-1) alpha + 2(p-1)/p n beta for ring (equations in "
             "bench/scaling_model.py).", "",
             f"- alpha, beta fitted here: {args.algorithm} all-reduce rows with "
             f"{', '.join(map(str, here_fit['ranks']))} ranks of {rows_src}: alpha = "
             f"{here_fit['alpha'] * 1e6:.1f} us, 1/beta = {1e-9 / here_fit['beta']:.2f} GB/s "
             f"(rms relative error {here_fit['rms_rel_err']:.2f} over {here_fit['rows']} rows).",
             f"- compute here ({comp['source']}): {comp['ms']:.1f} ms per minibatch of "
             f"{comp['minibatch']} frames for a {comp['params'] / 1e6:.1f}M-parameter network = "
             f"{here_flops / 1e9:.1f} GFLOP/s effective (one core).",
             f"- cluster: {args.bandwidth_gbps:g} Gb/s, latency {latency_us:.1f} us"
             f"{'' if args.latency_us is not None else ' (the alpha fitted here)'}, worker speed "
             f"{args.worker_speed} = {flops / 1e9:.1f} GFLOP/s "
             f"({flops / (FLOPS_PER_PARAM_FRAME * args.params):,.0f} frames/s of the "
             f"{args.params / 1e6:.1f}M-parameter network).", ""]
    check = _check_here(comp["scaling"], here_link, args.algorithm)
    if check:
        res["check"] = check["rows"]
        lines += [check["text"], ""]
    head = ["workers", "compute C per sync (s)", "all-reduce T (s)", "speedup", "efficiency",
            "overlapped (projection)", "1bit T (s)", "1bit (projection)",
            "1bit + overlapped (projection)"]
    for w in (ma, bmuf):
        lines += [f"### {w.name}, {args.params / 1e6:.1f}M parameters", ""]
        body = []
        for p in workers:
            r = predict(w, p, link, flops, args.algorithm)
            ov = predict(w, p, link, flops, args.algorithm, overlap=True)
            cb = predict(w, p, link, flops, args.algorithm, compression="1bit")
            both = predict(w, p, link, flops, args.algorithm, compression="1bit", overlap=True)
            res["predictions"].append({"workload": w.name, **r,
                                       "projections": {"overlapped": ov["speedup"],
                                                       "1bit_comm_s": cb["comm_s"],
                                                       "1bit": cb["speedup"],
                                                       "1bit_overlapped": both["speedup"]}})
            body.append(f"| {p} | {r['compute_s']:.3g} | {r['comm_s']:.3g} | "
                        f"{r['speedup']:.1f} | {100 * r['efficiency']:.0f}% | "
                        f"{ov['speedup']:.1f} | {cb['comm_s']:.3g} | {cb['speedup']:.1f} | "
                        f"{both['speedup']:.1f} |")
        lines += ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)] + body + [""]
    lines += ["### The seeds' reported speedups beside the model", "",
              f"Model columns: the cluster above (worker {args.worker_speed}), and a K40m "
              f"({K40M_FPS:,.0f} frames/s on 63M parameters = {k40 / 1e12:.2f} TFLOP/s, seed 002 "
              "Table 4). Last column: the bandwidth at which the model gives the seed's speedup at "
              "the K40m speed (- when no bandwidth does).", "",
              "| seed | method | workers | seed's speedup | model (cluster above) | model (K40m) "
              "| bandwidth for the seed's speedup (K40m) | configuration |",
              "|---|---|---:|---:|---:|---:|---:|---|"]
    for sp in SEED_POINTS:
        w = Workload(sp["method"], sp["params"], sp["interval_frames"], sp["mixing"])
        m1 = predict(w, sp["workers"], link, flops, args.algorithm)["speedup"]
        m2 = predict(w, sp["workers"], link, k40, args.algorithm)["speedup"]
        bw = bandwidth_for_speedup(w, sp["workers"], sp["speedup"], latency_us, k40,
                                   args.algorithm)
        res["seeds"].append({**sp, "model": m1, "model_k40m": m2, "bandwidth_gbps": bw})
        lines.append(f"| {sp['seed']} | {sp['method']} | {sp['workers']} | {sp['speedup']:g} | "
                     f"{m1:.1f} | {m2:.1f} | {'-' if bw is None else f'{bw:.3g} Gb/s'} | "
                     f"{sp['config']} |")
    return "\n".join(lines) + "\n", res


def plot(res: dict, path: Path, workers: list) -> None:
    from bench.experiments.plot import PALETTE, Series, line_chart
    ps = sorted(set([1, 2, 4, 8] + workers))
    series = [Series("linear", ps, ps, "0.7", "dashed")]
    b = res["cluster"]
    link = Link.from_gbps(b["bandwidth_gbps"], b["latency_us"])
    flops = b["worker_gflops"] * 1e9
    k40 = K40M_FPS * FLOPS_PER_PARAM_FRAME * K40M_PARAMS
    seed001 = Workload("seed001", SEED001_PARAMS, 10240)
    seed002 = Workload("seed002", K40M_PARAMS, SEED002_BLOCK_FRAMES)
    alg = res["fit"]["algorithm"]
    for i, (name, w, f, kind) in enumerate([
            ("model: seed 001 MA (cluster)", seed001, flops, "line"),
            ("model: seed 001 MA (K40m)", seed001, k40, "dashed"),
            ("model: seed 002 BMUF (cluster)", seed002, flops, "line"),
            ("model: seed 002 BMUF (K40m)", seed002, k40, "dashed")]):
        ys = [predict(w, p, link, f, alg)["speedup"] for p in ps]
        series.append(Series(name, ps, ys, PALETTE[i // 2 * 2], kind))
    ma = [s for s in res["seeds"] if s["seed"] == "001"]
    bm = [s for s in res["seeds"] if s["seed"] == "002" and "BMUF" in s["method"]]
    series.append(Series("seed 001 MA, reported", [s["workers"] for s in ma],
                         [s["speedup"] for s in ma], PALETTE[0], "points"))
    series.append(Series("seed 002 BMUF, reported", [s["workers"] for s in bm],
                         [s["speedup"] for s in bm], PALETTE[2], "points"))
    line_chart(path, series, f"Predicted speedup, {b['bandwidth_gbps']:g} Gb/s link",
               "workers (MPI ranks, one GPU each)", "speedup over 1 worker (x)",
               xlog2=True, ymax=max(ps) * 1.05, ylog2=True)


def write_outputs(out: Path, text: str, res: dict) -> None:
    """scaling_model.md, .json (through temporary names) and .png in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for name, data in (("scaling_model.md", text),
                       ("scaling_model.json", json.dumps(res, indent=1) + "\n")):
        tmp = out / (name + ".tmp")
        tmp.write_text(data)
        os.replace(tmp, out / name)
    plot(res, out / "scaling_model.png", [p["workers"] for p in res["predictions"]])


def main(argv=None) -> int:
    args = get_args(argv)
    text, res = build(args)
    write_outputs(Path(args.out_dir), text, res)
    print(text)
    print(f"wrote {Path(args.out_dir) / 'scaling_model.md'}, .json, .png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
