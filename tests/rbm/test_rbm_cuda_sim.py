"""The CD-1 step on the cuda backend (numba's CUDA simulator) equals the cpu backend's; the checks
run in a fresh pytest process because NUMBA_ENABLE_CUDASIM must be set before numba loads."""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_cd1_on_cuda_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           str(HERE / "rbm_cuda_sim_checks.py")], cwd=HERE.parent.parent,
                          env=env, text=True, capture_output=True, timeout=300)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0, f"cuda simulator checks failed:\n{tail}"
    assert " passed" in proc.stdout and " skipped" not in proc.stdout, tail
