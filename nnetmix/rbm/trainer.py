"""CD-1 training of one RBM over a feature table, as Kaldi's rbm-train-cd1-frmshuff.

:func:`train_rbm` is the loop a single process and (later) an MPI rank share::

    stats = train_rbm(rbm_nnet, lambda it: read_features("scp:train.scp"), RbmTrainOptions(),
                      Cd1Options(num_iters=2), feature_transform=transf, hook=after_minibatch)

* ``features(iteration)`` returns a fresh iterable of ``(key, matrix)`` for each iteration
  (1-based; Kaldi reopens the reader), e.g. :func:`read_features` or a rank's shard of it. Read
  on a background thread when ``cd1_opts.prefetch``.
* Each utterance: longer than ``max_frames`` is warned about and skipped; the feature transform
  (splice + global CMVN, and for deeper layers the DBN below) runs on it; ``drop_data`` removes
  frames at random; the frames go to the :class:`~nnetmix.train.FrameRandomizer` (minibatch 100,
  buffer 32768, seed 777). ONE randomizer serves all iterations: the < 1 minibatch left at the end
  of an iteration is shuffled into the next, as in Kaldi.
* Each minibatch: one :class:`~nnetmix.rbm.cd1.Cd1` step, the Mse of the reconstruction, then
  the momentum schedule (:class:`~nnetmix.rbm.schedule.MomentumSchedule`) on the running frame
  count times ``frame_count_scale`` (under MPI: the number of ranks, so the ramp follows the
  global frame count), then ``hook(step, nnet)`` (step = 1, 2, ... over the whole run; MPI
  mixing plugs in there; its time is reported apart).
* ``num_minibatches``: stop after exactly this many minibatches in total (ranks agree on it up
  front); fewer available is an error.
* NaN/Inf in the reconstruction or the parameters raise :class:`RbmError`; callers then do not
  save the model.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Iterable, Iterator, Optional

import numpy as np

from nnetmix.feat.pipeline import open_features
from nnetmix.log import vlog
from nnetmix.nnet import Nnet
from nnetmix.rbm.cd1 import Cd1
from nnetmix.rbm.options import (Cd1Options, RbmError, RbmNoDataError, RbmRandomizerOptions,
                                 RbmTrainOptions)
from nnetmix.rbm.schedule import MomentumSchedule
from nnetmix.rbm.stats import RbmStats
from nnetmix.train.loop import Hook, MinibatchLoop
from nnetmix.train.randomizer import FrameRandomizer
from nnetmix.train.stats import kaldi_float

__all__ = ["train_rbm", "read_features", "RbmHook"]

logger = logging.getLogger(__name__)

RbmHook = Hook
Features = Callable[[int], Iterable[tuple[str, np.ndarray]]]


def read_features(rspecifier: str) -> Iterator[tuple[str, np.ndarray]]:
    """(key, matrix) from a feature rspecifier or ``pipeline:`` table, reopened for each
    iteration as Kaldi's tool does (an MPI rank reads its shard through the driver)."""
    with open_features(rspecifier) as reader:
        yield from reader


class _Cd1Rule:
    """CD-1 on one RBM: the minibatch loop's update rule."""
    def __init__(self, nnet: Nnet, opts: RbmTrainOptions, cd1_opts: Cd1Options,
                 transform: Optional[Nnet], frame_count_scale: int, log: logging.Logger):
        self.model, self.opts, self.cd1_opts = nnet, opts, cd1_opts
        self.transform, self.log = transform, log
        self.scale = int(frame_count_scale)
        self.schedule = MomentumSchedule(opts)
        lr, mmt = self.schedule.initial()
        self.cd1 = Cd1(nnet, lr, mmt, opts.l2_penalty, cd1_opts.seed, log)
        self.drop_rng = np.random.Generator(np.random.PCG64([cd1_opts.seed, 1]))
        self.stats = RbmStats(dim=nnet.input_dim, loss_report_frames=cd1_opts.loss_report_frames)
        self.total_frames = 0
        self.t_start = time.perf_counter()

    def prepare(self, item: tuple[str, np.ndarray]):
        key, mat = item
        st, o = self.stats, self.cd1_opts
        if mat.shape[0] > o.max_frames:
            self.log.warning("Skipping %s that has %d frames, it is longer than '--max-frames'%d",
                             key, mat.shape[0], o.max_frames)
            st.num_other_error += 1
            return None
        x = np.asarray(mat, dtype=np.float32)
        if x.ndim != 2 or x.shape[0] == 0:
            return None
        if self.transform is not None:
            if x.shape[1] != self.transform.input_dim:
                raise RbmError(f"utterance {key}: feature dim {x.shape[1]}, the feature "
                               f"transform's input dim is {self.transform.input_dim}")
            be = self.transform._be()
            x = be.to_host(self.transform.propagate(be.asarray(x, dtype=self.transform.dtype)))
            x = np.asarray(x, dtype=np.float32)
        if x.shape[1] != self.model.input_dim:
            what = "after the feature transform " if self.transform is not None else ""
            raise RbmError(f"utterance {key}: feature dim {what}is {x.shape[1]}, the RBM's "
                           f"input dim is {self.model.input_dim}")
        if o.drop_data > 0.0:
            x = x[self.drop_rng.random(x.shape[0]) >= o.drop_data]
            if x.shape[0] == 0:
                return None
        st.num_done += 1
        if st.num_done % 5000 == 0:
            el = time.perf_counter() - self.t_start
            vlog(self.log, 1, "After %d utterances: time elapsed = %s min; processed %s frames "
                 "per sec.", st.num_done, kaldi_float(el / 60),
                 kaldi_float(st.frames / el if el > 0 else 0.0))
        return x, np.zeros(x.shape[0], dtype=np.int32)

    def step(self, xh: np.ndarray, _y: np.ndarray) -> None:
        st = self.stats
        res = self.cd1.step(xh)
        st.guard_events += int(res.guarded)
        st.add(res.mse, res.frames, self.log)
        self.total_frames += res.frames * self.scale
        change = self.schedule.after(self.total_frames)
        if change is not None:
            vlog(self.log, 1, "Setting momentum %s and learning rate %s after processing %s h",
                 kaldi_float(change.momentum), kaldi_float(change.learn_rate),
                 kaldi_float(self.total_frames / 360000))
            self.cd1.set_rates(change.learn_rate, change.momentum)
        every = self.cd1_opts.check_params_every
        if every > 0 and st.minibatches % every == 0:
            self.check_params()

    def check_params(self) -> None:
        if not self.cd1.be.all_finite(self.model.params):
            raise RbmError(f"'nan' or 'inf' in the RBM parameters after minibatch "
                           f"{self.stats.minibatches} (need a lower learning rate?); no model "
                           "is written")

    def finish(self, loop: MinibatchLoop, minibatch_size: int) -> RbmStats:
        st = self.stats
        st.time_total = time.perf_counter() - self.t_start
        self.check_params()
        if st.num_done == 0:
            raise RbmNoDataError(f"no utterance could be used ({st.num_other_error} skipped as "
                                 "longer than --max-frames)")
        loop.check_done(RbmError, minibatch_size, "trained", self.log)
        return st


def train_rbm(nnet: Nnet, features: Features, opts: Optional[RbmTrainOptions] = None,
              cd1_opts: Optional[Cd1Options] = None,
              rnd_opts: Optional[RbmRandomizerOptions] = None, *,
              feature_transform: Optional[Nnet] = None, hook: Optional[RbmHook] = None,
              num_minibatches: Optional[int] = None, frame_count_scale: int = 1,
              log: Optional[logging.Logger] = None) -> RbmStats:
    """Train the single <Rbm> of ``nnet`` (on its backend) by CD-1, in place; see the module
    docstring. Returns the :class:`RbmStats`; raises :class:`RbmError`."""
    opts = opts or RbmTrainOptions()
    cd1_opts = cd1_opts or Cd1Options()
    rnd_opts = rnd_opts or RbmRandomizerOptions()
    opts.check()
    cd1_opts.check()
    rnd_opts.check()
    if frame_count_scale < 1:
        raise RbmError(f"frame_count_scale must be >= 1, got {frame_count_scale}")
    log = log or logger
    if feature_transform is not None and feature_transform.output_dim != nnet.input_dim:
        raise RbmError(f"the feature transform's output dim is {feature_transform.output_dim}, "
                       f"the RBM's input dim is {nnet.input_dim}")
    rule = _Cd1Rule(nnet, opts, cd1_opts, feature_transform, frame_count_scale, log)
    log.info("RBM TRAINING STARTED")
    # ONE randomizer for all iterations: the remainder of one is shuffled into the next
    loop = MinibatchLoop(rule, FrameRandomizer(rnd_opts, randomize=True), hook=hook,
                         limit=num_minibatches)
    for it in range(1, cd1_opts.num_iters + 1):
        rule.stats.iterations = it
        log.info("Iteration %d/%d", it, cd1_opts.num_iters)
        if loop.run(features(it), prefetch=cd1_opts.prefetch, prefetch_frames=32768):
            break
    return rule.finish(loop, rnd_opts.minibatch_size)
