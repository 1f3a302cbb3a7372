"""NG-SGD on the cuda backend (ngsgd_cuda_checks.py) on numba's CUDA simulator, in a fresh pytest."""
from pathlib import Path

import pytest

from helpers import run_cuda_checks


@pytest.mark.slow
def test_ngsgd_on_cuda_simulator():
    run_cuda_checks(Path(__file__).resolve().parent / "ngsgd_cuda_checks.py")
