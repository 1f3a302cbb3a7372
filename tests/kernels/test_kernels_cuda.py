"""The cuda backend's kernels (cuda_checks.py) on numba's CUDA simulator, in a fresh pytest."""
from pathlib import Path

import pytest

from helpers import run_cuda_checks


@pytest.mark.slow
def test_cuda_kernels_on_simulator():
    run_cuda_checks(Path(__file__).resolve().parent / "cuda_checks.py")
