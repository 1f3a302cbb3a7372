"""The frame randomizer of nnet1 (src/nnet/nnet-randomizer.{h,cc}).

Whole utterances are appended to a buffer until it holds MORE than ``randomizer_size`` frames
(Kaldi's ``IsFull``: ``data_end > randomizer_size``, so the utterance that crosses the line is
kept whole). The buffer is then permuted (training) and cut into consecutive minibatches of
exactly ``minibatch_size`` frames. What is left (< one minibatch) is moved to the front and
filled up with the next utterances, shuffled again with them; only the final remainder of the
epoch (< one minibatch) is never used. So an epoch over N frames is exactly
``N // minibatch_size`` minibatches (:func:`num_minibatches`), whatever the buffer size: the
number ranks agree on before an MPI epoch.

The permutation of each buffer comes from ONE generator seeded at the start of the epoch
(Kaldi seeds srand once and calls std::random_shuffle per buffer): numpy's PCG64 with
``randomizer_seed``, so the same data and seed give the same minibatches on every run (not
Kaldi's numbers).
"""
from __future__ import annotations

from typing import Iterator, Optional

import numpy as np

from nnetmix.train.options import RandomizerOptions, TrainError

__all__ = ["FrameRandomizer", "num_minibatches"]


def num_minibatches(num_frames: int, minibatch_size: int) -> int:
    """Minibatches an epoch over ``num_frames`` frames yields (the remainder is dropped)."""
    return int(num_frames) // int(minibatch_size)


class FrameRandomizer:
    """Host buffer of features (float32) and integer targets, shuffled and sliced.

    ``add(feats, targets)`` while ``not is_full()``; then ``randomize()`` (training) and
    ``for x, y in minibatches(): ...``; repeat; the generator stops with fewer than one
    minibatch left, which stays for the next round.
    """

    def __init__(self, opts: RandomizerOptions, randomize: bool = True):
        opts.check()
        self.opts = opts
        self.randomize_enabled = randomize
        self.rng = np.random.Generator(np.random.PCG64(opts.randomizer_seed))
        self._feats: Optional[np.ndarray] = None
        self._targets: Optional[np.ndarray] = None
        self._begin = 0
        self._end = 0

    @property
    def num_frames(self) -> int:
        """Frames in the buffer not yet handed out."""
        return self._end - self._begin

    def is_full(self) -> bool:
        return self._begin == 0 and self._end > self.opts.randomizer_size

    def done(self) -> bool:
        """Fewer than one minibatch left (Kaldi's Done())."""
        return self._end - self._begin < self.opts.minibatch_size

    def add(self, feats: np.ndarray, targets: np.ndarray) -> None:
        """Append one utterance: feats (T, D) float32, targets (T,) int32."""
        t = feats.shape[0]
        if targets.shape[0] != t:
            raise TrainError(f"randomizer: {t} feature rows but {targets.shape[0]} targets")
        if self._feats is None:
            cap = max(self.opts.randomizer_size + 1000, t + 1000)
            self._feats = np.empty((cap, feats.shape[1]), dtype=np.float32)
            self._targets = np.empty(cap, dtype=np.int32)
        elif feats.shape[1] != self._feats.shape[1]:
            raise TrainError(f"randomizer: feature dim {feats.shape[1]}, the buffer holds "
                             f"dim {self._feats.shape[1]}")
        if self._begin > 0:  # move the left-over to the front
            left = self._end - self._begin
            self._feats[:left] = self._feats[self._begin:self._end]
            self._targets[:left] = self._targets[self._begin:self._end]
            self._begin, self._end = 0, left
        if self._end + t > self._feats.shape[0]:  # grow, with Kaldi's 1000-row surplus
            cap = self._end + t + 1000
            f = np.empty((cap, self._feats.shape[1]), dtype=np.float32)
            g = np.empty(cap, dtype=np.int32)
            f[:self._end] = self._feats[:self._end]
            g[:self._end] = self._targets[:self._end]
            self._feats, self._targets = f, g
        self._feats[self._end:self._end + t] = feats
        self._targets[self._end:self._end + t] = targets
        self._end += t

    def randomize(self) -> None:
        """Permute the buffered frames (a no-op with randomize=False)."""
        if not self.randomize_enabled or self._end == 0:
            return
        if self._begin != 0:
            raise TrainError("randomizer: randomize() called with frames already handed out")
        perm = self.rng.permutation(self._end)
        self._feats[:self._end] = self._feats[perm]
        self._targets[:self._end] = self._targets[perm]

    def minibatches(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Consecutive (minibatch_size, D) / (minibatch_size,) slices while a full one is left.

        The slices are views into the buffer, valid until the next ``add``.
        """
        mb = self.opts.minibatch_size
        while not self.done():
            b = self._begin
            self._begin += mb
            yield self._feats[b:b + mb], self._targets[b:b + mb]
