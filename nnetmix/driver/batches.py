"""The batches of a DNN epoch: shuffled frames, or streams when the network is recurrent.

:func:`~nnetmix.driver.dnn.dnn_epoch` trains a feed-forward network on shuffled frames
(:func:`~nnetmix.train.train_epoch`). Given stream options (nnet-train-mpi.py gives its
--num-streams/--batch-size) and a network with a recurrent component, it trains by multi-stream
truncated BPTT instead (:func:`~nnetmix.train.multistream.train_streams_epoch`): the same loop,
the same after-minibatch hook (an MPI rank's mixing), only another batch source and update rule.
This module is that choice, and what the ranks need of it before the pass: how many steps each
rank's source will take over its shard (:func:`stream_steps`), so that they agree on one number
and reach every mix together::

    streams = epoch_streams(nnet, StreamOptions(num_streams=4, batch_size=20))  # None: frames
    n = w.agree_min(stream_steps(usable_lengths, streams, opts, nnet.input_dim))
    st = train_pass(nnet, utts, opts, upd, streams=streams, hook=mix, limit=n)

The batch source is :func:`~nnetmix.train.streams.make_stream_source`'s, for the count as for
the pass, so the count holds for whichever source the stream options choose (nnet-train-mpi.py
passes :class:`~nnetmix.train.streams.StreamOptions`, or with --stream-mode=perutt
:class:`~nnetmix.train.seqstreams.PerUttOptions`).

An MPI step is one step of the source (T = --batch-size frames of each of S = --num-streams
utterances; or up to S whole utterances, or S CSC-BPTT chunks with their context):
--average-every counts these, and so does a BMUF block.

At a mix (model averaging, or a BMUF block's sync) only the parameters are mixed. Each rank's
LSTM state, the cell and recurrent projection carried from the last frame of each of its
streams, is not: it belongs to the streams, which hold the rank's own utterances, so the next
step goes on from it as it was (computed by the parameters before the mix), and a stream's state
is reset only when the stream starts a new utterance. This is Kaldi's multi-stream semantics
(state per stream, reset per utterance) under seed 002's mixing (BMUF filters the model
parameters only; with its CSC chunks no state crosses a step at all). Mixing the state would
hand one rank's utterance context to another rank's utterance.
"""
from __future__ import annotations

import logging
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from nnetmix.nnet import MultistreamComponent, Nnet, NnetTrainOptions
from nnetmix.train.data import Utterance
from nnetmix.train.loop import Hook, MinibatchLoop
from nnetmix.train.multistream import train_streams_epoch
from nnetmix.train.options import TrainOptions
from nnetmix.train.stats import EpochStats
from nnetmix.train.streams import make_stream_source
from nnetmix.train.trainer import train_epoch

__all__ = ["epoch_streams", "describe_step", "stream_steps", "train_pass"]

#: stream options: StreamOptions or PerUttOptions (make_stream_source takes either)
StreamOpts = Any


def epoch_streams(nnet: Nnet, stream_opts: Optional[StreamOpts],
                  always: bool = False) -> Optional[StreamOpts]:
    """The stream options the epoch trains with: ``stream_opts`` for a network with a
    recurrent component (for any network with ``always``: the multistream tools train a
    feed-forward one in streams too, as Kaldi's do, with a warning), None (shuffled frames)
    otherwise or when the tool gives none."""
    if stream_opts is None:
        return None
    if not always and not any(isinstance(c, MultistreamComponent) for c in nnet.components):
        return None
    stream_opts.check()
    return stream_opts


def describe_step(stream_opts: StreamOpts) -> str:
    """What one step holds, for the log: "4 streams x 20 frames", "up to 20 utterances",
    "up to 20 chunks 21-64+21"."""
    if hasattr(stream_opts, "batch_size"):
        return f"{stream_opts.num_streams} streams x {stream_opts.batch_size} frames"
    if getattr(stream_opts, "chunk_size", 0):
        return f"up to {stream_opts.num_streams} chunks {stream_opts.csc}"
    return f"up to {stream_opts.num_streams} utterances"


class _CountSteps:
    """The loop's update rule that only counts the steps (features zero columns wide)."""

    model = None

    def __init__(self):
        self.stats = EpochStats()

    def prepare(self, item: tuple) -> tuple[np.ndarray, np.ndarray]:
        return item[1], item[2]

    def step(self, _x: np.ndarray, _batch) -> None:
        self.stats.minibatches += 1


def stream_steps(lengths: Sequence[int], stream_opts: StreamOpts, opts: TrainOptions,
                 feat_dim: int) -> int:
    """The steps a multi-stream pass takes over utterances of these frame counts, in the order
    they are read (0: dropped), with the pass's ``opts`` (the rank's seed) and the network's
    input dim: counted by running the loop with the pass's own source over features zero
    columns wide, so the count is the source's. Utterances longer than the source takes are
    left out, as the pass skips them."""
    source = make_stream_source(stream_opts, opts, feat_dim)
    longest = source.max_sequence
    rule = _CountSteps()
    utts = ((str(i), np.zeros((int(n), 0), np.float32), np.zeros(int(n), np.int32))
            for i, n in enumerate(lengths)
            if int(n) > 0 and (longest is None or int(n) <= longest))
    MinibatchLoop(rule, source).run(utts, prefetch=False)
    return rule.stats.minibatches


def train_pass(nnet: Nnet, utterances: Iterable[Utterance], opts: TrainOptions,
               update_opts: Optional[NnetTrainOptions], *, streams: Optional[StreamOpts],
               feature_transform: Optional[Nnet] = None, hook: Optional[Hook] = None,
               limit: Optional[int] = None,
               log: Optional[logging.Logger] = None) -> EpochStats:
    """One pass: shuffled frames (``streams`` None) or multi-stream steps, with the hook after
    every minibatch or step and at most ``limit`` of them."""
    if streams is None:
        return train_epoch(nnet, utterances, opts, update_opts,
                           feature_transform=feature_transform, hook=hook,
                           num_minibatches=limit, log=log)
    return train_streams_epoch(nnet, utterances, opts, streams, update_opts,
                               feature_transform=feature_transform, log=log, hook=hook,
                               num_minibatches=limit)
