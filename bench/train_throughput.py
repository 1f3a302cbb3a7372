#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Frames per second of a full nnet1 training step on an nnetmix backend, beside PyTorch.

One step is what nnet1 does for a minibatch of an MLP: forward (affine + sigmoid hidden layers,
affine + softmax output), cross-entropy gradient, backward (GEMMs for the weight gradients and
the input gradients, bias gradients by row sums, sigmoid derivative), and an SGD update with
momentum over the whole flat parameter buffer. It is composed only of Backend calls, as
nnetmix/nnet composes them. In the same worker process, alternating blocks of steps, PyTorch
(CPU) trains the same network the plain way: torch.nn.Linear + sigmoid, cross_entropy with
reduction='sum', torch.optim.SGD with momentum. The torch columns are left empty when torch is
not installed (it is not an nnetmix dependency).

The GEMM-bound limit is 6 x parameters FLOPs per frame (forward, input gradient, weight
gradient) at the best sgemm rate measured in the same process on the big layer's shape
(before and after each row's steps).

Thread counts: each row's thread count runs in its own worker process with OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and NUMBA_NUM_THREADS set before numpy/numba/torch load.
The worker also sets OMP_WAIT_POLICY=PASSIVE as nnetmix.kernels.cpu does (torch's libgomp is
the same libgomp.so.1 in one process, so both see the same policy; --torch-wait-policy changes
what torch gets by running torch in a worker of its own).

With --backend cuda both run on the GPU (nnetmix: numba.cuda kernels + cuBLAS through CuPy;
torch: its CUDA build, TF32 off as is its default for float32 matmul), every step ends with a
device synchronisation, and the GEMM-bound limit uses the best cuBLAS sgemm rate through our
backend on the big layer's shape. nnetmix is timed twice: kernel by kernel, and replaying the
step recorded once as a CUDA graph (Backend.capture), which is how nnetmix's trainer runs a
plain-SGD step on a GPU. Neither side reads the loss back inside a step (torch's loss stays a
tensor; ours is collected every xent_defer steps, as the trainer does).

Recurrent rows (--nets blstm,lstm,blstm-small,lstm-small; RNETS): one CSC-BPTT training step
as nnet-train-multistream-perutt takes it, --streams chunks of --chunk frames (seed 002's
21-64+21, 40 streams) through <BlstmProjected>/<LstmProjected> layers, an affine layer and the
softmax cross-entropy of the center frames, BPTT and nnet1's update. As the trainer runs it,
the affine layer and the softmax see the center frames only (Nnet.propagate(rows=...));
--every-row also times the step that runs them on every frame and zeroes the context frames'
derivative (the trainer before the change), in the same worker, alternating; beside it
torch.nn.LSTM (num_layers, bidirectional, proj_size) + Linear
from the same initial weights, cross_entropy over the center frames, SGD with momentum. Each
row first checks that both compute the same outputs when our peepholes are zeroed and cell
clipping is off (what torch lacks). Frames per second count every frame of a chunk, context
included.

This machine is shared and noisy: per-step times are medians, and ratios measured side by side
in one run are what to read. With ``--json FILE`` the rows are also written there
(bench/plans/speed.toml stores them; :func:`report` renders the same tables from them).
Usage: bench/train_throughput.py [--quick] [--backend cpu] [--threads 1,2] [--minibatch 256,1024]
       bench/train_throughput.py --nets blstm,lstm --threads 1 [--streams 40] [--chunk 21-64+21]
                                 [--every-row]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.experiments.report import write_atomic  # noqa: E402  (after ROOT)

NETS = {"large": [440] + [2048] * 6 + [8806], "small": [440] + [512] * 3 + [500]}


def get_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="small network, minibatch 256, 2 timed steps (a smoke run)")
    p.add_argument("--nets", default="large,small", help="comma list of: "
                   + ", ".join(list(NETS) + list(RNETS)))
    p.add_argument("--streams", type=int, default=40,
                   help="recurrent rows: chunks (streams) per step")
    p.add_argument("--chunk", default="21-64+21", help="recurrent rows: left-center+right "
                   "frames of each chunk (CSC-BPTT, seed 002's 21-64+21)")
    p.add_argument("--every-row", action="store_true",
                   help="recurrent rows: also time the step whose output layer runs on every "
                        "frame, context included (the trainer before it skipped them)")
    p.add_argument("--minibatch", default="256,1024", help="comma list of minibatch sizes")
    p.add_argument("--threads", default="1,2", help="comma list of thread counts")
    p.add_argument("--steps", type=int, default=4, help="timed steps per block")
    p.add_argument("--rounds", type=int, default=2, help="alternating ours/torch blocks per row")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch reference")
    p.add_argument("--backend", default="cpu", choices=["cpu", "cuda"],
                   help="nnetmix backend (cuda: torch runs on the GPU too; --threads is ignored)")
    p.add_argument("--torch-wait-policy", default="", help="run torch in its own worker with this "
                   "OMP_WAIT_POLICY (ACTIVE|PASSIVE; default: same worker, PASSIVE)")
    p.add_argument("--json", default="", help="also write the rows to this file (JSON: "
                   "{\"torch\": bool, \"rows\": [...]}; report() renders them)")
    p.add_argument("--worker", default="", help=argparse.SUPPRESS)
    return p.parse_args(argv)


# ---------------------------------------------------------------- worker side

def sgemm_rate_gpu(B, np, mb: int) -> float:
    """GFLOP/s of the cuda backend's GEMM (cuBLAS) on the big hidden layer's forward shape."""
    a = B.asarray(np.random.default_rng(0).standard_normal((mb, 2048), dtype=np.float32))
    w = B.asarray(np.random.default_rng(1).standard_normal((2048, 2048), dtype=np.float32))
    out = B.empty((mb, 2048))
    B.gemm(a, w, out, trans_b=True)
    times = []
    for _ in range(20):
        B.synchronize()
        t = time.perf_counter()
        B.gemm(a, w, out, trans_b=True)
        B.synchronize()
        times.append(time.perf_counter() - t)
    return 2.0 * mb * 2048 * 2048 / min(times) / 1e9


def sgemm_rate(np, mb: int) -> float:
    """GFLOP/s of numpy's sgemm on the big hidden layer's forward shape (mb x 2048 x 2048).

    The best of several runs: the limit is what the BLAS can do, and on a shared machine a
    median can catch a neighbour's burst (the row measures it before and after its steps).
    """
    a = np.random.default_rng(0).standard_normal((mb, 2048), dtype=np.float32)
    w = np.random.default_rng(1).standard_normal((2048, 2048), dtype=np.float32)
    out = np.empty((mb, 2048), np.float32)
    np.matmul(a, w.T, out=out)
    times = []
    for _ in range(5):
        t = time.perf_counter()
        np.matmul(a, w.T, out=out)
        times.append(time.perf_counter() - t)
    return 2.0 * mb * 2048 * 2048 / min(times) / 1e9


class OursMLP:
    """The nnet1 training step built from Backend calls, parameters in one flat buffer."""

    def __init__(self, B, np, dims, mb, lr=1e-5, momentum=0.9):
        self.B, self.dims, self.mb, self.lr, self.momentum = B, dims, mb, lr, momentum
        sizes = [(dims[i + 1], dims[i]) for i in range(len(dims) - 1)]
        self.nparams = sum(o * i + o for o, i in sizes)
        rng = np.random.default_rng(7)
        self.params = B.zeros(self.nparams)
        self.grads = B.zeros(self.nparams)
        self.vel = B.zeros(self.nparams)
        self.W, self.b, self.gW, self.gb = [], [], [], []
        off = 0
        host = np.empty(self.nparams, np.float32)
        for o, i in sizes:
            host[off:off + o * i] = rng.uniform(-1, 1, o * i) * (4.0 * np.sqrt(6.0 / (o + i)))
            host[off + o * i:off + o * i + o] = 0
            for lst, buf in ((self.W, self.params), (self.gW, self.grads)):
                lst.append(buf[off:off + o * i].reshape(o, i))
            for lst, buf in ((self.b, self.params), (self.gb, self.grads)):
                lst.append(buf[off + o * i:off + o * i + o])
            off += o * i + o
        self.B.copy(self.params, B.asarray(host))
        self.acts = [B.zeros((mb, d)) for d in dims]      # acts[0] is the input
        self.diffs = [B.zeros((mb, d)) for d in dims]     # diffs[k]: dLoss/d(pre-activation k)
        self.probs = B.zeros((mb, dims[-1]))
        self.pending: list = []

    def compute(self, x, targets):
        """The step's device work, reading nothing back (so it can be recorded as a graph)."""
        B, L = self.B, len(self.dims) - 1
        B.copy(self.acts[0], x)
        for k in range(L):
            B.gemm(self.acts[k], self.W[k], self.acts[k + 1], trans_b=True)
            if k < L - 1:
                B.bias_sigmoid(self.acts[k + 1], self.b[k], self.acts[k + 1])
            else:
                B.add_bias(self.acts[k + 1], self.b[k])
        B.softmax_xent_rows(self.acts[L], targets, self.probs, self.diffs[L])
        for k in range(L - 1, -1, -1):
            B.gemm(self.diffs[k + 1], self.acts[k], self.gW[k], trans_a=True)
            B.sum_rows(self.diffs[k + 1], self.gb[k])
            if k > 0:
                B.gemm(self.diffs[k + 1], self.W[k], self.diffs[k])
                B.sigmoid_backward(self.acts[k], self.diffs[k], self.diffs[k])
        B.sgd_update(self.params, self.grads, self.vel, self.lr, self.momentum,
                     num_frames=self.mb)

    def step(self, x, targets, graph: bool = False):
        """One training step as nnetmix's trainer takes it: eagerly, or (graph) as a replay of
        the step recorded by Backend.capture; the loss is read back every xent_defer steps."""
        if not graph:
            self.compute(x, targets)
        else:
            if getattr(self, "graph", None) is None:
                self.graph = self.B.capture(lambda: self.compute(x, targets))
            self.graph.replay()
        self.pending.append(self.B.xent_stash(self.mb))
        if len(self.pending) >= self.B.xent_defer:
            self.B.xent_collect(self.pending)
            self.pending = []


class TorchMLP:
    """The same network and SGD in plain PyTorch."""

    def __init__(self, torch, dims, lr=1e-5, momentum=0.9, device="cpu"):
        layers = []
        for i in range(len(dims) - 1):
            layers.append(torch.nn.Linear(dims[i], dims[i + 1]))
            if i < len(dims) - 2:
                layers.append(torch.nn.Sigmoid())
        self.torch = torch
        self.net = torch.nn.Sequential(*layers).to(device)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=lr, momentum=momentum)

    def step(self, x, targets):
        self.opt.zero_grad()
        loss = self.torch.nn.functional.cross_entropy(self.net(x), targets, reduction="sum")
        loss.backward()
        self.opt.step()
        return loss  # not read back: neither side waits for the GPU inside a step


def time_block(fn, steps: int, sync=lambda: None) -> list[float]:
    out = []
    for _ in range(steps):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        out.append(time.perf_counter() - t)
    return out


# ---------------------------------------------------------------- recurrent rows

#: seed 002's DBLSTM (5 layers of 512 memory blocks: 256 forward + 256 backward, each direction
#: projected to 128 as nnet1's <BlstmProjected> does; 9304 tied states), the uni-directional LSTM
#: of the same 512 blocks (projection 256), and small rows the 2-core machine finishes quickly.
#: The input is 40-dim filterbank frames (seed 002 does not say; Kaldi's BLSTM recipes use 40).
RNETS = {
    "blstm": {"kind": "Blstm", "input": 40, "layers": 5, "cell": 256, "proj": 128, "out": 9304},
    "lstm": {"kind": "Lstm", "input": 40, "layers": 5, "cell": 512, "proj": 256, "out": 9304},
    "blstm-small": {"kind": "Blstm", "input": 40, "layers": 2, "cell": 128, "proj": 64,
                    "out": 500},
    "lstm-small": {"kind": "Lstm", "input": 40, "layers": 2, "cell": 256, "proj": 128,
                   "out": 500},
}


def rnn_proto(net: dict) -> str:
    """nnet1's prototype of a row's network: the recurrent layers, an affine layer, a softmax."""
    dirs = 2 if net["kind"] == "Blstm" else 1
    width = dirs * net["proj"]
    lines = [f"<{net['kind']}Projected> <InputDim> {net['input'] if k == 0 else width} "
             f"<OutputDim> {width} <CellDim> {net['cell']}" for k in range(net["layers"])]
    lines.append(f"<AffineTransform> <InputDim> {width} <OutputDim> {net['out']} "
                 "<ParamStddev> 0.1 <BiasMean> 0 <BiasRange> 0")
    lines.append(f"<Softmax> <InputDim> {net['out']} <OutputDim> {net['out']}")
    return "\n".join(lines)


class OursRnn:
    """One CSC-BPTT training step as nnet-train-multistream-perutt takes it: S chunks of
    left + center + right frames as S streams (row t*S + s), the recurrent layers over every
    row, the affine layer and softmax cross-entropy over the center rows, backward (the context
    rows' derivative zero), nnet1's update. ``every_row``: the affine layer and the loss over
    every row, the context rows' derivative zeroed (the same gradients, more work)."""

    def __init__(self, B, np, net: dict, streams: int, chunk: tuple[int, int, int],
                 lr=1e-5, momentum=0.9, every_row: bool = False):
        from nnetmix.nnet import Nnet, NnetTrainOptions, init_components
        self.B, self.S = B, streams
        self.left, self.center, self.right = chunk
        self.T = sum(chunk)
        self.nnet = Nnet(init_components(rnn_proto(net)), backend=B)
        self.nparams = sum(int(np.prod(s)) for c in self.nnet.components if c.updatable
                           for _, s in c.param_specs())
        self.opts = NnetTrainOptions(learn_rate=lr, momentum=momentum)
        rows = self.S * self.T
        self.every_row = every_row
        #: the center rows (the frames trained on), and their targets from a step's targets
        self.keep = np.arange(self.left * self.S, (self.left + self.center) * self.S)
        self.probs = B.empty((rows, net["out"]))
        self.grad = B.empty((rows, net["out"]))

    def step(self, x, targets) -> None:
        """``targets``: of every row (every_row) or of the center rows (:attr:`keep`)."""
        S, nnet, B = self.S, self.nnet, self.B
        nnet.set_seq_lengths([self.T] * S)
        nnet.reset_streams([1] * S)        # every chunk is a sequence of its own
        if self.every_row:
            logits = nnet.propagate(x, through_softmax=False)
            B.softmax_xent_rows(logits, targets, self.probs, self.grad)
            B.fill(self.grad[:self.left * S], 0.0)                  # context frames: no loss
            B.fill(self.grad[(self.left + self.center) * S:], 0.0)
            nnet.backpropagate(self.grad, input_diff=False)
        else:
            n = len(self.keep)
            logits = nnet.propagate(x, through_softmax=False, rows=self.keep)
            B.softmax_xent_rows(logits, targets, self.probs[:n], self.grad[:n])
            nnet.backpropagate(self.grad[:n], input_diff=False)
        nnet.update(self.opts, int(x.shape[0]))


class TorchRnn:
    """The same network in PyTorch: one nn.LSTM (num_layers, bidirectional, proj_size), a
    Linear and cross_entropy (sum) over the center frames only, SGD with momentum. It starts from
    our initial weights (gate blocks reordered from nnet1's g,i,f,o to torch's i,f,g,o; the bias
    in bias_ih, bias_hh zero). Differences: torch has no peepholes and no clipping (nnet1's
    <CellClip> 50, <DiffClip> 1 and the <GradClip> 250 of the update are left out)."""

    def __init__(self, torch, np, net: dict, ours, chunk: tuple[int, int, int],
                 lr=1e-5, momentum=0.9, device="cpu"):
        bi = net["kind"] == "Blstm"
        self.torch = torch
        self.left, self.center = chunk[0], chunk[1]
        self.lstm = torch.nn.LSTM(net["input"], net["cell"], num_layers=net["layers"],
                                  bidirectional=bi, proj_size=net["proj"])
        self.out = torch.nn.Linear(net["proj"] * (2 if bi else 1), net["out"])
        if ours is not None:
            self.load(np, ours.nnet.host_params(), net, bi)
        self.lstm.to(device)
        self.out.to(device)
        self.params = list(self.lstm.parameters()) + list(self.out.parameters())
        self.opt = torch.optim.SGD(self.params, lr=lr, momentum=momentum)

    def load(self, np, host: list, net: dict, bi: bool) -> None:
        C = net["cell"]
        order = np.concatenate([np.arange(C, 2 * C), np.arange(2 * C, 3 * C),
                                np.arange(0, C), np.arange(3 * C, 4 * C)])
        sd = {}
        for k in range(net["layers"]):
            for d, suffix in ((("f_", ""), ("b_", "_reverse")) if bi else (("", ""),)):
                p = host[k]
                sd[f"weight_ih_l{k}{suffix}"] = p[d + "w_gifo_x"][order]
                sd[f"weight_hh_l{k}{suffix}"] = p[d + "w_gifo_r"][order]
                sd[f"bias_ih_l{k}{suffix}"] = p[d + "bias"][order]
                sd[f"bias_hh_l{k}{suffix}"] = np.zeros(4 * C, np.float32)
                sd[f"weight_hr_l{k}{suffix}"] = p[d + "w_r_m"]
        self.lstm.load_state_dict({n: self.torch.from_numpy(np.ascontiguousarray(a))
                                   for n, a in sd.items()})
        aff = host[net["layers"]]
        self.out.load_state_dict({"weight": self.torch.from_numpy(aff["W"].copy()),
                                  "bias": self.torch.from_numpy(aff["b"].copy())})

    def step(self, x, targets):
        """x (T, S, input), targets (center, S) int64."""
        self.opt.zero_grad()
        h, _ = self.lstm(x)
        logits = self.out(h[self.left:self.left + self.center])   # center frames only, as ours
        loss = self.torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                      targets.reshape(-1), reduction="sum")
        loss.backward()
        self.opt.step()
        return loss


def check_same_network(torch, np, B, name: str) -> float:
    """Max |ours - torch| of the pre-softmax outputs of a row's network on 5 chunks of 3-6+2
    random frames, with our peepholes zeroed and cell clipping off (what torch lacks): the two
    compute the same function from the same weights, so the rows time the same network."""
    net = RNETS[name]
    ours = OursRnn(B, np, net, 5, (3, 6, 2))
    for c in ours.nnet.components:
        if hasattr(c, "cell_clip"):
            for k in c.params:
                if "peephole" in k:
                    B.fill(c.params[k], 0.0)
            c.cell_clip = np.float32(0.0)
    tmodel = TorchRnn(torch, np, net, ours, (3, 6, 2))
    x = np.random.default_rng(0).standard_normal((11 * 5, net["input"])).astype(np.float32)
    ours.nnet.set_seq_lengths([11] * 5)
    ours.nnet.reset_streams([1] * 5)
    y = B.to_host(ours.nnet.propagate(B.asarray(x), through_softmax=False))
    with torch.no_grad():
        h, _ = tmodel.lstm(torch.from_numpy(x.reshape(11, 5, -1)))
        yt = tmodel.out(h).numpy().reshape(y.shape)
    return float(np.abs(y - yt).max())


def rnn_row(spec: dict, name: str, B, torch, np, dev: str, sync_ours, sync_torch) -> dict:
    """Time one recurrent row: ours and torch alternately on the same chunks."""
    net = RNETS[name]
    S, chunk = spec["streams"], tuple(spec["chunk"])
    T = sum(chunk)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((T * S, net["input"]), dtype=np.float32)
    t = rng.integers(0, net["out"], T * S).astype(np.int32)
    row = {"net": name, "rnn": net, "streams": S, "chunk": list(chunk), "frames": T * S,
           "threads": spec["threads"], "backend": dev}
    if torch is not None and dev == "cpu":
        row["max_diff"] = check_same_network(torch, np, B, name)
    ours = tmodel = every = None
    if spec["ours"] or torch is not None:   # torch starts from our initial weights
        ours = OursRnn(B, np, net, S, chunk)
        row["params"] = ours.nparams
        xb, tb = B.asarray(x), B.asarray(t[ours.keep])
    if spec["ours"] and spec.get("every_row"):
        every = OursRnn(B, np, net, S, chunk, every_row=True)
        tb_all = B.asarray(t)
        every.step(xb, tb_all)
    if torch is not None:
        tmodel = TorchRnn(torch, np, net, ours, chunk, device=dev)
        row["torch_params"] = sum(p.numel() for p in tmodel.params)
        tx = torch.from_numpy(x.reshape(T, S, -1)).to(dev)
        tt = torch.from_numpy(t.reshape(T, S)[chunk[0]:chunk[0] + chunk[1]]
                              .astype(np.int64)).to(dev)
        tmodel.step(tx, tt)
    if not spec["ours"]:
        ours = None
    elif ours is not None:
        ours.step(xb, tb)                    # the first step compiles the kernels
    t_ours, t_every, t_torch = [], [], []
    for _ in range(spec["rounds"]):
        if ours is not None:
            t_ours += time_block(lambda: ours.step(xb, tb), spec["steps"], sync_ours)
        if every is not None:
            t_every += time_block(lambda: every.step(xb, tb_all), spec["steps"], sync_ours)
        if tmodel is not None:
            t_torch += time_block(lambda: tmodel.step(tx, tt), spec["steps"], sync_torch)
    if ours is not None:
        row["ours_fps"] = T * S / float(np.median(t_ours))
        row["ours_finite"] = all(bool(B.all_finite(p)) for c in ours.nnet.components
                                 if c.updatable for p in c.params.values())
    if every is not None:
        row["every_row_fps"] = T * S / float(np.median(t_every))
    if tmodel is not None:
        row["torch_fps"] = T * S / float(np.median(t_torch))
    return row


def worker(args) -> None:
    """Run every row of one thread count; print one JSON line per row."""
    spec = json.loads(args.worker)
    use_ours, use_torch = spec["ours"], spec["torch"]
    gpu = spec.get("backend", "cpu") == "cuda"
    torch = None
    if use_torch:
        try:
            import torch
            torch.set_num_threads(spec["threads"])
        except ImportError:
            torch = None
    import numpy as np
    sys.path.insert(0, str(ROOT))
    from nnetmix.kernels import get_backend
    B = get_backend(spec.get("backend", "cpu"))
    dev = "cuda" if gpu else "cpu"
    sync_ours = B.synchronize if gpu else (lambda: None)
    sync_torch = torch.cuda.synchronize if (gpu and torch is not None) else (lambda: None)

    def gemm_rate(mb):
        return sgemm_rate_gpu(B, np, mb) if gpu else sgemm_rate(np, mb)
    for name in [n for n in spec["nets"] if n in RNETS]:
        print("ROW " + json.dumps(rnn_row(spec, name, B, torch, np, dev, sync_ours, sync_torch)),
              flush=True)
    for net in [n for n in spec["nets"] if n in NETS]:
        dims = NETS[net]
        for mb in spec["minibatch"]:
            rng = np.random.default_rng(3)
            x = rng.standard_normal((mb, dims[0]), dtype=np.float32)
            t = rng.integers(0, dims[-1], mb).astype(np.int32)
            row = {"net": net, "dims": dims, "mb": mb, "threads": spec["threads"],
                   "sgemm_gflops": gemm_rate(mb), "backend": dev}
            ours = tmodel = None
            if use_ours:
                ours = OursMLP(B, np, dims, mb)
                row["params"] = ours.nparams
                xb, tb = B.asarray(x), B.asarray(t)
                for _ in range(2):
                    ours.step(xb, tb)
                if gpu:
                    for _ in range(2):
                        ours.step(xb, tb, graph=True)
            if torch is not None:
                tmodel = TorchMLP(torch, dims, device=dev)
                tx = torch.from_numpy(x).to(dev)
                tt = torch.from_numpy(t.astype(np.int64)).to(dev)
                row["params"] = sum(p.numel() for p in tmodel.net.parameters())
                for _ in range(2):
                    tmodel.step(tx, tt)
            t_ours, t_graph, t_torch = [], [], []
            for _ in range(spec["rounds"]):
                if ours is not None:
                    t_ours += time_block(lambda: ours.step(xb, tb), spec["steps"], sync_ours)
                    if gpu:
                        t_graph += time_block(lambda: ours.step(xb, tb, graph=True),
                                              spec["steps"], sync_ours)
                if tmodel is not None:
                    t_torch += time_block(lambda: tmodel.step(tx, tt), spec["steps"], sync_torch)
            row["sgemm_gflops"] = max(row["sgemm_gflops"], gemm_rate(mb))
            if ours is not None:
                row["ours_fps"] = mb / float(np.median(t_ours))
                if t_graph:
                    row["graph_fps"] = mb / float(np.median(t_graph))
                row["ours_finite"] = bool(B.all_finite(ours.params))
            if tmodel is not None:
                row["torch_fps"] = mb / float(np.median(t_torch))
            print("ROW " + json.dumps(row), flush=True)
            del ours, tmodel


# ---------------------------------------------------------------- driver side

def run_worker(spec: dict, threads: int, wait_policy: str = "PASSIVE") -> list[dict]:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = str(threads)
    env["OMP_WAIT_POLICY"] = wait_policy
    spec = dict(spec, threads=threads)
    proc = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                          text=True, capture_output=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"train_throughput.py: worker for {threads} thread(s) failed")
    return [json.loads(line[4:]) for line in proc.stdout.splitlines() if line.startswith("ROW ")]


def main(argv=None) -> int:
    args = get_args(argv)
    if args.worker:
        worker(args)
        return 0
    if args.quick:
        args.nets, args.minibatch, args.steps, args.rounds = "small", "256", 2, 1
    nets = [n for n in args.nets.split(",") if n]
    for n in nets:
        if n not in NETS and n not in RNETS:
            raise SystemExit(f"train_throughput.py: unknown net '{n}' (expected "
                             f"{', '.join(list(NETS) + list(RNETS))})")
    chunk = parse_chunk(args.chunk)
    try:
        import torch  # noqa: F401
        have_torch = not args.no_torch
    except ImportError:
        have_torch = False
    spec = {"nets": nets, "minibatch": [int(m) for m in args.minibatch.split(",")],
            "steps": args.steps, "rounds": args.rounds, "backend": args.backend,
            "streams": args.streams, "chunk": chunk, "every_row": args.every_row}
    if args.backend == "cuda":
        args.threads = "1"
    rows = []
    for threads in [int(t) for t in args.threads.split(",")]:
        if have_torch and args.torch_wait_policy:
            mine = run_worker(dict(spec, ours=True, torch=False), threads)
            theirs = run_worker(dict(spec, ours=False, torch=True), threads, args.torch_wait_policy)
            for r, q in zip(mine, theirs):
                r["torch_fps"] = q.get("torch_fps")
            rows += mine
        else:
            rows += run_worker(dict(spec, ours=True, torch=have_torch), threads)
    print(report(rows, have_torch), end="")
    if args.json:
        write_atomic(Path(args.json), json.dumps({"torch": have_torch, "rows": rows}, indent=1)
                     + "\n")
    return 0


def parse_chunk(text: str) -> list[int]:
    """'21-64+21' -> [21, 64, 21] (left context, center, right context)."""
    try:
        left, rest = text.split("-", 1)
        center, right = rest.split("+", 1)
        out = [int(left), int(center), int(right)]
    except ValueError:
        out = []
    if len(out) != 3 or min(out) < 0 or out[1] < 1:
        raise SystemExit(f"train_throughput.py: bad --chunk '{text}' (expected L-C+R, e.g. "
                         "21-64+21)")
    return out


def rnn_table(rows: list[dict], have_torch: bool) -> list[str]:
    """The recurrent rows: frames per second of a whole training step (every frame of every
    chunk, context included), medians; the ratio is ours over torch's, measured side by side."""
    out = []
    every = any("every_row_fps" in r for r in rows)
    out.append("| network | params | streams x frames | threads | nnetmix fr/s | torch fr/s |"
               " nnetmix/torch | nnetmix ms/step | torch ms/step |"
               + (" nnetmix every row fr/s | center rows / every row |" if every else ""))
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if every else ""))
    for r in rows:
        n = r["rnn"]
        dirs = "2x" if n["kind"] == "Blstm" else ""
        name = (f"{r['net']}: {n['input']}-{n['layers']}x{n['kind']}({dirs}{n['cell']} cells, "
                f"{dirs}{n['proj']} proj)-{n['out']}")
        ours = r.get("ours_fps")
        tfps = r.get("torch_fps") if have_torch else None
        cl, cc, cr = r["chunk"]
        flag = "" if r.get("ours_finite", True) else " (NaN!)"
        cells = [f"{ours:.0f}{flag}" if ours else "-", f"{tfps:.0f}" if tfps else "-",
                 f"{ours / tfps:.2f}x" if ours and tfps else "-",
                 f"{1e3 * r['frames'] / ours:.0f}" if ours else "-",
                 f"{1e3 * r['frames'] / tfps:.0f}" if tfps else "-"]
        if every:
            efps = r.get("every_row_fps")
            cells += [f"{efps:.0f}" if efps else "-",
                      f"{ours / efps:.2f}x" if ours and efps else "-"]
        out.append(f"| {name} | {r.get('params', r.get('torch_params', 0)):,} | {r['streams']} x "
                   f"({cl}+{cc}+{cr}) | {r['threads']} | " + " | ".join(cells) + " |")
    diffs = [r["max_diff"] for r in rows if "max_diff" in r]
    if diffs:
        out.append(f"\nSame network: with our peepholes zeroed and no cell clipping, ours and "
                   f"torch's outputs from the same weights differ by at most {max(diffs):.2g}.")
    return out


def report(rows: list[dict], have_torch: bool) -> str:
    """The markdown tables of the rows (what the script prints, and what bench/RESULTS.md
    renders from a stored ``--json`` output)."""
    out = []
    rnn = [r for r in rows if "rnn" in r]
    if rnn:
        out += rnn_table(rnn, have_torch) + [""]
    rows = [r for r in rows if "rnn" not in r]
    if not rows:
        return "\n".join(out) + "\n"
    graphs = any("graph_fps" in r for r in rows)
    extra = " nnetmix graph fr/s | graph/torch | graph/GEMM-bound |" if graphs else ""
    out.append("| network | backend | minibatch | threads | sgemm GFLOP/s | GEMM-bound fr/s |"
               " nnetmix fr/s | torch fr/s | nnetmix/torch | nnetmix/GEMM-bound |" + extra)
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
               + ("---:|" * 3 if graphs else ""))
    for r in rows:
        name = "-".join(str(d) for d in r["dims"][:2]) + f"x{len(r['dims']) - 2}-{r['dims'][-1]}"
        bound = r["sgemm_gflops"] * 1e9 / (6.0 * r["params"])
        ours = r.get("ours_fps")
        tfps = r.get("torch_fps") if have_torch else None
        vs_t = f"{ours / tfps:.2f}x" if ours and tfps else "-"
        vs_b = f"{100 * ours / bound:.0f}%" if ours else "-"
        flag = "" if r.get("ours_finite", True) else " (NaN!)"
        out.append(f"| {name} | {r.get('backend', 'cpu')} | {r['mb']} | {r['threads']} | "
                   f"{r['sgemm_gflops']:.1f} | {bound:.0f} | {ours:.0f}{flag} | "
                   f"{f'{tfps:.0f}' if tfps else '-'} | {vs_t} | {vs_b} |"
                   + (graph_cells(r.get("graph_fps"), tfps, bound) if graphs else ""))
    return "\n".join(out) + "\n"


def graph_cells(g, tfps, bound) -> str:
    if not g:
        return " - | - | - |"
    return f" {g:.0f} | {f'{g / tfps:.2f}x' if tfps else '-'} | {100 * g / bound:.0f}% |"


if __name__ == "__main__":
    sys.exit(main())
