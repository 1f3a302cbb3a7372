"""Device buffers through the staged path, on numba's CUDA simulator, under mpiexec -n 2.

The simulator is chosen by NUMBA_ENABLE_CUDASIM=1 before numba's first import, so the checks
run in their own MPI job (parallel_cudasim_driver.py). Real GPUs and CUDA-aware MPI are not
covered (no GPU on the CI machine).
"""
import os

import pytest

from parallel_testutil import HERE, run_mpi


def test_staged_device_buffers_on_cuda_simulator(monkeypatch):
    monkeypatch.setitem(os.environ, "NUMBA_ENABLE_CUDASIM", "1")
    proc, secs = run_mpi(2, [str(HERE / "parallel_cudasim_driver.py")], timeout=300)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0 and "cannot be imported" in out:
        pytest.skip("numba.cuda is not installed")
    tail = "\n".join(out.splitlines()[-40:])
    assert proc.returncode == 0, f"failed ({proc.returncode}, {secs:.0f} s):\n{tail}"
    assert "2 ranks: cuda simulator checks passed" in proc.stdout, tail
