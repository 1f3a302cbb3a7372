#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Frames per second of one training step (forward, BPTT, update) of one recurrent layer.

The shape is seed 002's: 40 streams of 64 + 42 frames (a CSC-BPTT chunk with its context) per
step, a BLSTM layer of 2 x 512 cells with 2 x 128 projections (or an LSTM of 512 cells with a
256 projection) on a 256-dim input. Each thread count runs in a worker process of its own with
OMP/OPENBLAS/NUMBA_NUM_THREADS set before numpy loads. This machine is shared and noisy:
per-step times are medians. The per-step GEMMs of the recurrence are small (40 rows), where
OpenBLAS's threads can lose more to waiting than they gain.

Usage: bench/lstm_step_speed.py [--threads 1,2] [--steps 5] [--kind Blstm|Lstm]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def worker(kind: str, steps: int) -> float:
    import numpy as np

    from nnetmix.kernels import get_backend
    from nnetmix.nnet import Nnet, NnetTrainOptions, init_components

    S, T, I, C = 40, 64 + 42, 256, 512
    out = 256
    net = Nnet(init_components(f"<{kind}Projected> <InputDim> {I} <OutputDim> {out} "
                               f"<CellDim> {C}"), backend=get_backend("cpu"))
    net.set_seq_lengths([T] * S)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((S * T, I)).astype(np.float32)
    dy = (rng.standard_normal((S * T, out)) * 1e-3).astype(np.float32)
    opts = NnetTrainOptions(learn_rate=1e-5, momentum=0.9)
    times = []
    for _ in range(steps + 1):  # the first compiles the kernels
        t0 = time.perf_counter()
        net.propagate(x)
        net.backpropagate(dy, input_diff=True)
        net.update(opts)
        times.append(time.perf_counter() - t0)
    times = sorted(times[1:])
    return S * T / times[len(times) // 2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--kind", default="Blstm", choices=("Blstm", "Lstm"))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        print(worker(a.kind, a.steps))
        return 0
    print(f"{a.kind}Projected 256 -> 256, cell 512, 40 streams x 106 frames per step")
    for n in a.threads.split(","):
        env = dict(os.environ, OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n, NUMBA_NUM_THREADS=n)
        fps = float(subprocess.run([sys.executable, __file__, "--worker", "--kind", a.kind,
                                    "--steps", str(a.steps)], env=env, check=True,
                                   capture_output=True, text=True).stdout.split()[-1])
        print(f"threads {n}: {fps:8.0f} frames/s ({40 * 106 / fps * 1e3:.0f} ms per step)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
