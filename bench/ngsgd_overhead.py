#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Cost of NG-SGD per training step on the cpu (or cuda) backend, beside the plain-SGD step.

The network is the seeds' large one, 440-6x2048-8806 (affine + sigmoid hidden layers, affine +
softmax output), float32, minibatch 1024, Kaldi's NG-SGD defaults (rank_in 20, rank_out 80,
update_period 4, num_samples_history 2000, alpha 4). A step is what train_epoch does per
minibatch: propagate, softmax_xent, backpropagate (input_diff=False), update.

Measured in ONE process, in alternating blocks (SGD block, NG-SGD block, ...) so load changes on
this shared machine hit both alike; every block is a multiple of update_period steps, so the
subspace updates are counted at their real rate. The NG-SGD state is initialised by one step
and then set past Kaldi's 10 eager-update minibatches (the steady state of an epoch).
Two estimates of the overhead:

* step:  median(NG-SGD step) - median(SGD step), as a fraction of median(SGD step);
* hook:  median per-step time inside the NG-SGD gradient hook (preconditioning both sides of
  every affine layer + its weight-gradient GEMMs) minus the median per-step time of the plain
  weight/bias gradient it replaces, as a fraction of median(SGD step) (less noisy).

Medians throughout; the 1-minute load average is printed before and after (other jobs share
the cores). With --backend cuda every timed call ends with a device synchronisation, so the
per-part times are the GPU's. Writes bench/out/ngsgd_overhead[_cuda].{md,json}.
Usage: bench/ngsgd_overhead.py [--backend cpu] [--rounds 3] [--block 4] [--minibatch 1024] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

NETS = {"large": [440] + [2048] * 6 + [8806], "small": [440] + [512] * 3 + [500]}


def get_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--net", default="large", choices=sorted(NETS))
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=3, help="alternating SGD/NG-SGD block pairs")
    p.add_argument("--block", type=int, default=4, help="steps per block (a multiple of 4)")
    p.add_argument("--quick", action="store_true", help="small net, 1 round (a smoke run)")
    p.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--out", default="", help="output prefix (default bench/out/ngsgd_overhead"
                   "[_cuda])")
    return p.parse_args(argv)


def build_net(dims, rng):
    from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax
    comps = []
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        w = rng.standard_normal((b, a)).astype(np.float32) * np.float32(1.0 / np.sqrt(a))
        comps.append(AffineTransform(a, b, w, np.zeros(b, np.float32)))
        comps.append(Sigmoid(b, b) if i < len(dims) - 2 else Softmax(b, b))
    return Nnet(comps)


class Timer:
    """Wraps a callable and sums the seconds spent in it."""

    def __init__(self, fn, sync=lambda: None):
        self.fn, self.sync, self.total = fn, sync, 0.0

    def __call__(self, *a, **kw):
        self.sync()
        t0 = time.perf_counter()
        try:
            return self.fn(*a, **kw)
        finally:
            self.sync()
            self.total += time.perf_counter() - t0


def main(argv=None) -> int:
    args = get_args(argv)
    if args.quick:
        args.net, args.rounds, args.minibatch = "small", 1, 256
    from nnetmix.kernels import get_backend
    from nnetmix.nnet import AffineTransform, NnetTrainOptions
    from nnetmix.train.ngsgd import NaturalGradient
    from nnetmix.train.options import OptimizerOptions

    be = get_backend(args.backend)
    sync = be.synchronize if args.backend == "cuda" else (lambda: None)
    rng = np.random.default_rng(777)
    dims = NETS[args.net]
    nnet = build_net(dims, rng).to_backend(be)
    n = args.minibatch
    x = rng.standard_normal((n, dims[0])).astype(np.float32)
    t = rng.integers(0, dims[-1], n).astype(np.int32)
    probs = be.empty((n, dims[-1]))
    grad = be.empty((n, dims[-1]))
    upd = NnetTrainOptions(learn_rate=0.008 * 256 / n / 10)   # small: the net stays sane
    ng = NaturalGradient(nnet, OptimizerOptions(optimizer="ngsgd"))

    plain = Timer(AffineTransform.accumulate_gradient, sync)
    AffineTransform.accumulate_gradient = lambda self, b, xx, dy: plain(self, b, xx, dy)
    hook = Timer(ng.accumulate_gradient, sync)
    ng.accumulate_gradient = hook
    limit = Timer(ng.before_update, sync)
    ng.before_update = limit

    def step():
        logits = nnet.propagate(x, through_softmax=False)
        be.softmax_xent(logits, t, probs, grad)
        nnet.backpropagate(grad, input_diff=False)
        nnet.update(upd, n)

    def block(use_ng: bool):
        nnet.preconditioner = ng if use_ng else None
        times, parts = [], []
        for _ in range(args.block):
            h0, p0, l0 = hook.total, plain.total, limit.total
            sync()
            t0 = time.perf_counter()
            step()
            sync()
            times.append(time.perf_counter() - t0)
            parts.append((hook.total - h0) + (limit.total - l0) if use_ng else plain.total - p0)
        return times, parts

    load0 = os.getloadavg()
    # warm-up: numba compiles, buffers, NG-SGD initialisation; then past the eager phase
    block(False)
    nnet.preconditioner = ng
    step()
    for layer in ng.layers.values():
        for side in (layer.inp, layer.out):
            side.t = 12   # next steps: 12 (update), 13, 14, 15, 16 (update), ...
    sgd_t, sgd_p, ng_t, ng_p = [], [], [], []
    for r in range(args.rounds):
        a, b = block(False)
        sgd_t += a
        sgd_p += b
        a, b = block(True)
        ng_t += a
        ng_p += b
        print(f"round {r + 1}/{args.rounds}: sgd {statistics.median(sgd_t):.3f} s, "
              f"ngsgd {statistics.median(ng_t):.3f} s", file=sys.stderr)
    load1 = os.getloadavg()
    med = statistics.median
    s, g = med(sgd_t), med(ng_t)
    hook_over = med(ng_p) - med(sgd_p)
    res = {
        "net": "-".join(map(str, dims)), "minibatch": n, "backend": args.backend,
        "threads_numba": _numba_threads(),
        "steps_per_optimizer": len(sgd_t), "sgd_step_s": s, "ngsgd_step_s": g,
        "sgd_step_min_s": min(sgd_t), "ngsgd_step_min_s": min(ng_t),
        "overhead_step": (g - s) / s, "plain_grad_s": med(sgd_p), "ngsgd_hook_s": med(ng_p),
        "overhead_hook": hook_over / s, "loadavg_before": load0[0], "loadavg_after": load1[0],
        "ngsgd_updates_limited": ng.num_limited,
    }
    res["cores"] = os.cpu_count()
    table = report(res)
    print(table, end="")
    out = Path(args.out or ROOT / "bench" / "out" / (
        "ngsgd_overhead" + ("_cuda" if args.backend == "cuda" else "")))
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(str(out) + ".md").write_text(table)
    Path(str(out) + ".json").write_text(json.dumps(res, indent=1) + "\n")
    return 0


def report(res: dict) -> str:
    """The markdown table of one run's JSON (what the script prints and writes to .md, and what
    bench/RESULTS.md renders from a stored one)."""
    s, g = res["sgd_step_s"], res["ngsgd_step_s"]
    s_min, g_min = res["sgd_step_min_s"], res["ngsgd_step_min_s"]
    return "\n".join([
        f"# NG-SGD overhead, {res['backend']} backend, {res['net']}, minibatch "
        f"{res['minibatch']}, {res['threads_numba']} threads",
        "",
        "| quantity | plain SGD | NG-SGD | overhead (fraction of the SGD step) |",
        "| --- | ---: | ---: | ---: |",
        f"| training step, median s ({res['steps_per_optimizer']} steps each) | {s:.3f} | "
        f"{g:.3f} | {res['overhead_step']:.1%} |",
        f"| training step, min s | {s_min:.3f} | {g_min:.3f} | "
        f"{(g_min - s_min) / s_min:.1%} |",
        f"| gradient of the affine layers, median s per step | {res['plain_grad_s']:.3f} | "
        f"{res['ngsgd_hook_s']:.3f} | {res['overhead_hook']:.1%} |",
        "",
        f"load average (1 min): {res['loadavg_before']:.2f} before, "
        f"{res['loadavg_after']:.2f} after, on {res['cores']} cores; target: overhead <= 15%",
    ]) + "\n"


def _numba_threads() -> int:
    import numba
    return numba.get_num_threads()


if __name__ == "__main__":
    sys.exit(main())
