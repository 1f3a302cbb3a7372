"""Helpers shared by tests/parallel: the world communicator and launching mpiexec."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import mpiexec, run_mpiexec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def world():
    """COMM_WORLD: size 1 under plain pytest, N under ``mpiexec -n N python -m pytest``."""
    from mpi4py import MPI
    return MPI.COMM_WORLD


def under_mpiexec() -> bool:
    """True when this pytest itself runs as one rank of a job (then no nested mpiexec)."""
    return any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"))


def run_checks(script: str, n: int, num_checks: int = 0) -> None:
    """Run a ``*_checks.py`` script of this folder under ``mpiexec -n N``; it must end with its
    ``N ranks: all K checks passed`` line (parallel_mpi_checks.main)."""
    proc, secs = run_mpi(n, [str(HERE / script)], timeout=300)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0, f"mpiexec -n {n} failed ({proc.returncode}, {secs:.0f} s):\n{tail}"
    want = f"{n} ranks: all {num_checks} checks passed" if num_checks else f"{n} ranks: all "
    assert want in proc.stdout, tail


def run_mpi(n: int, args: list[str], timeout: float = 300) -> tuple[subprocess.CompletedProcess, float]:
    """``mpiexec -n N --oversubscribe python ARGS`` from the repository root; (process, seconds).
    Launched once more where Open MPI failed to start it (tests/helpers.py run_mpiexec)."""
    if under_mpiexec():
        pytest.skip("launches its own mpiexec: run under plain pytest")
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("NUMBA_NUM_THREADS", "1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    cmd = [mpiexec(), "-n", str(n), "--oversubscribe", sys.executable, *args]
    t0 = time.monotonic()
    proc = run_mpiexec(cmd, cwd=ROOT, env=env, timeout=timeout)
    return proc, time.monotonic() - t0
