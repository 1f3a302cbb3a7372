#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Does OpenBLAS's sgemm give the same bits with 1 and N threads? The measurement behind
nnetmix/kernel_pin.py's OPENBLAS_NUM_THREADS=1 (docs/reproducibility.md).

For each product shape of the digits DNN and RBMs (minibatch 256, 143 inputs, 512 and 64 hidden,
67 outputs; forward and weight-gradient orientations) this runs one process per thread count
with the pinned kernels (OPENBLAS_CORETYPE=Haswell) and the given OPENBLAS_NUM_THREADS, and
prints the md5 of each product and how many differ from the one-thread result.

  python3 bench/blas_threads.py [--threads 1 2 4]
"""
import argparse
import os
import subprocess
import sys

SHAPES = [(256, 143, 512), (143, 256, 512), (512, 256, 512), (256, 512, 67), (512, 256, 143),
          (256, 143, 64), (143, 256, 64)]

WORKER = """
import hashlib, sys
import nnetmix, numpy as np
shapes = eval(sys.argv[1])
rng = np.random.default_rng(0)
for m, k, n in shapes:
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    print(hashlib.md5((a @ b).tobytes()).hexdigest()[:12])
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = p.parse_args()
    cols = {}
    for t in args.threads:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": str(t)}
        out = subprocess.run([sys.executable, "-c", WORKER, repr(SHAPES)], env=env, text=True,
                             capture_output=True, check=True).stdout.split()
        cols[t] = out
    print("| m x k x n | " + " | ".join(f"{t} thread(s)" for t in args.threads) + " |")
    print("| --- |" + " --- |" * len(args.threads))
    for i, (m, k, n) in enumerate(SHAPES):
        print(f"| {m}x{k}x{n} | " + " | ".join(cols[t][i] for t in args.threads) + " |")
    first = args.threads[0]
    for t in args.threads[1:]:
        diff = sum(a != b for a, b in zip(cols[first], cols[t]))
        print(f"{t} threads against {first}: {diff} of {len(SHAPES)} products differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
