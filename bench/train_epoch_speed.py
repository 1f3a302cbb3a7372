#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Frames per second of nnetmix's own trainer (train_epoch), plain SGD against NG-SGD.

bench/train_throughput.py times a training step on its own; this times what
nnet-train-frmshuff.py runs per epoch: the frame randomizer, the copy of each minibatch to the
backend, the step (on a GPU recorded once as a CUDA graph and replayed; with NG-SGD the
minibatches that update a Fisher estimate run kernel by kernel) and the loss read-backs. The
utterances are synthetic and in memory (500 frames each), so reading features is left out. Each
row trains a warm-up epoch on a few utterances first (numba compilation, graph recording), then
the timed epoch. The NG-SGD overhead column is the time per frame over plain SGD's, minus one.
Usage: bench/train_epoch_speed.py [--backend cpu|cuda] [--nets large,small] [--utts 130]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NETS = {"large": [440] + [2048] * 6 + [8806], "small": [440] + [512] * 3 + [500]}


def epoch_fps(backend: str, dims, optimizer: str, n_utts: int, mb: int) -> float:
    import numpy as np

    from nnetmix.kernels import get_backend
    from nnetmix.nnet import AffineTransform, Nnet, NnetTrainOptions, Sigmoid, Softmax
    from nnetmix.train import TrainOptions, train_epoch
    from nnetmix.train.ngsgd import setup_optimizer
    from nnetmix.train.options import OptimizerOptions
    rng = np.random.default_rng(1)
    comps = []
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        W = (rng.standard_normal((b, a), dtype=np.float32) / np.sqrt(a)).astype(np.float32)
        comps += [AffineTransform(a, b, W, np.zeros(b, np.float32)),
                  Sigmoid(b, b) if i < len(dims) - 2 else Softmax(b, b)]
    be = get_backend(backend)
    nnet = Nnet(comps).to_backend(be)
    setup_optimizer(nnet, OptimizerOptions(optimizer=optimizer))
    utts = [(f"u{i}", rng.standard_normal((500, dims[0]), dtype=np.float32),
             rng.integers(0, dims[-1], 500).astype(np.int32)) for i in range(n_utts)]
    opts = TrainOptions(minibatch_size=mb, randomizer_size=32768, prefetch=False,
                        check_params_every=0)
    upd = NnetTrainOptions(learn_rate=0.001, momentum=0.9)
    train_epoch(nnet, iter(utts[:10]), opts, upd)
    be.synchronize()
    t = time.perf_counter()
    st = train_epoch(nnet, iter(utts), opts, upd)
    be.synchronize()
    return st.frames / (time.perf_counter() - t)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--nets", default="large,small")
    p.add_argument("--utts", type=int, default=130, help="utterances of 500 frames per epoch")
    p.add_argument("--minibatch", type=int, default=1024)
    args = p.parse_args(argv)
    print(f"# train_epoch on {args.backend}, minibatch {args.minibatch}, "
          f"{args.utts} utterances of 500 frames")
    print("| network | SGD fr/s | NG-SGD fr/s | NG-SGD overhead |")
    print("|---|---:|---:|---:|")
    for net in args.nets.split(","):
        dims = NETS[net]
        sgd = epoch_fps(args.backend, dims, "sgd", args.utts, args.minibatch)
        ng = epoch_fps(args.backend, dims, "ngsgd", args.utts, args.minibatch)
        name = f"{dims[0]}-{len(dims) - 2}x{dims[1]}-{dims[-1]}"
        print(f"| {name} | {sgd:,.0f} | {ng:,.0f} | {100 * (sgd / ng - 1):.0f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
