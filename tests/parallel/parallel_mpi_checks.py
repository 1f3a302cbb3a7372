"""MPI checks for nnetmix.parallel, written to pass at ANY world size.

Imported by the test_parallel_*.py files (which call them on COMM_WORLD: size 1 under plain
pytest, N under ``mpiexec -n N python -m pytest tests/parallel``), and run as a script by
test_parallel_mpi.py under ``mpiexec -n N --oversubscribe`` for N = 2, 3, 4, 8 (one launch per
N runs every check, since 8 oversubscribed ranks start slowly):

    mpiexec -n 4 --oversubscribe .venv/bin/python tests/parallel/parallel_mpi_checks.py

Every rank can regenerate every rank's input (seeded by rank), so the float64 reference is
computed locally and each result is checked against it with a rounding bound, against
comm.Allreduce, and for bit-identity across ranks.
"""
from __future__ import annotations

import sys

import numpy as np

from nnetmix.parallel import (ALGORITHMS, BMUF, AllReducer, BmufOptions, Mixer, ParallelError,
                              RankMismatchError, agree_max, agree_minibatches, check_same,
                              check_same_model, partition_utterances)

LENGTHS = (1, 7, 1001, 2 ** 16 + 3)


def rank_data(rank: int, n: int, seed: int = 0, dtype=np.float32) -> np.ndarray:
    return np.random.default_rng([seed, rank, n]).standard_normal(n).astype(dtype)


class StandInDevice:
    """A GPU-like backend whose arrays are host numpy arrays (the cpu backend's methods): drives
    the device-direct (CUDA-aware) and staged code paths without a GPU."""

    name = "standin-device"

    def __init__(self):
        from nnetmix.kernels import get_backend
        self._cpu = get_backend("cpu")
        self.syncs = 0

    def __getattr__(self, attr):
        return getattr(self._cpu, attr)

    def synchronize(self) -> None:
        self.syncs += 1


def same_on_all_ranks(comm, x: np.ndarray) -> bool:
    """True when x is bit-identical on every rank (elementwise MAX == MIN, no NaN here)."""
    from mpi4py import MPI
    hi, lo = x.copy(), x.copy()
    comm.Allreduce(MPI.IN_PLACE, hi, op=MPI.MAX)
    comm.Allreduce(MPI.IN_PLACE, lo, op=MPI.MIN)
    return bool(np.array_equal(hi, lo))


def _bound(n_ranks: int, abs_sum: np.ndarray, dtype=np.float32) -> np.ndarray:
    """Rounding bound of a float sum of n_ranks terms in any bracketing, plus one scaling."""
    eps = np.finfo(dtype).eps
    return (n_ranks + 1) * eps * abs_sum + np.finfo(dtype).tiny


def check_allreduce_algorithms(comm, lengths=LENGTHS) -> None:
    """Every algorithm equals comm.Allreduce (and the float64 sum) to rounding, sum and average,
    reused twice, bit-identical across ranks."""
    from mpi4py import MPI
    N, r = comm.Get_size(), comm.Get_rank()
    for n in lengths:
        parts = [rank_data(j, n).astype(np.float64) for j in range(N)]
        ref = np.sum(parts, axis=0)
        abs_sum = np.sum(np.abs(parts), axis=0)
        lib = rank_data(r, n)
        comm.Allreduce(MPI.IN_PLACE, lib, op=MPI.SUM)
        for alg in ALGORITHMS:
            with AllReducer(comm, alg, n, np.float32) as red:
                for average in (False, True, False):
                    x = rank_data(r, n)
                    red(x, average=average)
                    div = N if average else 1
                    tol = _bound(N, abs_sum) / div
                    err = np.abs(x - ref / div)
                    assert (err <= tol).all(), \
                        f"{alg} n={n} N={N} average={average}: max err {err.max()} vs float64"
                    err = np.abs(x.astype(np.float64) - lib.astype(np.float64) / div)
                    assert (err <= 2 * tol).all(), \
                        f"{alg} n={n} N={N}: max err {err.max()} vs comm.Allreduce"
                    if alg != "mpi":
                        assert same_on_all_ranks(comm, x), f"{alg} n={n}: ranks differ"
                assert red.calls == (3 if N > 1 else 0)


def check_allreduce_device_paths(comm, n: int = 1001) -> None:
    """The CUDA-aware (device ops) and staged (host copy) paths, with host stand-ins, give
    bit-for-bit what the host path gives."""
    N, r = comm.Get_size(), comm.Get_rank()
    for alg in ALGORITHMS:
        host = rank_data(r, n)
        with AllReducer(comm, alg, n) as red:
            red.average(host)
        for aware in (True, False):
            dev = StandInDevice()
            with AllReducer(comm, alg, n, backend=dev, cuda_aware=aware) as red:
                assert red.access.mode == ("device" if aware else "staged"), red
                x = rank_data(r, n)
                red.average(x)
                red2 = x.copy()
            assert np.array_equal(red2, host), f"{alg} cuda_aware={aware}: differs from host path"
            if N > 1:
                assert dev.syncs > 0, "device path never synchronised before MPI"


def check_allreduce_errors(comm) -> None:
    for bad in ("butterfly", "nccl"):
        try:
            AllReducer(comm, bad, 10)
        except ParallelError as e:
            assert "ring-async" in str(e), e
        else:
            raise AssertionError(f"algorithm {bad} was accepted")
    with AllReducer(comm, "ring", 10) as red:
        for buf in (np.zeros(11, np.float32), np.zeros(10, np.float64), np.zeros((2, 5), np.float32)):
            try:
                red.sum(buf)
            except ParallelError as e:
                assert "expected a flat buffer of 10 float32" in str(e), e
            else:
                raise AssertionError(f"buffer {buf.shape} {buf.dtype} was accepted")


def _is_pow2(n: int) -> bool:
    return n & (n - 1) == 0


def check_butterfly_mixing(comm, n: int = 1001) -> None:
    """One step is (theta_i + theta_{i^1})/2 exactly; log2 N steps from any start step give the
    exact average; non-powers of two are refused."""
    N, r = comm.Get_size(), comm.Get_rank()
    x = rank_data(r, n)
    if not _is_pow2(N):
        try:
            Mixer(comm, "butterfly", "mpi", x)
        except ParallelError as e:
            assert "power-of-two" in str(e) and str(N) in str(e), e
        else:
            raise AssertionError(f"butterfly mixing accepted {N} ranks")
        return
    parts = [rank_data(j, n).astype(np.float64) for j in range(N)]
    with Mixer(comm, "butterfly", "ring", x) as m:
        if N > 1:
            p = r ^ 1
            assert m.partner(0) == p
            m.mix(0)
            expect = (rank_data(r, n) + rank_data(p, n)) * np.float32(0.5)
            assert np.array_equal(x, expect), "butterfly step 0 is not (theta_i + theta_p)/2"
        log2n = N.bit_length() - 1
        for start in (0, 5):
            x[...] = rank_data(r, n)
            for k in range(start, start + log2n):
                m.mix(k)
            err = np.abs(x - np.mean(parts, axis=0))
            tol = _bound(N, np.sum(np.abs(parts), axis=0)) / N
            assert (err <= tol).all(), f"butterfly x{log2n} from step {start}: err {err.max()}"
            assert same_on_all_ranks(comm, x)
        m.exact_average()


def check_ring_mixing(comm, n: int = 1001) -> None:
    """One ring step: theta_i <- (theta_i + theta_{i-1})/2, bit for bit."""
    N, r = comm.Get_size(), comm.Get_rank()
    x = rank_data(r, n)
    with Mixer(comm, "ring", "tree", x) as m:
        m.mix(0)
        expect = rank_data(r, n) if N == 1 else \
            (rank_data(r, n) + rank_data((r - 1) % N, n)) * np.float32(0.5)
        assert np.array_equal(x, expect), "ring mixing step is not (theta_i + theta_{i-1})/2"
        assert m.partner(3) == (r - 1) % N
        m.exact_average()
        assert same_on_all_ranks(comm, x)


def check_allreduce_mixing(comm, n: int = 1001) -> None:
    """allreduce mixing and exact_average give the average with every algorithm."""
    N, r = comm.Get_size(), comm.Get_rank()
    parts = [rank_data(j, n).astype(np.float64) for j in range(N)]
    tol = _bound(N, np.sum(np.abs(parts), axis=0)) / N
    for alg in ALGORITHMS:
        x = rank_data(r, n)
        with Mixer(comm, "allreduce", alg, x) as m:
            m.mix(0)
            assert (np.abs(x - np.mean(parts, axis=0)) <= tol).all(), alg
            x[...] = rank_data(r, n)
            m.exact_average()
            assert (np.abs(x - np.mean(parts, axis=0)) <= tol).all(), alg


def check_bmuf_is_model_averaging(comm, n: int = 1001) -> None:
    """eta = 0, zeta = 1 is plain model averaging, bit for bit, block after block (CBM and NBM)."""
    r = comm.Get_rank()
    for nesterov in (False, True):
        opts = BmufOptions(block_momentum=0.0, block_learn_rate=1.0, nesterov=nesterov)
        params = rank_data(0, n)            # every rank starts from the same model
        plain = params.copy()
        with Mixer(comm, "allreduce", "ring", plain) as mixer:
            bmuf = BMUF(comm, params, opts, "ring")
            for t in range(3):
                step = rank_data(r, n, seed=100 + t) * np.float32(0.01)
                params += step
                plain += step
                bmuf.sync()
                mixer.exact_average()
                assert np.array_equal(params, plain), f"BMUF(eta=0) block {t} != averaging"
                assert np.array_equal(bmuf.model, plain) and np.array_equal(bmuf.global_model, plain)
            bmuf.free()


# hand-computed BMUF trajectory (module docstring of check_bmuf_three_blocks)
HAND = {
    False: {"W": [[0.75, 0.5], [1.3125, -0.625], [1.359375, -0.71875]]},
    True: {"W": [[0.75, 0.5], [1.03125, -0.0625], [1.04296875, -0.0859375]],
           "W_g": [[1.125, -0.25], [1.171875, -0.34375], [1.048828125, -0.09765625]],
           "delta": [[0.75, -1.5], [0.28125, -0.5625], [0.01171875, -0.0234375]]},
}


def check_bmuf_three_blocks(comm) -> None:
    """Three BMUF blocks on a 2-vector "model", eta = 0.5, zeta = 1.5, W_0 = (0, 2).

    The local "training" of rank j in a block moves halfway to its target:
    theta_j = W_g + 0.5 (c_j - W_g), with c_j = c + (j - (N-1)/2) d, c = (1, 0), so the average
    of the local models is W_bar = W_g + 0.5 (c - W_g) at any N. By hand (see HAND):
    CBM: G1 = (0.5, -1), Delta1 = (0.75, -1.5), W1 = (0.75, 0.5); G2 = (0.125, -0.25),
         Delta2 = (0.5625, -1.125), W2 = (1.3125, -0.625); G3 = (-0.15625, 0.3125),
         Delta3 = (0.046875, -0.09375), W3 = (1.359375, -0.71875).
    NBM: W1 as CBM, W_g1 = W1 + 0.5 Delta1 = (1.125, -0.25); G2 = (-0.0625, 0.125),
         Delta2 = (0.28125, -0.5625), W2 = (1.03125, -0.0625), W_g2 = (1.171875, -0.34375);
         G3 = (-0.0859375, 0.171875), Delta3 = (0.01171875, -0.0234375),
         W3 = (1.04296875, -0.0859375), W_g3 = (1.048828125, -0.09765625).
    """
    N, r = comm.Get_size(), comm.Get_rank()
    c = np.array([1.0, 0.0])
    target = c + (r - (N - 1) / 2) * np.array([0.25, -0.5])
    eta, zeta = 0.5, 1.5
    for nesterov in (False, True):
        params = np.array([0.0, 2.0])
        velocity = np.ones(2)
        bmuf = BMUF(comm, params, BmufOptions(eta, zeta, nesterov), "recursive-doubling",
                    velocity=velocity)
        assert (bmuf.W_g is bmuf.W) == (not nesterov), "W and W_g must be distinct in NBM only"
        # the same equations in float64, as a second reference
        W, Wg, D = np.array([0.0, 2.0]), np.array([0.0, 2.0]), np.zeros(2)
        for t in range(3):
            params += 0.5 * (target - params)               # local training of this rank
            bmuf.sync()
            G = (Wg + 0.5 * (c - Wg)) - Wg
            D = eta * D + zeta * G
            W = W + D
            Wg = W + eta * D if nesterov else W
            np.testing.assert_allclose(bmuf.model, W, rtol=0, atol=1e-12)
            np.testing.assert_allclose(bmuf.global_model, Wg, rtol=0, atol=1e-12)
            np.testing.assert_allclose(params, Wg, rtol=0, atol=1e-12)
            for key, rows in HAND[nesterov].items():
                got = {"W": bmuf.model, "W_g": bmuf.global_model, "delta": bmuf.delta}[key]
                np.testing.assert_allclose(got, rows[t], rtol=0, atol=1e-12,
                                           err_msg=f"nesterov={nesterov} block {t + 1} {key}")
            assert not velocity.any(), "local velocity not reset at block start"
            velocity[...] = 1.0
        if nesterov:
            assert not np.allclose(bmuf.model, bmuf.global_model)
        bmuf.free()
    # reset_momentum_after_block=False leaves the local velocity alone
    params, velocity = np.array([0.0, 2.0]), np.ones(2)
    bmuf = BMUF(comm, params, BmufOptions(eta, zeta, True, False), velocity=velocity)
    bmuf.sync()
    assert (velocity == 1.0).all()
    bmuf.free()


def check_agreement(comm) -> None:
    """agree_minibatches is the min; check_same passes equal values and refuses differing ones
    on every rank, naming the ranks that differ."""
    N, r = comm.Get_size(), comm.Get_rank()
    assert agree_minibatches(comm, 10 + 3 * r) == 10
    assert agree_max(comm, r) == N - 1
    check_same(comm, "options", {"learn_rate": 0.008, "mix": "butterfly"})
    check_same_model(comm, rank_data(0, 101))
    utt2frames = {f"utt{i:03d}": 50 + (i * 37) % 200 for i in range(40)}
    part = partition_utterances(utt2frames, N, epoch=3)
    check_same(comm, "data partition", part.digest())
    if N == 1:
        return
    odd = N - 1
    try:
        check_same(comm, "options", {"learn_rate": 0.004 if r == odd else 0.008})
    except RankMismatchError as e:
        msg = str(e)
        assert f"rank {odd} differ" in msg and "0.004" in msg and "rank" in msg, msg
    else:
        raise AssertionError("check_same accepted differing options")
    model = rank_data(0, 101)
    if r == odd:
        model[7] += 1.0
    try:
        check_same_model(comm, model)
    except RankMismatchError as e:
        assert f"rank {odd} differ" in str(e) and "initial model" in str(e), e
    else:
        raise AssertionError("check_same_model accepted differing models")


CHECKS = [check_allreduce_algorithms, check_allreduce_device_paths, check_allreduce_errors,
          check_butterfly_mixing, check_ring_mixing, check_allreduce_mixing,
          check_bmuf_is_model_averaging, check_bmuf_three_blocks, check_agreement]


def main(checks=None, what: str = "MPI checks") -> int:
    """Run ``checks`` (default: this module's) on COMM_WORLD, one ``ok`` line each, and a last
    line ``N ranks: all K checks passed`` (what the mpiexec tests look for)."""
    from mpi4py import MPI

    from nnetmix.parallel import Watchdog, run_ranks
    comm = MPI.COMM_WORLD
    checks = CHECKS if checks is None else checks

    def run_all() -> None:
        with Watchdog(comm, 240, f"{what} made no progress") as wd:
            for check in checks:
                check(comm)
                wd.kick()
                comm.Barrier()
                if comm.Get_rank() == 0:
                    print(f"ok {check.__name__}", flush=True)

    run_ranks(comm, run_all)
    if comm.Get_rank() == 0:
        print(f"{comm.Get_size()} ranks: all {len(checks)} checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
