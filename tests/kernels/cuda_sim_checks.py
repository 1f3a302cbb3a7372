"""The cuda backend on numba's CUDA simulator: run by test_kernels_cuda.py in a subprocess.

NUMBA_ENABLE_CUDASIM must be set before numba is first imported, which a pytest process that
already ran cpu tests cannot do; test_kernels_cuda.py therefore starts a fresh pytest on this
file (its name keeps the outer pytest from collecting it). The simulator runs every GPU thread
as a Python thread: shapes stay tiny, but include a row longer than a block (257 > 128 threads)
and GEMM sizes that are not multiples of the 16 x 16 tile.
"""
import numpy as np
import pytest
from numba import config

from kernel_checks import CHECKS

pytestmark = pytest.mark.skipif(not config.ENABLE_CUDASIM,
                                reason="needs NUMBA_ENABLE_CUDASIM=1 before numba is imported")

SHAPES = [(1, 1), (3, 257)]


@pytest.fixture(scope="module")
def gpu():
    from nnetmix.kernels import get_backend
    return get_backend("cuda")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("check", [c for c in CHECKS if c.__name__ != "check_gemm"],
                         ids=lambda f: f.__name__[6:])
def test_cuda_backend(gpu, check, dtype, shape):
    check(gpu, dtype, shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(1, 1), (5, 17)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_cuda_gemm_tiled(gpu, dtype, shape):
    """The numba tiled GEMM (CuPy is never used on the simulator): every trans, alpha, beta."""
    from kernel_checks import check_gemm
    check_gemm(gpu, dtype, shape)


def test_cuda_matches_cpu_training_step():
    """One affine+sigmoid / softmax step on both backends gives the same numbers."""
    from nnetmix.kernels import get_backend
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 6)).astype(np.float32)
    w = rng.normal(size=(5, 6)).astype(np.float32)
    b = rng.normal(size=5).astype(np.float32)
    t = np.array([0, 4, 2, 2], np.int32)
    results = []
    for B in (get_backend("cpu"), get_backend("cuda")):
        z = B.empty((4, 5))
        B.gemm(B.asarray(x), B.asarray(w), z, trans_b=True)
        B.add_bias(z, B.asarray(b))
        grad = B.empty((4, 5))
        loss, correct = B.softmax_xent(z, t, B.empty((4, 5)), grad)
        gw = B.empty((5, 6))
        B.gemm(grad, B.asarray(x), gw, trans_a=True)
        B.synchronize()
        results.append((loss, correct, B.to_host(gw)))
    assert abs(results[0][0] - results[1][0]) < 1e-4 and results[0][1] == results[1][1]
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-5, atol=1e-5)


def test_bind_device_on_simulator(monkeypatch):
    from nnetmix.kernels import bind_device
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3")
    assert bind_device() == 0                    # the simulator has one GPU: 3 mod 1
