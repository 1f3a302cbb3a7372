"""The cpu backend against float64 numpy references, plus get_backend / bind_device plumbing."""
import numpy as np
import pytest

from kernel_checks import CHECKS
from nnetmix.errors import NnetmixError, UsageError
from nnetmix.kernels import bind_device, cuda_usable, get_backend, local_rank

SHAPES = [(1, 1), (3, 257), (17, 33)]


@pytest.fixture(scope="module")
def cpu():
    return get_backend("cpu")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("check", CHECKS, ids=lambda f: f.__name__[6:])
def test_cpu_backend(cpu, check, dtype, shape):
    check(cpu, dtype, shape)


def test_fast_exp_sigmoid_tanh_accuracy(cpu):
    """The float32 polynomial exp (and sigmoid/tanh on it) over the whole usable range."""
    from nnetmix.kernels import cpu_kernels as K
    x = np.concatenate([np.linspace(-87.0, 88.0, 400_001), np.linspace(-1e-3, 1e-3, 2001),
                        [0.0, -0.0, 1e-30, -1e-30]]).astype(np.float32)
    x64 = x.astype(np.float64)
    out = np.empty_like(x)
    K.exp_k(x, out)
    assert np.max(np.abs(out - np.exp(x64)) / np.exp(x64)) < 1e-6
    K.sigmoid_k(x, out)
    ref = 1.0 / (1.0 + np.exp(-x64))
    assert np.max(np.abs(out - ref) / ref) < 1e-6
    K.tanh_k(x, out)
    ref = np.tanh(x64)
    assert np.max(np.abs(out - ref) / np.maximum(np.abs(ref), 1e-30)) < 1e-6
    # saturation: no overflow, no NaN
    ext = np.array([-1e4, -100.0, 100.0, 1e4], np.float32)
    K.sigmoid_k(ext, out[:4])
    np.testing.assert_allclose(out[:4], [0.0, 0.0, 1.0, 1.0], atol=1e-30)
    K.tanh_k(ext, out[:4])
    np.testing.assert_array_equal(out[:4], [-1.0, -1.0, 1.0, 1.0])


def test_cpu_bad_input(cpu):
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(NnetmixError, match="target out of range"):
        cpu.softmax_xent(x, np.array([0, 3], np.int32), np.empty_like(x), np.empty_like(x))
    with pytest.raises(NnetmixError, match="not C-contiguous"):
        cpu.sigmoid(x, np.zeros((3, 2), np.float32).T)
    with pytest.raises(NnetmixError, match="gemm shapes"):
        cpu.gemm(x, x, np.empty((2, 2), np.float32))
    with pytest.raises(NnetmixError, match="sizes"):
        cpu.sigmoid(np.zeros((4, 3), np.float32), x)
    big = np.zeros((2, 6), np.float32)
    cpu.sigmoid(big[:, ::2], x)                  # a strided input is fine
    np.testing.assert_allclose(x, 0.5)


def test_get_backend(cpu):
    assert get_backend("cpu") is cpu and cpu.name == "cpu"
    if not cuda_usable(allow_simulator=False)[0]:
        assert get_backend("auto") is cpu
    with pytest.raises(UsageError, match="unknown backend"):
        get_backend("tpu")


def test_cuda_unavailable_is_a_clear_error(monkeypatch):
    import nnetmix.kernels as kernels
    monkeypatch.setattr(kernels, "cuda_usable", lambda allow_simulator=True: (False, "no GPU here"))
    monkeypatch.setattr(kernels, "_INSTANCES", {})
    with pytest.raises(NnetmixError, match="cuda backend requested but not usable: no GPU here"):
        get_backend("cuda")
    with pytest.raises(NnetmixError, match="no usable GPU"):
        bind_device(0)
    assert get_backend("auto").name == "cpu"


def test_local_rank(monkeypatch):
    for var in ("OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                "MV2_COMM_WORLD_LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    assert local_rank() == 0
    monkeypatch.setenv("SLURM_LOCALID", "3")
    assert local_rank() == 3
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "5")
    assert local_rank() == 5


def test_local_rank_from_comm(monkeypatch):
    for var in ("OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                "MV2_COMM_WORLD_LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    MPI = pytest.importorskip("mpi4py.MPI")
    assert local_rank(MPI.COMM_SELF) == 0


def test_one_blas_thread_holds_this_thread_to_one_and_restores():
    """The LSTM's per-frame GEMMs run inside one_blas_thread(): one BLAS thread there, the
    process's count again after (also when the block raises)."""
    import numba

    from nnetmix.kernels.cpu import blas_num_threads, one_blas_thread, set_num_threads
    before, numba_before = blas_num_threads(), numba.get_num_threads()
    try:
        set_num_threads(2)
        if blas_num_threads() != 2:
            pytest.skip("numpy's OpenBLAS not found through ctypes")
        with one_blas_thread():
            assert blas_num_threads() == 1
        assert blas_num_threads() == 2
        with pytest.raises(RuntimeError):
            with one_blas_thread():
                raise RuntimeError("inside")
        assert blas_num_threads() == 2
    finally:
        set_num_threads(before)
        numba.set_num_threads(numba_before)


@pytest.mark.parametrize("scale", [0.5, 4.0, 30.0])
def test_float32_lstm_step_within_float32_rounding_of_float64(scale):
    """The forward step kernel computes a float32 network's gates in float32 (its constants are
    the arrays' dtype): on the same inputs, within 16 float32 ulps (relative to max(1, |x|)) of
    the float64 kernel, gates, cells (clipped at 50), outputs and padded rows alike."""
    from nnetmix.kernels.lstm_cpu import LstmCpuKernels
    rng = np.random.default_rng(int(scale * 10))
    S, C = 40, 64
    ins = [(rng.standard_normal(shape) * s).astype(np.float32)
           for shape, s in (((S, 4 * C), scale), ((S, C), scale), ((C,), 0.5), ((C,), 0.5),
                            ((C,), 0.5))]
    valid = np.ones(S, np.int8)
    valid[-3:] = 0
    outs = []
    for dtype in (np.float32, np.float64):
        gifo, c_prev, pi, pf, po = (a.astype(dtype) for a in ins)
        c, h, m = (np.full((S, C), np.nan, dtype) for _ in range(3))
        LstmCpuKernels().step_fwd(gifo, c_prev, c, h, m, pi, pf, po, 50.0, valid)
        outs.append((gifo, c, h, m))
    for a, ref in zip(*outs):
        assert a.dtype == np.float32 and np.all(a[-3:] == 0)
        err = np.abs(a.astype(np.float64) - ref) / np.maximum(1.0, np.abs(ref))
        assert err.max() < 16 * np.finfo(np.float32).eps, err.max()
