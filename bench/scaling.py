#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Throughput of data-parallel training over MPI with model averaging: 1 rank against N ranks.

Each configuration runs ``mpiexec -n R python bench/scaling.py --worker ...`` with one thread per
rank (OMP/OPENBLAS/MKL/NUMBA_NUM_THREADS=1). Every rank builds the same network in memory
(the seed 001 network 440-6x2048-8806 by default: 40.4M parameters, 162 MB in float32) and its
own synthetic utterances (features and targets from a per-rank seed), then runs exactly what
nnet-train-mpi.py runs per rank: :func:`nnetmix.train.train_epoch` with the agreed number of
minibatches and a hook that mixes every ``--average-every`` minibatches through a
:class:`nnetmix.parallel.Mixer` (all-reduce by default), then the end-of-epoch exact average.
Reading features from disk is left out: the measurement is training + mixing. With
``--backend cuda`` every rank trains on a GPU (ranks share a node's GPUs round-robin, so 2 ranks
on a one-GPU machine share it: the row then measures the mixing cost of device buffers, not a
speedup); the buffers column says whether they went to MPI directly (``device``, CUDA-aware MPI)
or through pinned host memory (``staged``). Aggregate time includes waiting for the GPU work
queued before the mix.

Reported per configuration: frames per second over all ranks (total frames / the slowest rank's
wall time), speedup over 1 rank, and the seed 002 (table 4) split per rank (mean over ranks):
aggregate (mixing, all-reduce, including waiting for the slowest rank) and optimize (the rest of
the wall time: forward, backward, update, the in-memory randomizer). The first minibatch is a warm-up (numba
compilation, page faults) and is not timed. The machine is shared: the load average before and
after each run is printed; read the table with it.

With ``--overlap-mixing`` every rank count above 1 runs twice, blocking and overlapped
(:mod:`nnetmix.parallel.overlap`: each block's all-reduce runs while the next block computes,
progressed by MPI_Test after each minibatch), and the mode column says which. The overlapped
run also times, after its training, as many blocking all-reduces of the same buffer as it
overlapped behind a block (each after a barrier, so no rank waits for another): the blocking
column. The epoch's last all-reduce, started at its last block end, has no block to run behind
and is waited for at once (in a real epoch as here); it is left out of the wait, late, blocking
and hidden columns (with the default 20 minibatches in blocks of 10 only one all-reduce runs
behind a block: pass more minibatches for more). Its wait column is the time in MPI_Wait, and
late the part of it before the last rank reached the same block end (from the ranks' arrival
times on the one clock of the host), which a blocking mix waits as well: waiting for the
slowest rank is not communication. The hidden column is the share of the blocking all-reduce
time the overlapped run did not wait once all ranks were there, 1 - (wait - late) / blocking,
all means over ranks of the same run. Its aggregate column is everything mixing still took
(snapshot and start, tests, waits, applying the delayed update, the epoch's last all-reduce).
Usage: bench/scaling.py [--ranks 1,2] [--minibatches 20] [--average-every 10] [--minibatch 1024]
                        [--dims 440,2048,2048,2048,2048,2048,2048,8806] [--mixing allreduce]
                        [--allreduce mpi] [--overlap-mixing] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def _net(dims, seed=1):
    import numpy as np

    from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax
    rng = np.random.default_rng(seed)
    comps = []
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        W = (rng.standard_normal((b, a), dtype=np.float32) * (1.0 / np.sqrt(a))).astype(np.float32)
        comps.append(AffineTransform(a, b, W, np.zeros(b, dtype=np.float32)))
        comps.append(Sigmoid(b, b) if i < len(dims) - 2 else Softmax(b, b))
    return Nnet(comps)


def worker(args) -> None:
    import numpy as np
    from mpi4py import MPI

    from nnetmix.kernels import bind_device, get_backend
    from nnetmix.nnet import NnetTrainOptions
    from nnetmix.parallel import AllReducer, Mixer, agree_minibatches
    from nnetmix.parallel.overlap import OverlapMixer
    from nnetmix.train import TrainOptions, train_epoch

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    dims = [int(x) for x in args.dims.split(",")]
    if args.backend == "cuda":
        bind_device(comm=comm)  # the ranks of a node share its GPUs round-robin
    nnet = _net(dims).to_backend(get_backend(args.backend))
    mb, steps = args.minibatch, args.minibatches + 1  # +1: the untimed warm-up
    rng = np.random.default_rng(100 + rank)
    utt_len = 500
    n_utts = -(-steps * mb // utt_len) + 1
    utts = [(f"r{rank}u{i}", rng.standard_normal((utt_len, dims[0]), dtype=np.float32),
             rng.integers(0, dims[-1], utt_len).astype(np.int32)) for i in range(n_utts)]
    opts = TrainOptions(minibatch_size=mb, randomizer_size=max(32768, mb), prefetch=False,
                        check_params_every=0)
    upd = NnetTrainOptions(learn_rate=0.008 / 4 / size, momentum=0.9)  # lr x N at mb 1024
    n = agree_minibatches(comm, steps)
    overlap = args.mode == "overlap"
    mixer = (OverlapMixer(comm, nnet.params, nnet.backend) if overlap else
             Mixer(comm, args.mixing, args.allreduce, nnet.params, backend=nnet.backend))
    t = {"start": 0.0, "agg": 0.0, "mixes": 0}
    arrivals, waits = [], []   # overlap: when this rank reached each block end, its MPI_Wait

    def block_end(end) -> None:
        a, w0 = time.perf_counter(), mixer.time_wait
        end()
        arrivals.append(a - t["start"])
        waits.append(mixer.time_wait - w0)

    def hook(step, _):
        if step == 1:  # end of the warm-up: start the clocks together
            comm.Barrier()
            t["start"] = time.perf_counter()
            return
        t0 = time.perf_counter()
        if (step - 1) % args.average_every == 0:
            block_end(mixer.block_end) if overlap else mixer.mix(t["mixes"])
            t["mixes"] += 1
        elif overlap:
            mixer.progress()
        t["agg"] += time.perf_counter() - t0

    st = train_epoch(nnet, iter(utts), opts, upd, hook=hook, num_minibatches=n)
    t0 = time.perf_counter()
    if overlap:
        block_end(lambda: mixer.finish(partial=bool((n - 1) % args.average_every)))
    else:
        mixer.exact_average()
    t["agg"] += time.perf_counter() - t0
    wall = time.perf_counter() - t["start"]
    wait = late = blocking = 0.0
    if overlap:
        # Only the mixes a block computed behind count: the last one, started at the epoch's
        # last block end, is waited for at once (waits[-1]; the epoch's end has nothing to
        # hide it behind, in the bench as in a real epoch). The part of each wait spent before
        # the last rank reached the same block end (one host: perf_counter is one clock for all
        # ranks) is what a blocking mix waits too.
        last = np.max(np.array(comm.allgather(arrivals)), axis=0)
        hid = slice(1, len(waits) - 1)   # waits[0]: the first block end starts, waits nothing
        late = float(np.minimum(waits, np.maximum(0.0, last - np.array(arrivals)))[hid].sum())
        wait = float(np.sum(waits[hid]))
        # the blocking all-reduce of the same buffer, as often, in this run
        buf = nnet.backend.empty(nnet.params.shape[0], dtype=nnet.params.dtype)
        nnet.backend.copy(buf, nnet.params)
        with AllReducer(comm, "mpi", buf.shape[0], buf.dtype, nnet.backend) as red:
            for _ in range(max(0, len(waits) - 2)):
                comm.Barrier()
                t0 = time.perf_counter()
                red.average(buf)
                blocking += time.perf_counter() - t0
    timed = st.minibatches - 1
    # optimize: everything but mixing (forward, backward, update; the in-memory randomizer)
    vals = np.array([timed * mb, wall, wall - t["agg"], t["agg"], wait, blocking, late],
                    dtype=np.float64)
    tot = np.empty_like(vals)
    mx = np.empty_like(vals)
    comm.Allreduce(vals, tot, op=MPI.SUM)
    comm.Allreduce(vals, mx, op=MPI.MAX)
    if rank == 0:
        hidden = 1.0 - (tot[4] - tot[6]) / tot[5] if overlap and tot[5] > 0 else None
        print("RESULT " + json.dumps({
            "ranks": size, "frames": int(tot[0]), "wall": float(mx[1]),
            "fps": float(tot[0] / mx[1]), "optimize": float(tot[2] / size),
            "aggregate": float(tot[3] / size), "mixes": t["mixes"] + (not overlap),
            "params": int(nnet.num_params), "buffers": mixer_mode(mixer), "mode": args.mode,
            "wait": float(tot[4] / size), "late": float(tot[6] / size),
            "blocking": float(tot[5] / size),
            "hidden": hidden}), flush=True)
    if overlap:
        mixer.free()


def mixer_mode(mixer) -> str:
    """host, device (CUDA-aware MPI) or staged (device buffers through pinned host memory)."""
    access = getattr(mixer, "access", None) or getattr(getattr(mixer, "avg", None), "access", None)
    return getattr(access, "mode", "?")


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--minibatches", type=int, default=20, help="timed minibatches per rank")
    ap.add_argument("--average-every", type=int, default=10)
    ap.add_argument("--minibatch", type=int, default=1024)
    ap.add_argument("--dims", default="440,2048,2048,2048,2048,2048,2048,8806")
    ap.add_argument("--mixing", default="allreduce")
    ap.add_argument("--allreduce", default="mpi")
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"],
                    help="cuda: every rank trains on a GPU (ranks share a node's GPUs)")
    ap.add_argument("--overlap-mixing", action="store_true",
                    help="also run each rank count > 1 with overlapped mixing (needs --mixing "
                         "allreduce --allreduce mpi) and report the share of the all-reduce "
                         "time hidden behind the computation")
    ap.add_argument("--quick", action="store_true", help="a small network, for a smoke run")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="blocking", choices=["blocking", "overlap"],
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.dims, args.minibatch, args.minibatches = "440,256,256,500", 256, 10
    if args.worker:
        worker(args)
        return 0
    env = dict(os.environ)
    for v in THREAD_VARS:
        env[v] = "1"
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    mpiexec = Path(sys.executable).parent / "mpiexec"
    mpiexec = str(mpiexec) if mpiexec.exists() else (shutil.which("mpiexec") or "mpiexec")
    print(f"# network {args.dims.replace(',', '-')}, minibatch {args.minibatch}, "
          f"{args.mixing} mixing ({args.allreduce} all-reduce) every {args.average_every} "
          f"minibatches, {args.minibatches} timed minibatches per rank, 1 thread per rank, "
          f"{os.cpu_count()} CPUs, backend {args.backend}")
    if args.overlap_mixing:
        from nnetmix.parallel.overlap import check_overlap
        check_overlap(True, args.mixing, args.allreduce, "none")
    rows = []
    for r in [int(x) for x in args.ranks.split(",")]:
        for mode in ("blocking", "overlap") if args.overlap_mixing and r > 1 else ("blocking",):
            before = loadavg()
            cmd = [mpiexec, "-n", str(r)] + (["--oversubscribe"] if r > (os.cpu_count() or 1)
                                             else [])
            cmd += [sys.executable, str(Path(__file__).resolve()), "--worker", "--mode", mode]
            cmd += [a for a in sys.argv[1:] if a != "--worker"]
            p = subprocess.run(cmd, env=env, text=True, capture_output=True)
            if p.returncode != 0:
                sys.stderr.write(p.stdout + p.stderr)
                return 1
            res = json.loads(next(ln for ln in p.stdout.splitlines()
                                  if ln.startswith("RESULT "))[7:])
            res["load"] = f"{before} -> {loadavg()}"
            rows.append(res)
    base = rows[0]["fps"]
    ov_head = (f" {'mode':>8}", f" {'wait s':>7} {'late s':>7} {'blocking s':>11} {'hidden':>7}")
    print(f"{'ranks':>5}{ov_head[0] if args.overlap_mixing else ''} {'frames/s':>10} "
          f"{'speedup':>8} {'optimize s':>11} {'aggregate s':>12}"
          f"{ov_head[1] if args.overlap_mixing else ''} {'wall s':>8} {'mixes':>6} "
          f"{'buffers':>8}  load average (1/5/15 min) before -> after")
    for x in rows:
        cols = ("", "")
        if args.overlap_mixing:  # the mode; the wait, blocking time and share hidden
            ov = x["mode"] == "overlap"
            hidden = f"{100 * x['hidden']:.0f}%" if ov and x["hidden"] is not None else "-"
            cols = (f" {x['mode']:>8}",
                    f" {(format(x['wait'], '.3f') if ov else '-'):>7} "
                    f"{(format(x['late'], '.3f') if ov else '-'):>7} "
                    f"{(format(x['blocking'], '.3f') if ov else '-'):>11} {hidden:>7}")
        print(f"{x['ranks']:>5}{cols[0]} {x['fps']:>10.1f} {x['fps'] / base:>8.2f} "
              f"{x['optimize']:>11.2f} {x['aggregate']:>12.3f}{cols[1]} {x['wall']:>8.2f} "
              f"{x['mixes']:>6} {x['buffers']:>8}  {x['load']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
