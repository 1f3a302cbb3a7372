#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Frames per second of one CD-1 step (nnetmix.rbm.Cd1) beside a PyTorch CD-1 of the same shapes.

The shapes are the seeds' DBN (Kaldi's pretrain_dbn.sh defaults): the Gaussian-Bernoulli first
RBM 440-2048 and a Bernoulli-Bernoulli 2048-2048 one, at Kaldi's RBM minibatch of 100 frames
and at 1024. One step is Kaldi's Rbm training: hidden probabilities, Bernoulli sampling,
reconstruction, hidden probabilities again, the reconstruction error read back, and the
momentum update of W and both biases (plus, for the Gaussian RBM, the weight-explosion check,
which reads the reconstruction back). nnetmix draws its uniforms on the host (numpy's PCG64,
so cpu and cuda train the same model from the same seed) and copies them to the GPU; the torch
reference draws them on the device (torch.rand) and reads back only the error, as Kaldi's
cuRAND does. Medians of the timed steps, both sides synchronised after each step. With
``--json FILE`` the rows are also written there (bench/plans/speed.toml stores them).
Usage: bench/rbm_throughput.py [--backend cpu|cuda] [--minibatch 100,1024] [--steps 20]
                               [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.experiments.report import write_atomic  # noqa: E402  (after the path)

SHAPES = [(440, 2048, "gauss"), (2048, 2048, "bern")]


def ours(backend: str, vis: int, hid: int, vis_type: str, mb: int, steps: int) -> float:
    import numpy as np

    from nnetmix.kernels import get_backend
    from nnetmix.nnet import Nnet
    from nnetmix.nnet.components import Rbm
    from nnetmix.rbm import Cd1
    rng = np.random.default_rng(0)
    rbm = Rbm(vis, hid, rng.standard_normal((hid, vis)) * 0.01, np.zeros(vis), np.zeros(hid),
              vis_type=vis_type, hid_type="bern")
    be = get_backend(backend)
    cd1 = Cd1(Nnet([rbm]).to_backend(be), 0.01 if vis_type == "gauss" else 0.4, 0.9, 0.0002)
    x = (rng.standard_normal((mb, vis)) if vis_type == "gauss" else rng.random((mb, vis)))
    x = x.astype(np.float32)
    times = []
    for k in range(steps + 3):
        be.synchronize()
        t = time.perf_counter()
        cd1.step(x)
        be.synchronize()
        if k >= 3:
            times.append(time.perf_counter() - t)
    return mb / float(np.median(times))


def torch_cd1(device: str, vis: int, hid: int, vis_type: str, mb: int, steps: int):
    try:
        import torch
    except ImportError:
        return None
    g = torch.Generator(device=device).manual_seed(0)
    W = torch.randn(hid, vis, device=device, generator=g) * 0.01
    bv, bh = torch.zeros(vis, device=device), torch.zeros(hid, device=device)
    vW, vbv, vbh = torch.zeros_like(W), torch.zeros_like(bv), torch.zeros_like(bh)
    x = (torch.randn if vis_type == "gauss" else torch.rand)(mb, vis, device=device, generator=g)
    lr, mmt = (0.01 if vis_type == "gauss" else 0.4), 0.9
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def step():
        ph = torch.sigmoid(x @ W.T + bh)
        hs = (ph > torch.rand(ph.shape, device=device, generator=g)).to(x.dtype)
        nv = hs @ W + bv
        if vis_type == "bern":
            nv = torch.sigmoid(nv)
        nh = torch.sigmoid(nv @ W.T + bh)
        err = float(((nv - x) ** 2).sum())
        if vis_type == "gauss":
            float(nv.std())  # the weight-explosion check reads the reconstruction's spread
        n = float(mb)
        vW.mul_(mmt).addmm_(ph.T, x, alpha=lr / n).addmm_(nh.T, nv, alpha=-lr / n)
        vW.add_(W, alpha=-lr * 0.0002)
        vbv.mul_(mmt).add_((x - nv).sum(0), alpha=lr / n)
        vbh.mul_(mmt).add_((ph - nh).sum(0), alpha=lr / n)
        W.add_(vW), bv.add_(vbv), bh.add_(vbh)
        return err

    import numpy as np
    times = []
    for k in range(steps + 3):
        sync()
        t = time.perf_counter()
        step()
        sync()
        if k >= 3:
            times.append(time.perf_counter() - t)
    return mb / float(np.median(times))


def report(data: dict) -> str:
    """The markdown table of one run's rows (what the script prints, and what bench/RESULTS.md
    renders from a stored ``--json`` output)."""
    out = [f"# CD-1 steps on {data['backend']}, medians of {data['steps']} steps", "",
           "| RBM | minibatch | nnetmix fr/s | torch fr/s | nnetmix/torch |",
           "|---|---:|---:|---:|---:|"]
    for r in data["rows"]:
        a, b = r["ours_fps"], r["torch_fps"]
        ratio = f"{a / b:.2f}x" if b else "-"
        out.append(f"| {r['type']}-bern {r['vis']}-{r['hid']} | {r['mb']} | {a:,.0f} | "
                   f"{f'{b:,.0f}' if b else '-'} | {ratio} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--minibatch", default="100,1024")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--json", default="", help="also write the rows to this file (JSON; "
                   "report() renders them)")
    args = p.parse_args(argv)
    rows = []
    for vis, hid, vt in SHAPES:
        for mb in (int(m) for m in args.minibatch.split(",")):
            rows.append({"vis": vis, "hid": hid, "type": vt, "mb": mb,
                         "ours_fps": ours(args.backend, vis, hid, vt, mb, args.steps),
                         "torch_fps": torch_cd1(args.backend, vis, hid, vt, mb, args.steps)})
    data = {"backend": args.backend, "steps": args.steps, "rows": rows}
    print(report(data), end="")
    if args.json:
        write_atomic(Path(args.json), json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
