"""Compressed mixing (nnetmix/parallel/compress.py): the compressors, the payload bytes on the
seeds' network, the bad options, and the MPI checks at the world size and under mpiexec with
2, 3 and 4 ranks (3: ranks need not be a power of two)."""
import numpy as np
import pytest

import parallel_compress_checks as C
from nnetmix.parallel import ErrorFeedback, Mixer, MpiTrainOptions, ParallelError, make_codec
from nnetmix.parallel.compress import BLOCK, read_mix_state, write_mix_state
from nnetmix.utils.state import StateError
from parallel_testutil import run_checks, world

#: seed 001's Switchboard DNN: 440 inputs, 6 x 2048 sigmoid layers, 8806 outputs
SEED_DIMS = (440, 2048, 2048, 2048, 2048, 2048, 2048, 8806)


def _params(dims) -> int:
    return sum(o * i + o for i, o in zip(dims[:-1], dims[1:]))


def _roundtrip(name, v, fraction=0.05):
    codec = make_codec(name, fraction)
    p = np.empty(codec.nbytes(v.shape[0]), np.uint8)
    codec.encode(v, p)
    d = np.empty_like(v)
    codec.decode(p, d)
    return p, d


def test_payload_bytes_on_the_seeds_network():
    n = _params(SEED_DIMS)
    assert n == 39928422
    f32 = 4 * n
    assert make_codec("fp16").nbytes(n) == 2 * n and make_codec("bf16").nbytes(n) == 2 * n
    assert f32 / make_codec("1bit").nbytes(n) > 25          # 1/8 + 8/256 bytes per value
    assert f32 / make_codec("topk", 0.01).nbytes(n) > 49    # 8 bytes per value kept
    # the sizes are what encode writes (a length that fills no block or byte exactly)
    v = np.random.default_rng(0).standard_normal(3 * BLOCK + 5).astype(np.float32)
    for name in C.COMPRESSED:
        p, _ = _roundtrip(name, v)
        assert p.nbytes == make_codec(name, 0.05).nbytes(v.shape[0]), name


def test_fp16_and_bf16_round_as_the_formats_do():
    v = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 1e5, -1e5, 0.0, 1e-3],
                 np.float32)
    p, d = _roundtrip("fp16", v)
    assert p.nbytes == 2 * v.size
    np.testing.assert_array_equal(d, np.clip(v, -65504, 65504).astype(np.float16))
    # bf16: keep 8 bits of mantissa, ties to even (1 + 2^-8 -> 1, 1 + 3 2^-8 -> 1 + 2^-6)
    p, d = _roundtrip("bf16", v)
    assert p.nbytes == 2 * v.size
    assert list(d[:4]) == [1.0, 1.0, 1 + 2 ** -6, -1.0]
    assert np.all(np.abs(d - v) <= np.abs(v) * 2 ** -8)
    _, d = _roundtrip("bf16", np.array([np.nan, np.inf, -np.inf], np.float32))
    assert np.isnan(d[0]) and d[1] == np.inf and d[2] == -np.inf


def test_1bit_keeps_signs_and_block_means():
    rng = np.random.default_rng(1)
    v = rng.standard_normal(2 * BLOCK + 17).astype(np.float32)
    _, d = _roundtrip("1bit", v)
    for lo in range(0, v.size, BLOCK):
        b, db = v[lo:lo + BLOCK], d[lo:lo + BLOCK]
        assert np.array_equal(db >= 0, b >= 0)
        np.testing.assert_allclose(db[b >= 0], b[b >= 0].mean(), rtol=1e-6)
        np.testing.assert_allclose(db[b < 0], b[b < 0].mean(), rtol=1e-6)


def test_topk_keeps_the_largest():
    v = np.array([0.1, -5.0, 0.2, 3.0, -0.3, 0.05, 4.0, 0.0, 0.0, 1.0], np.float32)
    p, d = _roundtrip("topk", v, 0.3)
    assert p.nbytes == 8 * 3
    np.testing.assert_array_equal(d, [0, -5, 0, 3, 0, 0, 4, 0, 0, 0])


@pytest.mark.parametrize("opts, match", [
    ({"mix_compression": "zip"}, r"^--mix-compression=zip: expected one of none, fp16, bf16, "
                                 r"1bit, topk$"),
    ({"mix_compression": "topk", "mix_compression_topk_fraction": 0.0},
     r"^--mix-compression-topk-fraction=0: expected a fraction in \(0, 1\]$"),
    ({"mix_compression_topk_fraction": 1.5}, r"^--mix-compression-topk-fraction=1.5: "),
    ({"mix_compression": "1bit", "mixing": "ring"}, r"^--mix-compression=1bit with "
                                                    r"--mixing=ring: .*use --mixing=allreduce"),
    ({"mix_compression": "fp16", "mixing": "butterfly"}, r"--mixing=butterfly"),
])
def test_bad_options_one_line(opts, match):
    with pytest.raises(ParallelError, match=match):
        MpiTrainOptions(**opts).check()
    MpiTrainOptions(mix_compression="topk", mix_compression_topk_fraction=1.0).check()
    MpiTrainOptions(mix_compression="1bit", bmuf=True).check()


def test_mixer_refuses_compression_with_pairwise_mixing():
    comm = world()
    fb = ErrorFeedback(comm, "1bit", 3)
    with pytest.raises(ParallelError, match="only allreduce mixing compresses"):
        Mixer(comm, "ring", "mpi", np.zeros(3, np.float32), feedback=fb)
    fb.free()


def test_state_roundtrip_and_refusals(tmp_path):
    comm = world()
    n, size = 11, comm.Get_size()
    fb = ErrorFeedback(comm, "topk", n, 0.2)
    fb.residual[:] = np.arange(n, dtype=np.float32) + comm.Get_rank()
    state = fb.state_dict("abc")
    if comm.Get_rank() == 0:
        write_mix_state(tmp_path / "m.mix.npz", state)
    comm.Barrier()
    state = comm.bcast(state)
    other = ErrorFeedback(comm, "topk", n, 0.2)
    other.load_state_dict(read_mix_state(tmp_path / "m.mix.npz"), "m.mix.npz", "abc")
    np.testing.assert_array_equal(other.residual, fb.residual)
    with pytest.raises(ParallelError, match="^m.mix.npz: mixing state saved with another model"):
        other.load_state_dict(state, "m.mix.npz", "xyz")
    one_bit = ErrorFeedback(comm, "1bit", n)
    with pytest.raises(ParallelError, match="saved with --mix-compression=topk, running with "
                                            "--mix-compression=1bit"):
        one_bit.load_state_dict(state, "m.mix.npz", "abc")
    bigger = ErrorFeedback(comm, "topk", n + 1, 0.2)
    with pytest.raises(ParallelError, match=rf"expected \({size}, {n + 1}\)"):
        bigger.load_state_dict(state, "m.mix.npz", "abc")
    (tmp_path / "bad.mix.npz").write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(StateError, match="bad.mix.npz: mixing state: .*start with zero residuals"):
        read_mix_state(tmp_path / "bad.mix.npz")
    for f in (fb, other, one_bit, bigger):
        f.free()


@pytest.mark.parametrize("check", C.CHECKS, ids=lambda c: c.__name__)
def test_checks_at_world_size(check):
    check(world())


@pytest.mark.parametrize("n", [2, 3, 4])
def test_compress_checks_under_mpiexec(n):
    run_checks("parallel_compress_checks.py", n, len(C.CHECKS))
