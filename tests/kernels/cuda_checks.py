"""The cuda backend against numpy: on numba's CUDA simulator (test_kernels_cuda.py runs this file
in a subprocess) or on a real GPU (``make test-gpu``).

NUMBA_ENABLE_CUDASIM must be set before numba is first imported, which a pytest process that
already ran cpu tests cannot do; test_kernels_cuda.py therefore starts a fresh pytest on this
file (its name keeps the outer pytest from collecting it). The simulator runs every GPU thread
as a Python thread: shapes stay tiny, but include a row longer than a block (257 > 128 threads)
and GEMM sizes that are not multiples of the 16 x 16 tile. On a real GPU the training-size
shapes are added.
"""
import numpy as np
import pytest
from numba import config

from kernel_checks import CHECKS

pytestmark = pytest.mark.cuda_device

SHAPES = [(1, 1), (3, 257)] + ([] if config.ENABLE_CUDASIM else [(1024, 2048), (257, 8806)])


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


@pytest.fixture(scope="module")
def gpu_tiled():
    """A cuda backend that always takes the numba tiled GEMM, even where CuPy imports."""
    from nnetmix.kernels.cuda import CudaBackend
    backend = CudaBackend()
    backend._cupy = None
    backend._blas = None
    return backend


GEMM_SHAPES = [(1, 1), (5, 17)] + ([] if config.ENABLE_CUDASIM else [(300, 520)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", GEMM_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_cuda_gemm_tiled(gpu_tiled, dtype, shape):
    """The numba tiled GEMM: every trans, alpha, beta."""
    from kernel_checks import check_gemm
    check_gemm(gpu_tiled, dtype, shape)


if not config.ENABLE_CUDASIM:     # cuBLAS needs a real GPU (the simulator never loads CuPy)
    @pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
    @pytest.mark.parametrize("shape", GEMM_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
    def test_cuda_gemm_cublas(gpu, dtype, shape):
        """cuBLAS through CuPy, the path training takes on a real GPU."""
        if gpu._cupy is None:
            pytest.fail("CuPy does not import on this GPU machine: install nnetmix[gpu]")
        from kernel_checks import check_gemm
        assert gpu._blas is not None, "cuBLAS could not be bound through ctypes"
        check_gemm(gpu, dtype, shape)
        saved, gpu._blas = gpu._blas, None   # CuPy's wrapper, the fallback
        try:
            check_gemm(gpu, dtype, shape)
        finally:
            gpu._blas = saved


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


def test_bind_device(monkeypatch):
    from nnetmix.kernels import bind_device
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3")
    from numba import cuda
    assert bind_device() == 3 % len(cuda.gpus)   # the simulator has one GPU: 3 mod 1


def test_xent_stash_collects_what_softmax_xent_returns(gpu):
    """Losses left on the device (softmax_xent_rows, xent_stash) read back in order as
    softmax_xent returns them (on a GPU over more minibatches than one collect takes)."""
    rng = np.random.default_rng(5)
    n, m = 3, 130
    probs, grad = gpu.empty((n, m)), gpu.empty((n, m))
    tokens, expect = [], []
    for _ in range(4 if config.ENABLE_CUDASIM else gpu.XENT_RING + 3):
        x = gpu.asarray(rng.normal(size=(n, m)).astype(np.float32) * 3)
        t = gpu.asarray(rng.integers(0, m, n).astype(np.int32))
        expect.append(gpu.softmax_xent(x, t, probs, grad))
        gpu.softmax_xent_rows(x, t, probs, grad)
        tokens.append(gpu.xent_stash(n))
        if len(tokens) == gpu.xent_defer:
            assert gpu.xent_collect(tokens) == expect
            tokens, expect = [], []
    assert gpu.xent_collect(tokens) == expect


def test_captured_step_replays_the_eager_step(gpu):
    """A recorded step (a CUDA graph on a GPU with CuPy) replayed twice does what two eager
    runs do, reading the inputs' current contents at each replay."""
    rng = np.random.default_rng(6)
    x0, w0 = rng.normal(size=(33, 20)).astype(np.float32), rng.normal(size=(9, 20)).astype(np.float32)
    b0 = rng.normal(size=9).astype(np.float32)
    results = []
    for record in (False, True):
        x, w, b = gpu.asarray(x0), gpu.asarray(w0), gpu.asarray(b0)
        z, vel = gpu.empty((33, 9)), gpu.zeros(w0.shape)
        gz = gpu.empty(w0.shape)

        def step():
            gpu.gemm(x, w, z, trans_b=True)
            gpu.bias_sigmoid(z, b, z)
            gpu.gemm(z, x, gz, trans_a=True)
            gpu.sgd_update(w, gz, vel, 0.01, 0.9)
        if record:
            g = gpu.capture(step)
            assert g.captured == (gpu._cp_stream is not None)
            g.replay()
            gpu.copy(x, x0 * 0.5)
            g.replay()
        else:
            step()
            gpu.copy(x, x0 * 0.5)
            step()
        results.append(gpu.to_host(w))
    np.testing.assert_array_equal(results[0], results[1])
