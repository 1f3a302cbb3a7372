"""Frame-balanced per-epoch partition and the agreement helpers."""
import numpy as np
import pytest

import parallel_mpi_checks as C
from nnetmix.parallel import (ParallelError, RankMismatchError, partition_utterances,
                              rank_utterances, shuffled_utterances)
from nnetmix.parallel.agree import mismatch_message, params_digest, value_digest
from parallel_testutil import world


def _utt2frames(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return {f"spk{i % 7}-utt{i:04d}": int(f) for i, f in enumerate(rng.integers(50, 1500, n))}


@pytest.mark.parametrize("method", ["greedy", "contiguous"])
@pytest.mark.parametrize("ranks", [1, 2, 3, 8])
def test_partition_covers_and_balances(method, ranks):
    u2f = _utt2frames()
    part = partition_utterances(u2f, ranks, epoch=2, seed=777, method=method)
    flat = [u for p in part.parts for u in p]
    assert sorted(flat) == sorted(u2f) and len(flat) == len(set(flat))   # each exactly once
    assert part.frames == [sum(u2f[u] for u in p) for p in part.parts]
    mean = sum(u2f.values()) / ranks
    assert max(part.frames) - mean <= max(u2f.values())                  # within one utterance
    if method == "greedy":
        assert part.imbalance < 1.02
    assert all(part.parts)


def test_partition_is_deterministic_and_reshuffled_per_epoch():
    u2f = _utt2frames()
    a = partition_utterances(u2f, 4, epoch=1)
    assert a.parts == partition_utterances(dict(reversed(list(u2f.items()))), 4, epoch=1).parts
    b = partition_utterances(u2f, 4, epoch=2)
    assert a.parts != b.parts and a.digest() != b.digest()
    assert rank_utterances(u2f, 3, 4, epoch=1) == a.parts[3]
    order = shuffled_utterances(list(u2f), epoch=1)
    assert sorted(order) == sorted(u2f) and order != sorted(u2f)
    # a share keeps the epoch's shuffled order
    pos = {u: i for i, u in enumerate(order)}
    assert all(pos[x] < pos[y] for p in a.parts for x, y in zip(p, p[1:]))


def test_partition_refusals():
    with pytest.raises(ParallelError, match="3 utterances for 4 ranks"):
        partition_utterances({"a": 1, "b": 2, "c": 3}, 4)
    with pytest.raises(ParallelError, match="utterance b has 0 frames"):
        partition_utterances({"a": 1, "b": 0}, 1)
    with pytest.raises(ParallelError, match="unknown method"):
        partition_utterances({"a": 1}, 1, method="random")


def test_agreement_at_world_size():
    C.check_agreement(world())


def test_mismatch_message_names_ranks():
    d0, d1 = value_digest(0.008), value_digest(0.004)
    msg = mismatch_message("learn_rate", [d0, d1, d0, d1], ["0.008", "0.004", "0.008", "0.004"])
    assert msg.startswith("check_same: learn_rate: ranks 1, 3 differ from rank 0: ranks 0, 2 "
                          "have 0.008; ranks 1, 3 have 0.004"), msg
    assert "rank 2 differs" in mismatch_message("x", [d0, d0, d1], ["a", "a", "b"])
    assert issubclass(RankMismatchError, ParallelError)


def test_digests():
    a = np.arange(5, dtype=np.float32)
    assert params_digest(a) == params_digest(a.copy())
    b = a.copy()
    b[2] = np.nextafter(b[2], 10, dtype=np.float32)
    assert params_digest(a) != params_digest(b)
    assert value_digest({"a": 1, "b": [1, 2]}) == value_digest({"b": [1, 2], "a": 1})
    assert value_digest(1) != value_digest(1.0) != value_digest("1")
    assert value_digest(a) != value_digest(a.astype(np.float64))
