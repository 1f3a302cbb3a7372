"""NG-SGD on the cuda backend, on numba's CUDA simulator in a fresh pytest process (the
simulator must be chosen before numba's first import; see tests/kernels/test_kernels_cuda.py)."""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_ngsgd_on_cuda_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           str(HERE / "ngsgd_cuda_sim_checks.py")], cwd=HERE.parent.parent,
                          env=env, text=True, capture_output=True, timeout=600)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0, f"ngsgd cuda simulator checks failed:\n{tail}"
    assert " passed" in proc.stdout and " skipped" not in proc.stdout, tail
