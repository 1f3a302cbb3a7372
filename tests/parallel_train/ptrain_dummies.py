"""Tiny data and networks for the MPI trainer tests, and launching bin/nnet-train-mpi.py."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from dummies import class_run_utts, mpiexec, write_train_set

from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax

ROOT = Path(__file__).resolve().parent.parent.parent
TOOL = ROOT / "bin" / "nnet-train-mpi.py"
FRMSHUFF = ROOT / "bin" / "nnet-train-frmshuff.py"


def utterances(rng: np.random.Generator, num_utts: int = 24, dim: int = 5, num_classes: int = 4,
               min_len: int = 15, max_len: int = 45, noise: float = 0.8):
    """(key, feats float32 (T, dim), labels int32 (T,)): class runs, feats = class mean + noise."""
    return class_run_utts(rng, num_utts, dim, num_classes, min_len, max_len, noise)

def tiny_net(rng: np.random.Generator, dim: int = 5, hid: int = 6, num_classes: int = 4) -> Nnet:
    return Nnet([
        AffineTransform(dim, hid, rng.standard_normal((hid, dim)) * 0.3, rng.uniform(-1, 1, hid)),
        Sigmoid(hid, hid),
        AffineTransform(hid, num_classes, rng.standard_normal((num_classes, hid)) * 0.3,
                        np.zeros(num_classes)),
        Softmax(num_classes, num_classes),
    ])


write_data = write_train_set  # the name these tests use


def env() -> dict:
    e = dict(os.environ)
    for k, v in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                 ("OMP_NUM_THREADS", "1"), ("OPENBLAS_NUM_THREADS", "1"),
                 ("NUMBA_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1")):
        e.setdefault(k, v)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), e.get("PYTHONPATH", "")])
    e["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(ROOT / "bin"),
                                 str(ROOT / "utils"), e.get("PATH", "")])
    e["LC_ALL"] = "C"
    e.pop(TASK_LOG_ENV, None)
    return e


TASK_LOG_ENV = "NNETMIX_TASK_LOG"




def run_mpi(n: int, args: list, timeout: float = 120) -> tuple[subprocess.CompletedProcess, float]:
    """``mpiexec -n N --oversubscribe python bin/nnet-train-mpi.py ARGS``; (process, seconds)."""
    cmd = [mpiexec(), "-n", str(n), "--oversubscribe", sys.executable, str(TOOL),
           *[str(a) for a in args]]
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=ROOT, env=env(), text=True, capture_output=True, timeout=timeout)
    return p, time.monotonic() - t0


def run_frmshuff(args: list) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(FRMSHUFF), *[str(a) for a in args]], cwd=ROOT,
                          env=env(), text=True, capture_output=True, timeout=120)


def read_params(path) -> np.ndarray:
    from nnetmix.nnet import read_nnet
    n = read_nnet(str(path))
    return np.array(n._host(n.params))
