"""One epoch of multi-stream training of a recurrent network, or one CV pass: Kaldi's
nnet-train-multistream (truncated BPTT), nnet-train-multistream-perutt (whole utterances) and
seed 002's CSC-BPTT (context-sensitive chunks).

The same loop and the same loss, accuracy and update code as frame-shuffled training
(:class:`~nnetmix.train.trainer.DnnRule`); only the batches differ: a stream batch source
(:func:`~nnetmix.train.streams.make_stream_source`) in place of the frame randomizer::

    stats = train_streams_epoch(nnet, utterances, TrainOptions(), StreamOptions(num_streams=4,
                                batch_size=20), NnetTrainOptions(learn_rate=1e-4))
    # whole utterances / CSC-BPTT "21-64+21":
    stats = train_streams_epoch(nnet, utterances, TrainOptions(), PerUttOptions(...), ...)

* ``utterances``, the per-utterance checks (missing targets, length tolerance, the feature
  transform, dims, target ranges) and the summary, AvgLoss, progress and FRAME_ACCURACY lines
  are train_epoch's. The summary says NOT-RANDOMIZED for truncated BPTT (streams keep the
  data's order) and RANDOMIZED for the per-utterance and CSC sources (they draw or shuffle);
  the source's own counts (padding, chunks, skipped utterances) come just before it.
* Each step: ``Nnet.set_seq_lengths`` with the real frames of every stream,
  ``Nnet.reset_streams`` with the streams that start a new utterance (the LSTM state carried
  from the previous step is kept for the others: truncated BPTT), forward over all T*S rows,
  then the softmax cross-entropy over the masked-in frames only: padding rows (and CSC's
  context frames) are left out of the loss and the accuracy and get a zero derivative
  (Kaldi's frame weights, 0 on padding). The
  update's frame count is the T*S rows, as Kaldi's components count ``input.NumRows()``.
* A step with padding or context frames runs the network's feed-forward tail (the layers after
  the last recurrent one: the output layer and the softmax) on its trained rows only
  (``Nnet.propagate(x, rows=...)``): in CSC-BPTT 21-64+21 that leaves 42 of every 106 frames
  out of the output layer, with the same loss and gradients (zero derivative on the rows left
  out). Steps are not captured as CUDA graphs (the stream lengths and resets change the work
  per step).
* A network with no recurrent component is trained all the same (Kaldi's tool does: the
  streams then change nothing but the order of the frames); the log says so. A <BlstmProjected>
  sees each step's T frames as whole sequences (its backward direction starts at the chunk's
  end); the log says that too (the per-utterance and CSC sources give it whole sequences).
* Not here: Kaldi's --frame-weights/--utt-weights and --objective-function=mse.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from typing import Iterable, Optional, Union

import numpy as np

from nnetmix.log import vlog
from nnetmix.nnet import BlstmProjected, MultistreamComponent, Nnet, NnetTrainOptions
from nnetmix.train.data import Utterance
from nnetmix.train.loop import Hook, MinibatchLoop
from nnetmix.train.options import TrainError, TrainOptions
from nnetmix.train.seqstreams import PerUttOptions
from nnetmix.train.stats import EpochStats
from nnetmix.train.streams import StreamBatch, StreamBatcher, StreamOptions, make_stream_source
from nnetmix.train.trainer import DnnRule, check_xent_network, run_pass

__all__ = ["train_streams_epoch"]

logger = logging.getLogger(__name__)

#: Kaldi's "After N utterances" line comes every this many utterances (VLOG 1)
_UTTS_REPORT = 5000


class _StreamRule(DnnRule):
    """DnnRule whose steps are stream batches: lengths and resets first, padding masked."""

    def __init__(self, nnet: Nnet, opts: TrainOptions, source,
                 update_opts: Optional[NnetTrainOptions], transform: Optional[Nnet],
                 log: logging.Logger):
        rows = int(source.max_rows)
        self.max_sequence = source.max_sequence
        self.too_long = 0  #: utterances longer than the source's max_sequence, skipped
        super().__init__(nnet, dataclasses.replace(opts, randomize=False, minibatch_size=rows),
                         update_opts, transform, log)
        self.graphs = None
        self.t_start = time.perf_counter()
        self.started = 0  #: utterances started in a stream (Kaldi's num_done)

    def prepare(self, item):
        """DnnRule's checks, then the source's longest utterance (Kaldi's --max-frames)."""
        out = super().prepare(item)
        if out is not None and self.max_sequence is not None \
                and int(out[0].shape[0]) > self.max_sequence:
            self.log.warning("%s, %d frames is more than --max-frames=%d, skipped", item[0],
                             int(out[0].shape[0]), self.max_sequence)
            self.stats.num_done -= 1
            self.too_long += 1
            return None
        return out

    def step(self, xh: np.ndarray, batch: StreamBatch) -> None:
        be, nnet = self.be, self.model
        rows, n = int(xh.shape[0]), batch.num_frames
        vlog(self.log, 2, "frame_num_utt[%d] [ %s ]", len(batch.lengths),
             " ".join(str(v) for v in batch.lengths))
        nnet.set_seq_lengths(batch.lengths)
        nnet.reset_streams(batch.resets)
        x = self.xbuf[:rows]
        be.copy(x, np.asarray(xh, dtype=nnet.dtype))
        y = self.ybuf[:n]
        if n == rows:
            logits = nnet.propagate(x, through_softmax=False)
            be.copy(y, batch.targets)
        else:  # the trained rows only: padding and context get a zero derivative
            real = np.flatnonzero(batch.mask)
            logits = nnet.propagate(x, through_softmax=False, rows=real)
            be.copy(y, np.ascontiguousarray(batch.targets[real]))
        be.softmax_xent_rows(logits, y, self.probs[:n], self.grad[:n])
        if self.train:
            nnet.backpropagate(self.grad[:n], input_diff=False)
            nnet.update(self.update_opts, rows)
        if self.stats.minibatches == 0:
            self.show_network()
        self.count(n)
        before, self.started = self.started, self.started + sum(batch.resets)
        self._report_utts(before, self.started)

    def show_network(self) -> None:
        """Kaldi's VLOG[1] view of the network after the first step and after the last: the
        parameters' and (training) the last step's gradients' statistics."""
        if not self.log.isEnabledFor(logging.INFO - 1):
            return
        vlog(self.log, 1, "### After %d frames,", self.stats.frames)
        vlog(self.log, 1, "%s", self.model.info())
        if self.train:
            vlog(self.log, 1, "%s", self.model.info_gradient())

    def _report_utts(self, before: int, done: int) -> None:
        """Kaldi's speed line, every 5000 utterances started."""
        if before // _UTTS_REPORT == done // _UTTS_REPORT:
            return
        el = time.perf_counter() - self.t_start
        frames = self.stats.frames
        vlog(self.log, 1, "After %d utterances, (%gh), time elapsed = %g min; processed %g "
             "frames per sec.", done, frames / 360000.0, el / 60, frames / el if el else 0.0)


def train_streams_epoch(nnet: Nnet, utterances: Iterable[Utterance], opts: TrainOptions,
                        stream_opts: Union[StreamOptions, PerUttOptions],
                        update_opts: Optional[NnetTrainOptions] = None, *,
                        feature_transform: Optional[Nnet] = None,
                        log: Optional[logging.Logger] = None, hook: Optional[Hook] = None,
                        num_minibatches: Optional[int] = None) -> EpochStats:
    """One pass of multi-stream training (``nnet`` updated in place) or, with
    ``opts.cross_validate``, evaluation (``nnet``'s parameters unchanged). ``stream_opts``
    chooses the batch source (:func:`~nnetmix.train.streams.make_stream_source`). Raises
    :class:`TrainError` as train_epoch does. Afterwards the network is back in one-stream mode
    (no seq lengths), ready for nnet-forward. ``hook`` and ``num_minibatches`` (steps) are
    train_epoch's: an MPI rank's mixing and the agreed number of steps."""
    opts.check()
    stream_opts.check()
    log = log or logger
    check_xent_network(nnet, feature_transform)
    if not opts.cross_validate and update_opts is None:
        raise TrainError("train_streams_epoch: training needs update options (NnetTrainOptions)")
    source = make_stream_source(stream_opts, opts, nnet.input_dim)
    recurrent = [c for c in nnet.components if isinstance(c, MultistreamComponent)]
    if not recurrent:
        log.warning("the network has no recurrent component: the streams only change the order "
                    "of its frames (nnet-train-frmshuff.py trains it with shuffled frames)")
    if isinstance(source, StreamBatcher) and any(isinstance(c, BlstmProjected)
                                                 for c in recurrent):
        log.warning("<BlstmProjected> sees each --batch-size=%d chunk as whole sequences: its "
                    "backward direction starts at the chunk's end, not the utterance's "
                    "(nnet-train-multistream-perutt.py trains it on whole utterances or "
                    "context-sensitive chunks)", stream_opts.batch_size)
    rule = _StreamRule(nnet, opts, source, update_opts, feature_transform, log)
    rule.stats.randomized = bool(source.randomized)
    log.info("%s STARTED", "CROSS-VALIDATION" if opts.cross_validate else "TRAINING")
    if source.randomized:
        log.info("Seeding the randomizer with : %d", opts.randomizer_seed)
    loop = MinibatchLoop(rule, source, hook=hook if rule.train else None,
                         limit=num_minibatches)
    st = run_pass(rule, loop, utterances, opts)
    rule.show_network()
    if rule.too_long:
        log.warning("Skipped %d utterances longer than --max-frames=%d", rule.too_long,
                    rule.max_sequence)
    for line in source.summary():
        log.info("%s", line)
    return st
