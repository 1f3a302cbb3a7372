"""Device buffers (numba DeviceNDArray on the CUDA simulator) through the staged MPI path.

Run by test_parallel_device.py as
``NUMBA_ENABLE_CUDASIM=1 mpiexec -n 2 python tests/parallel/parallel_cudasim_driver.py``
(also passes at size 1). The simulator's arrays are host memory behind numba's device-array
API, so this checks the staging code (copy_to_host into the preallocated buffer, copy back via
Backend.copy) and BMUF's arithmetic through the cuda backend, not real GPU transfers or a
CUDA-aware MPI (unverified: no GPU here).
"""
from __future__ import annotations

import sys

import numpy as np


def main() -> int:
    from mpi4py import MPI

    from nnetmix.kernels import get_backend
    from nnetmix.parallel import ALGORITHMS, BMUF, AllReducer, BmufOptions, Mixer, run_ranks
    comm = MPI.COMM_WORLD
    N, r = comm.Get_size(), comm.Get_rank()

    def body() -> None:
        be = get_backend("cuda")
        n = 1001
        data = [np.random.default_rng([5, j]).standard_normal(n).astype(np.float32) for j in range(N)]
        mean = np.mean(np.array(data, dtype=np.float64), axis=0)
        for alg in ALGORITHMS:
            dev = be.asarray(data[r])
            with AllReducer(comm, alg, n, backend=be, cuda_aware=False) as red:
                assert red.access.mode == "staged"
                red.average(dev)
                red.average(dev)           # reused: averaging an average changes nothing much
            np.testing.assert_allclose(be.to_host(dev), mean, rtol=0, atol=1e-5, err_msg=alg)
        dev = be.asarray(data[r])
        with Mixer(comm, "ring", "ring", dev, backend=be, cuda_aware=False) as m:
            m.mix(0)
            expect = (data[r] + data[(r - 1) % N]) * np.float32(0.5) if N > 1 else data[r]
            np.testing.assert_array_equal(be.to_host(dev), expect)
        params = be.asarray(np.zeros(4, np.float32))
        velocity = be.asarray(np.ones(4, np.float32))
        bmuf = BMUF(comm, params, BmufOptions(0.5, 1.0, True), "ring", backend=be,
                    velocity=velocity, cuda_aware=False)
        be.copy(params, be.asarray(np.full(4, 1.0 + r, np.float32)))
        bmuf.sync()
        g = 1.0 + (N - 1) / 2          # W_bar - W_g(0) = mean of (1 + j)
        np.testing.assert_allclose(be.to_host(bmuf.model), g, rtol=1e-6)
        np.testing.assert_allclose(be.to_host(params), g + 0.5 * g, rtol=1e-6)
        assert not be.to_host(velocity).any()
        bmuf.free()

    run_ranks(comm, body)
    if r == 0:
        print(f"{N} ranks: cuda simulator checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
