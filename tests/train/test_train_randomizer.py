"""FrameRandomizer: every frame once per epoch, seeded shuffles, minibatch slicing as nnet1."""
import numpy as np
import pytest

from nnetmix.train import FrameRandomizer, RandomizerOptions, TrainError, num_minibatches


def _run(lengths, opts, randomize=True):
    """Feed utterances whose frame values are their global frame index; collect minibatches."""
    r = FrameRandomizer(opts, randomize=randomize)
    out, start = [], 0
    for n in lengths:
        idx = np.arange(start, start + n)
        start += n
        if r.is_full():
            r.randomize()
            out += [(x[:, 0].astype(int).copy(), y.copy()) for x, y in r.minibatches()]
        r.add(idx[:, None].astype(np.float32), idx.astype(np.int32))
    r.randomize()
    out += [(x[:, 0].astype(int).copy(), y.copy()) for x, y in r.minibatches()]
    return out, start


@pytest.mark.parametrize("randomize", [True, False])
def test_every_frame_once_and_slicing(randomize):
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 120, size=57).tolist()
    opts = RandomizerOptions(minibatch_size=16, randomizer_size=200, randomizer_seed=3)
    mbs, total = _run(lengths, opts, randomize)
    assert len(mbs) == num_minibatches(total, 16) == total // 16
    assert all(x.shape == (16,) for x, _ in mbs)
    seen = np.concatenate([x for x, _ in mbs])
    for x, y in mbs:  # features and targets stay paired through the shuffle
        assert np.array_equal(x, y)
    assert len(np.unique(seen)) == seen.size  # no frame twice
    missing = np.setdiff1d(np.arange(total), seen)
    assert missing.size == total % 16  # only the final remainder is dropped
    if not randomize:
        assert np.array_equal(seen, np.arange(seen.size))  # CV: data order kept
    else:
        assert not np.array_equal(seen, np.sort(seen))


def test_seeded_reproducibility():
    lengths = [37, 80, 12, 200, 65, 90, 41] * 5
    a, _ = _run(lengths, RandomizerOptions(16, 256, 777))
    b, _ = _run(lengths, RandomizerOptions(16, 256, 777))
    c, _ = _run(lengths, RandomizerOptions(16, 256, 778))
    assert all(np.array_equal(x, y) for (x, _), (y, _) in zip(a, b))
    assert not all(np.array_equal(x, y) for (x, _), (y, _) in zip(a, c))


def test_buffer_fills_past_the_size_with_whole_utterances():
    r = FrameRandomizer(RandomizerOptions(minibatch_size=4, randomizer_size=10), randomize=False)
    r.add(np.zeros((6, 2), np.float32), np.zeros(6, np.int32))
    assert not r.is_full()
    r.add(np.zeros((4, 2), np.float32), np.zeros(4, np.int32))
    assert not r.is_full()  # 10 frames: full means MORE than randomizer_size (Kaldi's IsFull)
    r.add(np.zeros((7, 2), np.float32), np.zeros(7, np.int32))
    assert r.is_full() and r.num_frames == 17
    assert len(list(r.minibatches())) == 4 and r.num_frames == 1  # the left-over waits


def test_bad_options():
    with pytest.raises(TrainError, match="randomizer-size"):
        FrameRandomizer(RandomizerOptions(minibatch_size=512, randomizer_size=256))
