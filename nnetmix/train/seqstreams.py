"""Whole sequences per step, for BLSTMs: the batch sources of nnet-train-multistream-perutt.py.

Two sources with :class:`~nnetmix.train.streams.StreamBatcher`'s interface (see
:mod:`nnetmix.train.streams`), chosen by :func:`~nnetmix.train.streams.make_stream_source`:

* :class:`UttBatcher`, Kaldi's nnet-train-multistream-perutt: every step is up to
  ``--num-streams`` WHOLE utterances side by side, padded to the longest of them (padding
  masked), every stream reset. As Kaldi's MatrixBuffer, utterances are buffered
  (``--matrix-buffer-size`` MB, refilled below half of it) by length; each step picks a random
  length present in the buffer (seeded with ``--randomizer-seed``, where Kaldi calls ``rand()``)
  and takes the utterances of that length or the nearest longer ones (the longest left when
  none is longer), so little of a step is padding. A step stops at ``--num-streams``
  utterances or before its rows (streams x longest) would pass ``--max-frames``; Kaldi checks
  with the utterances already taken, so its last one can overshoot, ours never does. Given
  ``feat_dim``, the buffer counts 4 * feat_dim bytes per frame whatever the arrays hold, so a
  dry run over features zero columns wide (an MPI rank counting its steps before the pass)
  groups exactly as the real pass does.
  Utterances longer than ``--max-frames`` are skipped by the rule (Kaldi skips them silently;
  we warn and count).
* :class:`ChunkBatcher`, seed 002's context-sensitive-chunk BPTT ("21-64+21" is
  ``--chunk-left-context=21 --chunk-size=64 --chunk-right-context=21``): each utterance is cut
  into chunks of ``--chunk-size`` frames; each chunk becomes one independent sequence with up
  to L frames before it and R after it appended from the same utterance (fewer at the
  utterance's edges: no frames are invented). The context frames are computed (the BLSTM's
  two directions start in them) but masked out of the loss, the accuracy and the gradient.
  Chunks of all the buffered utterances (``--randomizer-size`` trained frames, as the frame
  randomizer) are shuffled together (seeded) and taken ``--num-streams`` per step, every
  stream reset. An utterance shorter than a chunk is one short chunk, and so is an
  utterance's last remainder: both are kept and padded in their step, and counted in the log
  (nothing is skipped, so every frame is trained on once per epoch).

Both flag every stream as reset in every step (a step is whole sequences) and set
``StreamBatch.lengths`` to each sequence's computed frames (context included); ``mask`` marks
the frames trained on.
"""
from __future__ import annotations

import bisect
import collections
import dataclasses
from typing import Iterator, Optional

import numpy as np

from nnetmix.options import option
from nnetmix.train.options import TrainError
from nnetmix.train.streams import StreamBatch, check_utterance

__all__ = ["PerUttOptions", "UttBatcher", "ChunkBatcher", "pack_sequences"]


@dataclasses.dataclass
class PerUttOptions:
    """nnet-train-multistream-perutt's options (Kaldi's names and defaults) and CSC-BPTT's."""

    num_streams: int = option(20, "Number of sentences processed in parallel (can be lower if "
                              "sentences are long)")
    max_frames: int = option(8000, "Max number of frames to be processed (rows of one step; longer "
                             "utterances are skipped)")
    matrix_buffer_size: float = option(3072.0, "Capacity of buffer for feature matrices, in MB "
                                       "(utterances of similar length are grouped from it)")
    chunk_size: int = option(0, "CSC-BPTT: cut each utterance into chunks of this many frames, "
                             "each trained as an independent sequence (0: whole utterances)")
    chunk_left_context: int = option(0, "CSC-BPTT: frames of left context appended before each "
                                     "chunk (computed, not trained on)")
    chunk_right_context: int = option(0, "CSC-BPTT: frames of right context appended after each "
                                      "chunk (computed, not trained on)")

    def check(self) -> None:
        for name in ("num_streams", "max_frames"):
            if getattr(self, name) <= 0:
                raise TrainError(f"--{name.replace('_', '-')} must be > 0, got "
                                 f"{getattr(self, name)}")
        if not self.matrix_buffer_size > 0:
            raise TrainError(f"--matrix-buffer-size must be > 0, got {self.matrix_buffer_size}")
        for name in ("chunk_size", "chunk_left_context", "chunk_right_context"):
            if getattr(self, name) < 0:
                raise TrainError(f"--{name.replace('_', '-')} must be >= 0, got "
                                 f"{getattr(self, name)}")
        if self.chunk_size == 0 and (self.chunk_left_context or self.chunk_right_context):
            raise TrainError("--chunk-left-context/--chunk-right-context need --chunk-size > 0 "
                             "(without it whole utterances are trained, which have no context "
                             "to append)")

    @property
    def csc(self) -> str:
        """The seed's name of the chunking, e.g. "21-64+21"."""
        return f"{self.chunk_left_context}-{self.chunk_size}+{self.chunk_right_context}"


def pack_sequences(seqs: list, dim: int) -> tuple[np.ndarray, StreamBatch]:
    """One step of whole sequences: ``seqs`` holds (feats (n, D), targets (n,), lo, hi), frames
    lo..hi-1 trained on; stream s is seqs[s], padded to the longest; every stream reset."""
    S = len(seqs)
    T = max(int(f.shape[0]) for f, _, _, _ in seqs)
    x = np.zeros((T * S, dim), dtype=np.float32)
    y = np.zeros(T * S, dtype=np.int32)
    mask = np.zeros(T * S, dtype=bool)
    lengths = []
    for s, (f, t, lo, hi) in enumerate(seqs):
        n = int(f.shape[0])
        lengths.append(n)
        x[s:n * S:S] = f
        y[s + lo * S:hi * S:S] = t[lo:hi]
        mask[s + lo * S:hi * S:S] = True
    return x, StreamBatch(y, mask, lengths, [1] * S)


class UttBatcher:
    """Whole utterances grouped by length (see the module docstring)."""

    randomized = True

    def __init__(self, opts: PerUttOptions, seed: int, feat_dim: Optional[int] = None):
        opts.check()
        self._frame_bytes = None if feat_dim is None else 4 * int(feat_dim)
        self.opts = opts
        self.max_rows = opts.max_frames
        self.max_sequence = opts.max_frames   #: the rule skips longer utterances
        self._cap = opts.matrix_buffer_size * 2.0 ** 20
        self._buf: dict[int, collections.deque] = {}   # length -> utterances, in arrival order
        self._lengths: list[int] = []                  # the keys of _buf, sorted
        self._bytes = 0
        self._rng = np.random.default_rng(seed)
        self._ended = False
        self._dim = None
        self.num_steps = 0
        self.num_utts = 0
        self.padding = 0

    def add(self, feats: np.ndarray, targets: np.ndarray) -> None:
        self._dim = check_utterance(feats, targets, self._dim)
        n = int(feats.shape[0])
        if n > self.opts.max_frames:
            raise TrainError(f"an utterance of {n} frames is longer than --max-frames="
                             f"{self.opts.max_frames} (the rule should have skipped it)")
        if n == 0:
            return
        if n not in self._buf:
            self._buf[n] = collections.deque()
            bisect.insort(self._lengths, n)
        f = np.asarray(feats, dtype=np.float32)
        size = f.nbytes if self._frame_bytes is None else n * self._frame_bytes
        self._buf[n].append((f, np.asarray(targets, dtype=np.int32), size))
        self._bytes += size
        self._ended = False

    def is_full(self) -> bool:
        return self._bytes > self._cap

    def done(self) -> bool:
        if self._ended or not self._buf:
            return not self._buf
        return self._bytes < 0.5 * self._cap    # Kaldi refills below half the buffer

    def end_of_data(self) -> None:
        self._ended = True

    def randomize(self) -> None:
        """Each step draws its own length (in minibatches)."""

    def _nearest(self, preferred: int) -> int:
        i = bisect.bisect_left(self._lengths, preferred)
        return self._lengths[min(i, len(self._lengths) - 1)]

    def _take(self, n: int) -> tuple:
        q = self._buf[n]
        f, t, size = q.popleft()
        if not q:
            del self._buf[n]
            self._lengths.remove(n)
        self._bytes -= size
        return f, t, 0, n

    def minibatches(self) -> Iterator[tuple[np.ndarray, StreamBatch]]:
        S, cap = self.opts.num_streams, self.opts.max_frames
        while not self.done():
            preferred = self._lengths[int(self._rng.integers(len(self._lengths)))]
            group = [self._take(self._nearest(preferred))]
            longest = group[0][3]
            while len(group) < S and self._buf:
                n = self._nearest(preferred)
                if max(longest, n) * (len(group) + 1) > cap:
                    break
                group.append(self._take(n))
                longest = max(longest, n)
            x, batch = pack_sequences(group, self._dim)
            self.num_steps += 1
            self.num_utts += len(group)
            self.padding += len(batch.mask) - batch.num_frames
            yield x, batch

    def summary(self) -> list[str]:
        if not self.num_steps:
            return []
        return [f"Per-utterance steps: {self.num_utts} utterances in {self.num_steps} steps "
                f"(at most --num-streams={self.opts.num_streams} utterances, --max-frames="
                f"{self.opts.max_frames} rows), {self.padding} padding frames"]


class ChunkBatcher:
    """Context-sensitive chunks, shuffled across utterances (see the module docstring)."""

    randomized = True
    max_sequence = None

    def __init__(self, opts: PerUttOptions, seed: int, randomizer_size: int):
        opts.check()
        if opts.chunk_size <= 0:
            raise TrainError("ChunkBatcher needs --chunk-size > 0")
        self.opts = opts
        self.randomizer_size = int(randomizer_size)
        C, L, R = opts.chunk_size, opts.chunk_left_context, opts.chunk_right_context
        self.max_rows = opts.num_streams * (L + C + R)
        self._chunks: list = []       # (feats, targets, lo, hi) views into the utterances
        self._frames = 0              # frames to train on in _chunks
        self._rng = np.random.default_rng(seed)
        self._ended = False
        self._dim = None
        self.num_utts = self.num_chunks = self.short_utts = self.short_last = 0
        self.context_frames = 0

    def add(self, feats: np.ndarray, targets: np.ndarray) -> None:
        self._dim = check_utterance(feats, targets, self._dim)
        n = int(feats.shape[0])
        if n == 0:
            return
        C, L, R = self.opts.chunk_size, self.opts.chunk_left_context, \
            self.opts.chunk_right_context
        f = np.asarray(feats, dtype=np.float32)
        t = np.asarray(targets, dtype=np.int32)
        for start in range(0, n, C):
            end = min(start + C, n)
            a, b = max(0, start - L), min(n, end + R)
            self._chunks.append((f[a:b], t[a:b], start - a, end - a))
            self.context_frames += (b - a) - (end - start)
        self.num_utts += 1
        self.num_chunks += -(-n // C)
        if n < C:
            self.short_utts += 1
        elif n % C:
            self.short_last += 1
        self._frames += n
        self._ended = False

    def is_full(self) -> bool:
        return self._frames >= self.randomizer_size

    def done(self) -> bool:
        if self._ended:
            return not self._chunks
        return len(self._chunks) < self.opts.num_streams

    def end_of_data(self) -> None:
        self._ended = True

    def randomize(self) -> None:
        """Shuffle every buffered chunk (those left from the last fill too)."""
        order = self._rng.permutation(len(self._chunks))
        self._chunks = [self._chunks[i] for i in order]

    def minibatches(self) -> Iterator[tuple[np.ndarray, StreamBatch]]:
        S = self.opts.num_streams
        while not self.done():
            group, self._chunks = self._chunks[:S], self._chunks[S:]
            x, batch = pack_sequences(group, self._dim)
            self._frames -= batch.num_frames
            yield x, batch

    def summary(self) -> list[str]:
        C = self.opts.chunk_size
        return [f"CSC-BPTT {self.opts.csc}: {self.num_utts} utterances cut into "
                f"{self.num_chunks} chunks; {self.short_utts} utterances shorter than "
                f"--chunk-size={C} (one padded chunk each), {self.short_last} last chunks "
                f"shorter than {C} (padded); {self.context_frames} context frames computed, "
                "not trained on"]
