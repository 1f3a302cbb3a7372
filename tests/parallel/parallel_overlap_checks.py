"""MPI checks of overlapped mixing (nnetmix/parallel/overlap.py), written to pass at ANY world
size: imported by test_parallel_overlap.py (COMM_WORLD, size 1 under plain pytest) and run as
a script under ``mpiexec -n N --oversubscribe`` for N = 2, 3, 4:

    mpiexec -n 3 --oversubscribe .venv/bin/python tests/parallel/parallel_overlap_checks.py

Every rank trains a quadratic of its own with plain SGD (the gradient of rank r at a step is
seeded by r and the step), so every rank recomputes all ranks' runs in float64 with the
delayed-update rule (tests/helpers.py local_sgd_reference) and compares its float32 model.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TESTS), str(TESTS / "parallel")]  # helpers, parallel_mpi_checks
from helpers import local_sgd_reference  # noqa: E402
from parallel_mpi_checks import main, same_on_all_ranks  # noqa: E402

from nnetmix.parallel import BMUF, BmufOptions  # noqa: E402
from nnetmix.parallel.overlap import OverlapMixer  # noqa: E402

N_PARAMS, EVERY, LR = 257, 3, 0.1
#: float32 training against the float64 reference over a few blocks
RTOL, ATOL = 1e-5, 1e-6


def grad(rank: int, step: int, p: np.ndarray) -> np.ndarray:
    """Rank ``rank``'s gradient at ``step``: its own quadratic (curvature a_r, centre c_r) plus
    noise seeded by (rank, step)."""
    g = np.random.default_rng([11, rank])
    a, c = g.uniform(0.5, 1.5, p.shape[0]), g.standard_normal(p.shape[0])
    noise = np.random.default_rng([rank, step]).standard_normal(p.shape[0])
    return a * (p - c) + 0.3 * noise


def _train(comm, steps: int, bmuf_opts=None) -> tuple[np.ndarray, OverlapMixer]:
    """This rank's float32 run: SGD steps, the mixer's progress/block_end/finish as the
    training hook calls them; returns the model written (BMUF: W)."""
    r = comm.Get_rank()
    x = np.random.default_rng(2).standard_normal(N_PARAMS).astype(np.float32)
    bmuf = BMUF(comm, x, bmuf_opts) if bmuf_opts is not None else None
    mixer = OverlapMixer(comm, x, bmuf=bmuf)
    for t in range(1, steps + 1):
        x -= (LR * grad(r, t - 1, x.astype(np.float64))).astype(np.float32)
        if t % EVERY:
            mixer.progress()
        else:
            mixer.block_end()
    mixer.finish(partial=bool(steps % EVERY))
    out = x.copy()
    if bmuf is not None:
        bmuf.copy_model(out)
        bmuf.free()
    mixer.free()
    return out, mixer


def _reference(comm, steps: int, bmuf=None, overlap: bool = True) -> np.ndarray:
    init = np.random.default_rng(2).standard_normal(N_PARAMS).astype(np.float32)
    return local_sgd_reference(grad, init, comm.Get_size(), steps, EVERY, LR, bmuf, overlap)


def check_model_averaging_is_the_delayed_rule(comm) -> None:
    """Model averaging overlapped, a last block full (12 steps) or partial (13): the model
    equals the float64 delayed-update rule, is the same bytes on every rank, and (N > 1) is
    not the blocking run's."""
    for steps in (12, 13):
        got, mixer = _train(comm, steps)
        ref = _reference(comm, steps)
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL, err_msg=f"{steps} steps")
        assert same_on_all_ranks(comm, got), steps
        assert mixer.mixes == steps // EVERY + (steps % EVERY > 0), (mixer.mixes, steps)
        if comm.Get_size() > 1:
            blocking = _reference(comm, steps, overlap=False)
            assert np.abs(blocking - ref).max() > 1000 * ATOL, steps


def check_bmuf_is_the_delayed_rule(comm) -> None:
    """BMUF overlapped (Nesterov and classical block momentum): W equals the float64 rule
    G = avg(s_k) - W_g(k-1), filtered, theta <- W_g(k) + (theta - s_k); the same on all ranks."""
    N = comm.Get_size()
    for nesterov in (True, False):
        for steps in (12, 13):
            opts = BmufOptions(block_momentum=-1.0, nesterov=nesterov)
            got, _ = _train(comm, steps, opts)
            rule = (opts.eta(N), 1.0, nesterov)
            ref = _reference(comm, steps, rule)
            np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL,
                                       err_msg=f"nesterov={nesterov}, {steps} steps")
            assert same_on_all_ranks(comm, got), (nesterov, steps)
            if N > 1:
                assert np.abs(_reference(comm, steps, rule, False) - ref).max() > 1000 * ATOL


def check_test_and_wait(comm) -> None:
    """A started average completes through MPI_Test alone (no Wait needed to finish it), and
    applying it once nothing trained since the snapshot leaves every rank with the average."""
    x = np.full(5, float(comm.Get_rank() + 1), np.float32)
    mixer = OverlapMixer(comm, x)
    mixer.block_end()
    while not mixer.avg.test():
        pass
    mixer.finish(partial=False)
    np.testing.assert_allclose(x, (comm.Get_size() + 1) / 2.0, rtol=1e-6)
    assert same_on_all_ranks(comm, x)
    assert not mixer.avg.pending and mixer.mixes == 1
    mixer.free()


CHECKS = [check_model_averaging_is_the_delayed_rule, check_bmuf_is_the_delayed_rule,
          check_test_and_wait]

if __name__ == "__main__":
    sys.exit(main(CHECKS, "overlapped mixing checks"))
