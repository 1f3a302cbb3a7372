"""Multi-stream batches for truncated BPTT (Kaldi's nnet-train-multistream): the batch source
that :class:`~nnetmix.train.loop.MinibatchLoop` drives in place of the frame randomizer.

``S = num_streams`` utterances are read in parallel, one per stream; every step takes the next
``T = batch_size`` frames of each stream and interleaves them, as nnet1's recurrent components
expect (row ``t*S + s`` is frame ``t`` of stream ``s``, see :mod:`nnetmix.nnet.recurrent`)::

    batcher = StreamBatcher(StreamOptions(batch_size=20, num_streams=4))
    loop = MinibatchLoop(rule, batcher)       # rule.step(x, batch) gets a StreamBatch
    loop.run(utterances)

* Before every step each empty stream takes the next utterance (in the order they were added,
  streams 0, 1, ... in turn) and is flagged in ``StreamBatch.resets`` (the trainer calls
  ``Nnet.reset_streams`` with it, so the LSTM state carried from the previous utterance in that
  stream is dropped).
* A stream whose utterance has fewer than T frames left is padded with zero rows:
  ``StreamBatch.lengths[s]`` frames are real (``Nnet.set_seq_lengths``) and ``mask`` marks the
  real rows, the only ones the loss and the accuracy count (Kaldi's frame weights, 0 on
  padding). A stream with nothing left (the data ran out) has length 0.
* Every step is T*S rows, whatever the padding, as Kaldi's.

How it fits the loop, whose source interface (``add``, ``is_full``, ``done``, ``randomize``,
``minibatches``) it implements: ``add`` queues an utterance; ``is_full`` says the queue can
refill every empty stream, so ``minibatches`` yields steps as long as it can (exactly the steps
Kaldi takes, since Kaldi too refills only empty streams) and then returns for more data. Only after
``end_of_data`` (the loop calls it once the utterances are exhausted) does it run the streams
out, with empty streams left empty, until no frame is left: that is the one change the loop
needed, since a frame randomizer never had to know that the data had ended. ``randomize`` does
nothing: streams keep the order of the data (Kaldi's --randomize is a dummy option here).

The batch-source interface (what :mod:`nnetmix.train.multistream` consumes; the sources of
:mod:`nnetmix.train.seqstreams` have it too, and :func:`make_stream_source` picks one from the
options, for the one-worker and the MPI trainers alike):

* ``add(feats, targets)``, ``is_full()``, ``done()``, ``end_of_data()``, ``randomize()`` as
  above; ``minibatches()`` yields ``(x (rows, D) float32, StreamBatch)``, rows ``t*S + s``;
* ``randomized``: whether the source reorders the data (the summary line's RANDOMIZED);
* ``max_rows``: no step has more rows (the rule sizes its buffers with it);
* ``max_sequence``: None, or the longest utterance the source takes (the rule skips longer
  ones with a warning and a count, as Kaldi's perutt tool skips them);
* ``summary()``: the lines the trainer logs after the pass (counts of what was padded/cut).
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Iterator, Optional

import numpy as np

from nnetmix.options import option
from nnetmix.train.options import TrainError, TrainOptions

__all__ = ["StreamOptions", "StreamBatch", "StreamBatcher", "check_utterance",
           "make_stream_source"]


@dataclasses.dataclass
class StreamOptions:
    """nnet-train-multistream's own options (Kaldi's names and defaults)."""

    batch_size: int = option(20, "Length of 'one stream' in the Multi-stream training (frames "
                             "per stream per step: the BPTT truncation)")
    num_streams: int = option(4, "Number of streams in the Multi-stream training")

    def check(self) -> None:
        if self.batch_size <= 0:
            raise TrainError(f"--batch-size must be > 0, got {self.batch_size}")
        if self.num_streams <= 0:
            raise TrainError(f"--num-streams must be > 0, got {self.num_streams}")


@dataclasses.dataclass
class StreamBatch:
    """One step's layout (the features are the ``x`` handed beside it)."""

    targets: np.ndarray   #: (T*S,) int32; 0 on padding rows
    mask: np.ndarray      #: (T*S,) bool; True on real frames
    lengths: list         #: S ints: real frames of each stream in this step
    resets: list          #: S ints: 1 where a stream starts a new sequence in this step

    @property
    def num_frames(self) -> int:
        """The frames trained on (a CSC step's context frames are computed, not counted)."""
        return int(np.count_nonzero(self.mask))


def check_utterance(feats: np.ndarray, targets: np.ndarray, dim) -> int:
    """A source's checks on one utterance; returns the feature dim the streams hold."""
    n = int(feats.shape[0])
    if int(targets.shape[0]) != n:
        raise TrainError(f"stream batcher: {n} feature rows but {targets.shape[0]} targets")
    if dim is not None and feats.shape[1] != dim:
        raise TrainError(f"stream batcher: feature dim {feats.shape[1]}, the streams hold "
                         f"dim {dim}")
    return int(feats.shape[1])


class StreamBatcher:
    """See the module docstring."""

    randomized = False
    max_sequence = None

    def __init__(self, opts: StreamOptions):
        opts.check()
        self.opts = opts
        S = opts.num_streams
        self.max_rows = opts.batch_size * S
        self._queue: collections.deque = collections.deque()
        self._feats: list = [None] * S      # the rest of each stream's utterance
        self._targets: list = [None] * S
        self._new = [0] * S                 # stream took a new utterance since the last step
        self._ended = False
        self._dim = None

    def _left(self, s: int) -> int:
        f = self._feats[s]
        return 0 if f is None else int(f.shape[0])

    # -- the loop's source interface ---------------------------------------------------------
    def add(self, feats: np.ndarray, targets: np.ndarray) -> None:
        """Queue one utterance: feats (N, D), targets (N,) int32, N > 0."""
        self._dim = check_utterance(feats, targets, self._dim)
        if int(feats.shape[0]) > 0:
            self._queue.append((np.asarray(feats, dtype=np.float32),
                                np.asarray(targets, dtype=np.int32)))
        self._ended = False  # a loop run again (a later pass) feeds it afresh

    def _needed(self) -> int:
        """Utterances the next step takes: one per empty stream."""
        return sum(1 for s in range(self.opts.num_streams) if self._left(s) == 0)

    def is_full(self) -> bool:
        return len(self._queue) >= self._needed()

    def done(self) -> bool:
        """Nothing left to step over (or, before the end of the data, nothing runnable)."""
        if self._ended:
            return not self._queue and all(self._left(s) == 0
                                           for s in range(self.opts.num_streams))
        return not self.is_full()

    def end_of_data(self) -> None:
        """No more utterances this pass: run the streams out."""
        self._ended = True

    def randomize(self) -> None:
        """Streams are not shuffled."""

    def _refill(self) -> None:
        for s in range(self.opts.num_streams):
            if self._left(s) == 0 and self._queue:
                self._feats[s], self._targets[s] = self._queue.popleft()
                self._new[s] = 1

    def minibatches(self) -> Iterator[tuple[np.ndarray, StreamBatch]]:
        """Steps while every stream can be kept busy (all of them after end_of_data):
        (x (T*S, D) float32, StreamBatch). ``x`` is a fresh array each step."""
        T, S = self.opts.batch_size, self.opts.num_streams
        while not self.done():
            self._refill()
            x = np.zeros((T * S, self._dim), dtype=np.float32)
            y = np.zeros(T * S, dtype=np.int32)
            mask = np.zeros(T * S, dtype=bool)
            lengths = []
            for s in range(S):
                n = min(T, self._left(s))
                lengths.append(n)
                if n == 0:
                    continue
                x[s:n * S:S] = self._feats[s][:n]
                y[s:n * S:S] = self._targets[s][:n]
                mask[s:n * S:S] = True
                if n == self._left(s):
                    self._feats[s] = self._targets[s] = None
                else:
                    self._feats[s] = self._feats[s][n:]
                    self._targets[s] = self._targets[s][n:]
            resets, self._new = self._new, [0] * S
            yield x, StreamBatch(y, mask, lengths, resets)

    def summary(self) -> list[str]:
        """Nothing to add: the epoch's own lines say it all."""
        return []


def make_stream_source(opts, train_opts: TrainOptions, feat_dim: Optional[int] = None):
    """The batch source for a recurrent trainer's options: :class:`StreamOptions` gives a
    :class:`StreamBatcher` (nnet-train-multistream), :class:`~nnetmix.train.seqstreams.
    PerUttOptions` whole utterances (nnet-train-multistream-perutt) or, with ``chunk_size``,
    CSC-BPTT chunks; ``train_opts`` gives the seed and the chunk buffer's size
    (--randomizer-seed, --randomizer-size). ``feat_dim`` (the network's input dim): the
    per-utterance buffer counts its size from it, so a dry run over zero-width features
    (counting an MPI rank's steps) takes the same steps as the pass; the other sources' steps
    depend on the frame counts alone."""
    if isinstance(opts, StreamOptions):
        return StreamBatcher(opts)
    from nnetmix.train import seqstreams  # cycle: seqstreams builds on StreamBatch
    if not isinstance(opts, seqstreams.PerUttOptions):
        raise TrainError(f"no stream batch source for options of type {type(opts).__name__}")
    if opts.chunk_size > 0:
        return seqstreams.ChunkBatcher(opts, train_opts.randomizer_seed,
                                       train_opts.randomizer_size)
    return seqstreams.UttBatcher(opts, train_opts.randomizer_seed, feat_dim)
