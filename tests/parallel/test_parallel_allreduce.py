"""All-reduce algorithms: at the world size pytest runs with (1 under plain pytest)."""
import numpy as np
import pytest

import parallel_mpi_checks as C
from nnetmix.parallel import ALGORITHMS, AllReducer, ParallelError, allreduce
from nnetmix.parallel.allreduce import _chunk_bounds
from nnetmix.parallel.buffers import BufferAccess, mpi_cuda_aware
from parallel_testutil import world


def test_algorithms_match_allreduce():
    C.check_allreduce_algorithms(world())


def test_device_paths_with_host_stand_ins():
    C.check_allreduce_device_paths(world())


def test_bad_algorithm_and_buffers_refused():
    C.check_allreduce_errors(world())


@pytest.mark.parametrize("n,parts", [(1, 8), (7, 3), (1001, 8), (2 ** 16 + 3, 5)])
def test_chunks_cover_buffer(n, parts):
    b = _chunk_bounds(n, parts)
    sizes = np.diff(b)
    assert b[0] == 0 and b[-1] == n and sizes.min() >= 0 and sizes.max() - sizes.min() <= 1


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_one_off_and_float64(alg):
    comm = world()
    x = np.arange(11, dtype=np.float64) * (comm.Get_rank() + 1)
    allreduce(comm, x, alg, average=True)
    expect = np.arange(11) * (comm.Get_size() + 1) / 2
    np.testing.assert_allclose(x, expect, rtol=1e-15)


def test_use_after_free_refused():
    red = AllReducer(world(), "ring", 4)
    red.free()
    with pytest.raises(ParallelError, match="after free"):
        red.sum(np.zeros(4, np.float32))


def test_cuda_aware_override(monkeypatch):
    monkeypatch.setenv("NNETMIX_MPI_CUDA_AWARE", "1")
    assert mpi_cuda_aware() is True
    monkeypatch.setenv("NNETMIX_MPI_CUDA_AWARE", "0")
    assert mpi_cuda_aware() is False
    monkeypatch.delenv("NNETMIX_MPI_CUDA_AWARE")
    assert mpi_cuda_aware(world()) in (True, False)


def test_staged_mode_preallocates_host_buffer():
    dev = C.StandInDevice()
    acc = BufferAccess(100, np.float32, dev, cuda_aware=False)
    assert acc.mode == "staged" and acc.host.shape == (100,)
    buf = np.arange(100, dtype=np.float32)
    work = acc.begin(buf)
    assert work is acc.host and np.array_equal(work, buf)
    work *= 2
    acc.end(buf)
    assert np.array_equal(buf, np.arange(100) * 2)
    with pytest.raises(ParallelError, match="floating point"):
        BufferAccess(10, np.int32)
