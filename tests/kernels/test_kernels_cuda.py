"""The cuda backend's kernels, run on numba's CUDA simulator in a fresh pytest process.

The simulator is chosen by NUMBA_ENABLE_CUDASIM=1 at numba's first import, and this pytest
process may already have imported numba for the cpu tests; so the checks live in
cuda_sim_checks.py and run here in a subprocess with that variable set.
"""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_cuda_kernels_on_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           str(HERE / "cuda_sim_checks.py")], cwd=HERE.parent.parent, env=env,
                          text=True, capture_output=True, timeout=600)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0, f"cuda simulator checks failed:\n{tail}"
    assert " passed" in proc.stdout and " skipped" not in proc.stdout, tail
