#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Host cost of one GPU kernel launch by each route the cuda backend could take.

A small training step (440-3x512-500, minibatch 256) does about 30 launches whose device time is
a few microseconds each, so what the host spends per launch decides its speed. This measures, on
a tiny axpy (so device time is negligible) and a cuBLAS sgemm, the microseconds per call of:

- numba-cuda's dispatcher, ``kernel[grid, block](args)`` (what the backend did first);
- the same with the configured launcher kept (``cfg = kernel[grid, block]; cfg(args)``);
- the compiled kernel's own ``launch`` (skipping the dispatcher's type resolution);
- CuPy's RawKernel and ElementwiseKernel on CuPy arrays;
- the zero-copy views between the two (``cupy.asarray(numba array)``, ``cuda.as_cuda_array``);
- ``cupy.cublas.gemm`` on a 256x512x512 product;
- one replay of a CUDA graph holding 100 launches (per launch).

Each is the median over 7 blocks of 200 calls, with a device synchronisation after each block.
Usage: bench/cuda_launch.py   (needs a GPU, numba-cuda and CuPy)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def per_call_us(fn, sync, calls: int = 200, blocks: int = 7) -> float:
    import numpy as np
    fn()
    sync()
    out = []
    for _ in range(blocks):
        sync()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        out.append((time.perf_counter() - t) / calls * 1e6)
    return float(np.median(out))


def main() -> int:
    import numpy as np
    import cupy as cp
    import cupy.cublas  # noqa: F401  (cp.cublas is a submodule)
    from numba import cuda, float32

    rows = []

    def add(name, fn, sync=cuda.synchronize, calls=200):
        try:
            rows.append((name, per_call_us(fn, sync, calls)))
        except Exception as e:  # one route failing must not hide the others
            rows.append((name, f"failed: {type(e).__name__}: {str(e)[:80]}"))

    n = 1024

    @cuda.jit
    def axpy(alpha, x, y):
        i = cuda.grid(1)
        if i < y.size:
            y[i] += alpha * x[i]

    sig = (float32, float32[::1], float32[::1])
    axpy_sig = cuda.jit([sig])(axpy.py_func)
    x = cuda.to_device(np.ones(n, np.float32))
    y = cuda.to_device(np.zeros(n, np.float32))
    a = np.float32(0.5)
    add("numba dispatcher k[g, b](...)", lambda: axpy[8, 128](a, x, y))
    cfg = axpy[8, 128]
    add("numba configured launcher kept", lambda: cfg(a, x, y))
    cfg_sig = axpy_sig[8, 128]
    add("numba explicit signature, configured", lambda: cfg_sig(a, x, y))
    try:
        kern = next(iter(axpy_sig.overloads.values()))
        add("numba compiled kernel .launch()", lambda: kern.launch((a, x, y), (8, 1, 1), (128, 1, 1), 0, 0))
    except Exception as e:
        rows.append(("numba compiled kernel .launch()", f"failed: {e}"))
    s = cuda.stream()
    cfg_s = axpy[8, 128, s]
    add("numba configured on a stream", lambda: cfg_s(a, x, y), sync=s.synchronize)

    raw = cp.RawKernel(r"""
    extern "C" __global__ void axpy(float alpha, const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] += alpha * x[i];
    }""", "axpy")
    cx, cy = cp.ones(n, cp.float32), cp.zeros(n, cp.float32)
    ni = np.int32(n)
    add("cupy RawKernel", lambda: raw((8,), (128,), (a, cx, cy, ni)), sync=cp.cuda.Device().synchronize)
    ew = cp.ElementwiseKernel("float32 alpha, float32 x", "float32 y", "y += alpha * x", "axpy_ew")
    add("cupy ElementwiseKernel", lambda: ew(a, cx, cy), sync=cp.cuda.Device().synchronize)
    add("cupy.asarray(numba array)", lambda: cp.asarray(x), sync=lambda: None)
    add("cuda.as_cuda_array(cupy array)", lambda: cuda.as_cuda_array(cx), sync=lambda: None)
    add("numba DeviceNDArray.reshape", lambda: y.reshape(32, 32), sync=lambda: None)

    A = cp.random.standard_normal((256, 512), dtype=cp.float32)
    W = cp.random.standard_normal((512, 512), dtype=cp.float32)
    C = cp.empty((256, 512), cp.float32)
    add("cupy.cublas.gemm 256x512x512", lambda: cp.cublas.gemm("N", "T", A, W, out=C),
        sync=cp.cuda.Device().synchronize)
    nA, nW, nC = cuda.as_cuda_array(A), cuda.as_cuda_array(W), cuda.as_cuda_array(C)
    add("cupy.cublas.gemm on numba views", lambda: cp.cublas.gemm(
        "N", "T", cp.asarray(nA), cp.asarray(nW), out=cp.asarray(nC)), sync=cp.cuda.Device().synchronize)

    try:
        cs = cp.cuda.Stream(non_blocking=True)
        ns = cuda.external_stream(cs.ptr)
        cfg_g = axpy_sig[8, 128, ns]
        with cs:
            cs.begin_capture()
            for _ in range(100):
                cfg_g(a, x, y)
            graph = cs.end_capture()
        add("CUDA graph of 100 numba launches (per launch)", lambda: graph.launch(cs),
            sync=cs.synchronize, calls=20)
        rows[-1] = (rows[-1][0], rows[-1][1] / 100 if isinstance(rows[-1][1], float) else rows[-1][1])
    except Exception as e:
        rows.append(("CUDA graph of 100 numba launches (per launch)", f"failed: {type(e).__name__}: {e}"))

    import numba
    import numba_cuda
    print(f"numba {numba.__version__}, numba-cuda {getattr(numba_cuda, '__version__', '?')}, "
          f"cupy {cp.__version__}, numpy {np.__version__}, device {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print("| launch route | µs per call (host, median) |")
    print("|---|---:|")
    for name, v in rows:
        print(f"| {name} | {v:.1f} |" if isinstance(v, float) else f"| {name} | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
