"""One epoch of frame-level cross-entropy training or cross-validation (nnet-train-frmshuff).

:func:`train_epoch` is the loop every trainer shares, single process or one MPI rank::

    stats = train_epoch(nnet, utterances, opts, NnetTrainOptions(learn_rate=0.008),
                        feature_transform=transf, hook=after_minibatch, num_minibatches=n)

* ``utterances``: any iterable of ``(key, feats, targets)`` (targets None = missing), e.g.
  :func:`~nnetmix.train.data.read_utterances` or a rank's shard of it. Read on a background
  thread when ``opts.prefetch`` (default), at most ``opts.prefetch_frames`` frames ahead.
* Each utterance: missing targets are warned about and counted, a length mismatch within
  ``length_tolerance`` frames is truncated (else warned and counted), the feature transform is
  applied (nnet1 runs final.feature_transform on the fly, per utterance, before the shuffling),
  dims and target ranges are checked, and the frames go to the :class:`FrameRandomizer`.
* Each minibatch: forward to the pre-softmax activations, ``Backend.softmax_xent`` (loss and
  correct frames), and in training backpropagate and ``Nnet.update`` (nnet1 semantics: the
  gradient is the SUM over the minibatch; momentum, L2, L1, max-norm, per-layer coefficients).
* Training puts the network in training mode for the epoch (``Nnet.set_training``, seeded
  with ``randomizer_seed``, which is per rank under MPI): only then does a <Dropout> drop.
  Cross-validation runs it in test mode, where Kaldi sets the dropout rate to 0.
* ``hook(step, nnet)`` runs after every update (step = 1, 2, ... in this epoch); MPI mixing every
  n minibatches plugs in there. Its time is reported apart (``time_hook``).
* ``num_minibatches``: stop after exactly this many minibatches (ranks agree on it up front, see
  :func:`~nnetmix.train.randomizer.num_minibatches`); fewer available is an error.
* NaN/Inf: a non-finite minibatch loss, or non-finite parameters (checked every
  ``check_params_every`` minibatches and at the end), raise :class:`TrainError`; callers then do
  not save the model. The losses are read from the backend every ``Backend.xent_defer``
  minibatches (1 on the cpu, 32 on a GPU, so a step never waits for the GPU); the error still
  names the minibatch, though up to that many updates may have run after it.
* On a device backend each minibatch size's step is recorded once (``Backend.capture``, a
  CUDA graph) on its second occurrence and replayed after that: the minibatch is copied into
  fixed input buffers first. With NG-SGD only the minibatches that update no Fisher estimate
  are replayed (``NaturalGradient.capturable``); the others run kernel by kernel.

The network must have a final <Softmax> (it is skipped in the forward pass and folded into the
loss, as nnet1's Xent receives the softmax output and passes the diff straight through).
Velocity (momentum) is whatever the network holds: a network read from a file starts at zero,
as every Kaldi epoch does.
"""
from __future__ import annotations

import logging
import math
import time
from typing import Iterable, Optional

import numpy as np

from nnetmix.log import vlog
from nnetmix.nnet import MultistreamComponent, Nnet, NnetTrainOptions, Softmax
from nnetmix.train.data import Utterance
from nnetmix.train.loop import Hook, MinibatchLoop
from nnetmix.train.options import NoDataError, TrainError, TrainOptions
from nnetmix.train.randomizer import FrameRandomizer
from nnetmix.train.stats import PROGRESS_FRAMES, EpochStats, kaldi_float

__all__ = ["train_epoch", "check_xent_network", "run_pass", "DnnRule", "Hook"]

logger = logging.getLogger(__name__)


#: what a 'nan' loss does: the tool ends, and so does a scheduler running it; no epoch is
#: rejected and tried again (the message once said so)
_STOPS = ("the training stops here and this epoch writes no model (a lower --learn-rate?); the "
          "models of earlier epochs are kept")

class DnnRule:
    """Cross-entropy training (or evaluation) of one network: the loop's update rule."""

    def __init__(self, nnet: Nnet, opts: TrainOptions, update_opts: Optional[NnetTrainOptions],
                 transform: Optional[Nnet], log: logging.Logger):
        self.model = nnet
        self.be = nnet._be()
        self.opts = opts
        self.update_opts = update_opts or NnetTrainOptions()
        self.transform = transform
        self.log = log
        self.train = not opts.cross_validate
        self.stats = EpochStats(cross_validate=opts.cross_validate,
                                randomized=self.train and opts.randomize)
        self.out_dim = nnet.output_dim
        mb = opts.minibatch_size
        self.probs = self.be.empty((mb, self.out_dim), dtype=nnet.dtype)
        self.grad = self.be.empty((mb, self.out_dim), dtype=nnet.dtype)
        # the minibatch's input and targets are copied into these, so a captured step
        # (Backend.capture) finds them where it recorded them
        self.xbuf = self.be.empty((mb, nnet.input_dim), dtype=nnet.dtype)
        self.ybuf = self.be.empty(mb, dtype=np.int32)
        self.prog_frames = 0
        self.prog_loss = 0.0
        #: minibatches whose loss is still with the backend: (token, rows, index, frames before)
        self.pending: list = []
        self.defer = max(1, int(self.be.xent_defer))
        #: captured steps by (rows, update options); None once capturing failed
        self.graphs: Optional[dict] = {} if self._can_capture() else None
        self.warm: set = set()

    def _can_capture(self) -> bool:
        """Replay recorded steps on a device backend; with NG-SGD only the minibatches that
        update no Fisher estimate (the others read statistics back and run eagerly)."""
        pre = self.model.preconditioner
        return self.be.name != "cpu" and (pre is None or hasattr(pre, "capturable"))

    # -- per utterance ----------------------------------------------------------------------
    def prepare(self, item: Utterance):
        """Checks, truncation and the feature transform; None when the utterance is dropped."""
        key, feats, targets = item
        st, opts = self.stats, self.opts
        if targets is None:
            self.log.warning("%s, missing targets", key)
            st.num_no_tgt += 1
            return None
        n_f, n_t = int(feats.shape[0]), int(targets.shape[0])
        if n_f == n_t or abs(n_f - n_t) < opts.length_tolerance:  # else Kaldi drops it
            n = min(n_f, n_t)
            feats, targets = feats[:n], targets[:n]
        else:
            self.log.warning("Length mismatch! Targets %d, features %d, %s", n_t, n_f, key)
            st.num_other_error += 1
            return None
        if n == 0:
            return None
        targets = np.asarray(targets, dtype=np.int32)
        lo, hi = int(targets.min()), int(targets.max())
        if lo < 0 or hi >= self.out_dim:
            bad = lo if lo < 0 else hi
            t = int(np.flatnonzero(targets == bad)[0])
            raise TrainError(f"utterance {key}: target {bad} at frame {t} is outside the "
                             f"network's output layer (dim {self.out_dim}; do the alignments "
                             "belong to this model's pdfs?)")
        x = np.asarray(feats, dtype=np.float32)
        if self.transform is not None:
            if x.shape[1] != self.transform.input_dim:
                raise TrainError(f"utterance {key}: feature dim {x.shape[1]}, the feature "
                                 f"transform's input dim is {self.transform.input_dim}")
            be = self.transform._be()
            x = be.to_host(self.transform.propagate(be.asarray(x, dtype=np.float32)))
        if x.shape[1] != self.model.input_dim:
            what = "after the feature transform " if self.transform is not None else ""
            raise TrainError(f"utterance {key}: feature dim {what}is {x.shape[1]}, the network's "
                             f"input dim is {self.model.input_dim}")
        st.num_done += 1
        return x, targets

    # -- per minibatch ------------------------------------------------------------------------
    def step(self, xh: np.ndarray, yh: np.ndarray) -> None:
        st, be = self.stats, self.be
        n = int(xh.shape[0])
        x, y = self.xbuf[:n], self.ybuf[:n]
        be.copy(x, np.asarray(xh, dtype=self.model.dtype))
        be.copy(y, np.asarray(yh, dtype=np.int32))
        pre = self.model.preconditioner if self.train else None
        graph = None
        if pre is None or pre.capturable(be):
            if pre is not None:
                pre.before_replay(be, self.model.dtype)
            graph, recorded = self._graph(n, x, y)
        if graph is not None:
            graph.replay()
            if pre is not None and not recorded:
                pre.after_replay()  # recording ran the step's host side once already
        else:
            self._compute(x, y, n)
        self.count(n)

    def count(self, n: int) -> None:
        """After a step's softmax_xent_rows over ``n`` frames: queue its loss, count the
        minibatch and its frames, collect and check the parameters when it is time."""
        st = self.stats
        self.pending.append((self.be.xent_stash(n), n, st.minibatches + 1, st.frames))
        st.minibatches += 1
        st.frames += n
        if len(self.pending) >= self.defer:
            self.collect()
        every = self.opts.check_params_every
        if self.train and every > 0 and st.minibatches % every == 0:
            self.check_params()

    def _compute(self, x, y, n: int) -> None:
        """The minibatch's device work: forward, loss rows, and in training backward + update."""
        nnet = self.model
        logits = nnet.propagate(x, through_softmax=False)
        self.be.softmax_xent_rows(logits, y, self.probs, self.grad)
        if self.train:
            nnet.backpropagate(self.grad, input_diff=False)
            nnet.update(self.update_opts, n)

    def _graph(self, n: int, x, y):
        """(the recorded step for these rows and update options, whether it was recorded just
        now): recorded on the second minibatch of its kind (the first runs eagerly, so kernels
        and buffers exist); (None, False) to run eagerly."""
        if self.graphs is None:
            return None, False
        key = (n, tuple(sorted(vars(self.update_opts).items())))
        graph = self.graphs.get(key)
        if graph is not None:
            return graph, False
        if key not in self.warm:
            self.warm.add(key)
            return None, False
        try:
            graph = self.be.capture(lambda: self._compute(x, y, n))
        except Exception as e:  # a step that cannot be recorded still trains, eagerly
            self.log.warning("cannot record the training step as a CUDA graph (%s: %s); "
                             "running it kernel by kernel", type(e).__name__, e)
            self.graphs = None
            return None, False
        self.graphs[key] = graph
        return graph, True

    def collect(self) -> None:
        """Read the waiting minibatches' losses back, in order: the 'nan' check, the epoch's
        sums and the progress lines."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        st = self.stats
        values = self.be.xent_collect([p[0] for p in pending])
        for (loss, correct), (_, n, index, frames) in zip(values, pending):
            if not math.isfinite(loss):
                raise TrainError(f"'nan' or 'inf' loss ({kaldi_float(loss)}) in minibatch "
                                 f"{index} (after {frames} frames): the features or "
                                 f"the network went bad; {_STOPS}")
            st.xent_sum += loss
            st.correct += correct
            self.prog_frames += n
            self.prog_loss += loss
            if self.prog_frames > PROGRESS_FRAMES:
                v = self.prog_loss / self.prog_frames
                vlog(self.log, 1, "ProgressLoss[last %dh of %dh]: %s (Xent)",
                     int(self.prog_frames / 100 / 3600), int((frames + n) / 100 / 3600),
                     kaldi_float(v))
                st.progress.append(v)
                self.prog_frames, self.prog_loss = 0, 0.0

    def check_params(self) -> None:
        self.collect()
        if not self.be.all_finite(self.model.params):
            raise TrainError(f"'nan' or 'inf' in the network parameters after minibatch "
                             f"{self.stats.minibatches}; {_STOPS}")

    def finish(self, loop: MinibatchLoop) -> EpochStats:
        """The end-of-epoch checks: too much dropped, too little data."""
        st, opts = self.stats, self.opts
        self.collect()
        if self.train:
            self.check_params()
        dropped = st.num_no_tgt + st.num_other_error
        if st.num_done == 0:
            raise NoDataError(f"no utterance could be used ({st.num_no_tgt} without targets, "
                             f"{st.num_other_error} with other errors; do the feature and target "
                             "tables have the same keys?)")
        if dropped > opts.max_dropped_fraction * (st.num_done + dropped):
            raise TrainError(f"{dropped} of {st.num_done + dropped} utterances dropped "
                             f"({st.num_no_tgt} without targets, {st.num_other_error} with other "
                             "errors), more than --max-dropped-fraction="
                             f"{opts.max_dropped_fraction}")
        loop.check_done(TrainError, opts.minibatch_size, "trained or evaluated", self.log)
        return st


def check_xent_network(nnet: Nnet, feature_transform: Optional[Nnet]) -> None:
    """What cross-entropy training needs of a network: a final <Softmax>, and an input dim
    that the feature transform's output matches."""
    if not nnet.components or not isinstance(nnet.components[-1], Softmax):
        last = nnet.components[-1].marker if nnet.components else "nothing"
        raise TrainError(f"cross-entropy training needs a network ending in <Softmax>, this one "
                         f"ends in {last}")
    if feature_transform is not None and feature_transform.output_dim != nnet.input_dim:
        raise TrainError(f"the feature transform's output dim is {feature_transform.output_dim}, "
                         f"the network's input dim is {nnet.input_dim}")


def train_epoch(nnet: Nnet, utterances: Iterable[Utterance], opts: TrainOptions,
                update_opts: Optional[NnetTrainOptions] = None, *,
                feature_transform: Optional[Nnet] = None, hook: Optional[Hook] = None,
                num_minibatches: Optional[int] = None,
                log: Optional[logging.Logger] = None) -> EpochStats:
    """One pass over ``utterances``: training (updates ``nnet`` in place) or, with
    ``opts.cross_validate``, evaluation only (``nnet`` unchanged, no shuffling).

    Returns the :class:`EpochStats`; raises :class:`TrainError` for NaN/Inf, bad dims or
    targets, too many dropped utterances, or too little data. See the module docstring for the
    hook and ``num_minibatches`` contracts.
    """
    opts.check()
    log = log or logger
    check_xent_network(nnet, feature_transform)
    recurrent = [c.marker for c in nnet.components if isinstance(c, MultistreamComponent)]
    if recurrent:  # frames in shuffled order are no sequence: the recurrence would be garbage
        tool = "nnet-train-multistream-perutt.py" if "<BlstmProjected>" in recurrent \
            else "nnet-train-multistream.py"
        raise TrainError(f"the network has {recurrent[0]}: frame-shuffled training cannot "
                         "train a recurrent network (it needs whole sequences or chunks: "
                         f"{tool})")
    if not opts.cross_validate and update_opts is None:
        raise TrainError("train_epoch: training needs update options (NnetTrainOptions)")
    rule = DnnRule(nnet, opts, update_opts, feature_transform, log)
    log.info("%s STARTED", "CROSS-VALIDATION" if opts.cross_validate else "TRAINING")
    if rule.stats.randomized:
        log.info("Seeding the frame randomizer with : %d", opts.randomizer_seed)
    loop = MinibatchLoop(rule, FrameRandomizer(opts, randomize=rule.stats.randomized),
                         hook=hook if rule.train else None, limit=num_minibatches)
    return run_pass(rule, loop, utterances, opts)


def run_pass(rule: DnnRule, loop: MinibatchLoop, utterances: Iterable[Utterance],
             opts: TrainOptions) -> EpochStats:
    """The pass itself (train_epoch's and the multistream epoch's), timed, then the
    end-of-epoch checks. <Dropout> drops only in training, its masks seeded from the rank's
    randomizer seed; cross-validation (and everything after the pass) runs the network in test
    mode, and in one-stream mode (no seq lengths, as nnet-forward wants it)."""
    nnet = rule.model
    t_start = time.perf_counter()
    nnet.set_training(rule.train, seed=opts.randomizer_seed)
    try:
        loop.run(utterances, prefetch=opts.prefetch, prefetch_frames=opts.prefetch_frames)
    finally:
        nnet.set_training(False)
        nnet.set_seq_lengths([])
    rule.stats.time_total = time.perf_counter() - t_start
    return rule.finish(loop)
