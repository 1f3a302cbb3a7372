"""<ParametricRelu>/<Dropout> cuda kernels (prelu_dropout_cuda_checks.py) on numba's CUDA
simulator, in a fresh pytest."""
from pathlib import Path

import pytest

from helpers import run_cuda_checks


@pytest.mark.slow
def test_prelu_dropout_on_cuda_simulator():
    run_cuda_checks(Path(__file__).resolve().parent / "prelu_dropout_cuda_checks.py")
