"""MPI checks of compressed mixing (nnetmix/parallel/compress.py), written to pass at ANY world
size: imported by test_parallel_compress.py (COMM_WORLD, size 1 under plain pytest) and run as
a script under ``mpiexec -n N --oversubscribe`` for N = 2, 3, 4:

    mpiexec -n 3 --oversubscribe .venv/bin/python tests/parallel/parallel_compress_checks.py

Every rank regenerates every rank's update (seeded by rank and step), so the rule of the module
docstring is recomputed locally, rank by rank in rank order, and compared bit for bit.
"""
from __future__ import annotations

import sys

import numpy as np

from nnetmix.parallel import BMUF, BmufOptions, ErrorFeedback, Mixer, make_codec
from parallel_mpi_checks import main, same_on_all_ranks

COMPRESSED = ("fp16", "bf16", "1bit", "topk")
FRACTION = 0.05


def update(rank: int, step: int, n: int) -> np.ndarray:
    """Rank ``rank``'s local update at ``step``: a drift every rank shares plus its own noise."""
    drift = np.random.default_rng([7, n]).standard_normal(n)
    noise = np.random.default_rng([rank, step, n]).standard_normal(n)
    return (0.01 * drift + 0.01 * noise).astype(np.float32)


def _roundtrip(codec, v: np.ndarray) -> np.ndarray:
    p = np.empty(codec.nbytes(v.shape[0]), np.uint8)
    codec.encode(v, p)
    d = np.empty_like(v)
    codec.decode(p, d)
    return d


def check_mix_is_the_rule(comm, n: int = 1001, steps: int = 5) -> None:
    """Model averaging with compression: after every mix each rank holds A + (1/N) sum_r
    D(C(v_r)) exactly as the rule computes it, bitwise the same on all ranks, and its residual
    is v_r - D(C(v_r))."""
    N, r = comm.Get_size(), comm.Get_rank()
    for name in COMPRESSED:
        codec = make_codec(name, FRACTION)
        x = np.random.default_rng(3).standard_normal(n).astype(np.float32)   # one start model
        A, res = x.copy(), [np.zeros(n, np.float32) for _ in range(N)]
        fb = ErrorFeedback(comm, name, n, FRACTION)
        with Mixer(comm, "allreduce", "mpi", x, feedback=fb) as m:
            for t in range(steps):
                x += update(r, t, n)
                if N > 1:
                    m.mix(t)
                else:
                    fb.average(x)      # a Mixer of one rank does nothing; the rule still holds
                acc = np.zeros(n, np.float32)
                for j in range(N):
                    v = (A + update(j, t, n)) - A + res[j]
                    d = _roundtrip(codec, v)
                    res[j] = v - d
                    acc += d
                acc *= np.float32(1.0 / N)
                A = A + acc
                assert np.array_equal(x, A), (name, t)
                assert np.array_equal(fb.residual, res[r]), (name, t)
                assert same_on_all_ranks(comm, x), (name, t)
        assert fb.bytes_sent == steps * (N - 1) * fb.payload_bytes
        fb.free()


def check_bmuf_compressed(comm, n: int = 1001, blocks: int = 4) -> None:
    """BMUF with compression: every rank ends every block with the same W, W_g and Delta, and
    G(t) is the compressed average of the block's updates (W_bar = W_g(t-1) + G)."""
    r = comm.Get_rank()
    for name in COMPRESSED:
        params = np.random.default_rng(4).standard_normal(n).astype(np.float32)
        fb = ErrorFeedback(comm, name, n, FRACTION)
        bmuf = BMUF(comm, params, BmufOptions(block_momentum=0.5), feedback=fb)
        for t in range(blocks):
            params += update(r, t, n)
            bmuf.sync()
            for a in (params, bmuf.W, bmuf.W_g, bmuf.delta):
                assert same_on_all_ranks(comm, a), (name, t)
        assert fb.mixes == blocks and np.abs(fb.residual).max() > 0, name
        bmuf.free()
        fb.free()


def check_error_feedback_tracks_the_sum(comm, n: int = 4096, steps: int = 60) -> None:
    """The sum of what the mixes applied is the mean of the true updates' sum less the mean
    residual, so with error feedback it tracks the true sum (relative error falling with the
    steps) and the residual stays bounded; topk without error feedback drifts away."""
    N, r = comm.Get_size(), comm.Get_rank()
    for name in COMPRESSED:
        x = np.zeros(n, np.float32)
        fb = ErrorFeedback(comm, name, n, FRACTION)
        fb.start(x)
        true = np.zeros(n, np.float64)
        norms = []
        for t in range(steps):
            x += update(r, t, n)
            fb.average(x)
            true += np.mean([update(j, t, n) for j in range(N)], axis=0)
            norms.append(np.linalg.norm(fb.residual))
        mean_res = np.zeros(n, np.float32)
        from mpi4py import MPI
        comm.Allreduce(fb.residual, mean_res, op=MPI.SUM)
        mean_res /= N
        # applied = true - mean residual, to float32 rounding of the running sums
        np.testing.assert_allclose(x, true - mean_res, rtol=0, atol=2e-4 * steps ** 0.5)
        rel = np.linalg.norm(x - true) / np.linalg.norm(true)
        assert rel < {"fp16": 1e-3, "bf16": 1e-2, "1bit": 0.1, "topk": 0.15}[name], (name, rel)
        # bounded: the second half of the run does not grow the residual
        assert max(norms[steps // 2:]) <= 1.5 * max(norms[:steps // 2]) + 1e-6, (name, norms)
        fb.free()
    # without error feedback (residual thrown away) top-k loses most of the drift
    codec = make_codec("topk", FRACTION)
    applied = np.zeros(n, np.float64)
    true = np.zeros(n, np.float64)
    for t in range(steps):
        u = update(r, t, n)
        applied += _roundtrip(codec, u)
        true += u
    assert np.linalg.norm(applied - true) / np.linalg.norm(true) > 0.5


CHECKS = [check_mix_is_the_rule, check_bmuf_compressed, check_error_feedback_tracks_the_sum]


if __name__ == "__main__":
    sys.exit(main(CHECKS, "compressed mixing checks"))
