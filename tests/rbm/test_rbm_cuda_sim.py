"""CD-1 on the cuda backend (rbm_cuda_checks.py) on numba's CUDA simulator, in a fresh pytest."""
from pathlib import Path

from helpers import run_cuda_checks


def test_cd1_on_cuda_simulator():
    run_cuda_checks(Path(__file__).resolve().parent / "rbm_cuda_checks.py", timeout=300)
