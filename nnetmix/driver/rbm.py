"""CD-1 training of one RBM on one worker or N MPI ranks with model mixing.

The library behind bin/rbm-train-cd1-frmshuff.py (``comm=None``) and bin/rbm-train-cd1-mpi.py::

    res = rbm_train(MPI.COMM_WORLD, "1.rbm.init", "scp:train.scp", "1.rbm", RbmTrainOptions(),
                    Cd1Options(num_iters=2), RbmRandomizerOptions(),
                    RbmMpiOptions(average_every=10), feature_transform="ft.nnet")

Both run :func:`nnetmix.rbm.train_rbm` (the one minibatch loop with the CD-1 update rule); what
N ranks add (the shared steps are :class:`~nnetmix.driver.ranks.Workers`'):

1. One partition per iteration (Kaldi's tool reopens the reader each iteration), with epoch =
   the iteration; a rank reads only its shard.
2. The ranks agree on the number of minibatches up front: each rank counts the frames the
   trainer will put into its randomizer over all iterations (utterances longer than
   ``--max-frames`` skipped; ``--drop-data`` replayed with the rank's seed, so the count is
   exact), ``// minibatch_size``, and the minimum over ranks is the limit.
3. Rank r samples with ``seed + r`` and shuffles with ``randomizer_seed + r``; the momentum
   schedule runs on the global frame count (``frame_count_scale = N``); the parameters are mixed
   every ``--average-every`` minibatches and exactly averaged at the end. The CD-1 increment
   buffer (momentum) stays local. The learning rate is NOT multiplied by N unless
   ``--scale-lr-by-workers=true``: averaging N CD-1 steps acts like one step on an N times
   larger minibatch (CD-1 already normalises its update by the minibatch size).
4. The statistics are summed over ranks; the ``progress`` blocks (every rank does the same
   number of equal-size minibatches, so the blocks line up) are averaged. Rank 0 writes the
   model. At N = 1 the model is the single worker's, byte for byte.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any, Optional

import numpy as np

from nnetmix.driver.ranks import Workers
from nnetmix.options import option
from nnetmix.parallel.buffers import ParallelError
from nnetmix.parallel.options import MixingOptions
from nnetmix.rbm.options import Cd1Options, RbmNoDataError, RbmRandomizerOptions, RbmTrainOptions
from nnetmix.rbm.stats import RbmStats
from nnetmix.rbm.trainer import read_features, train_rbm
from nnetmix.nnet import read_nnet

__all__ = ["RbmMpiOptions", "RbmResult", "rbm_train", "local_frames"]

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class RbmMpiOptions(MixingOptions):
    """How the ranks share the RBM training and mix (bin/rbm-train-cd1-mpi.py's own options)."""

    scale_lr_by_workers: bool = option(False, "Multiply the learning rate by the number of ranks "
                                       "(default false: averaging N CD-1 steps behaves like one "
                                       "step on an N times larger minibatch)")


@dataclasses.dataclass
class RbmResult:
    stats: RbmStats          #: summed over ranks (rank 0 prints it)
    local: RbmStats          #: this rank's
    num_ranks: int
    minibatches: int         #: agreed per rank
    mixes: int
    time_mix: float          #: mean over ranks, seconds


def local_frames(keys_per_iter: list[list[str]], frames: dict[str, int], cd1_opts: Cd1Options,
                 seed: int) -> int:
    """Frames the trainer will put into the randomizer over all iterations (its rules: too
    long or empty utterances skipped, --drop-data replayed with the generator it uses)."""
    rng = np.random.Generator(np.random.PCG64([seed, 1])) if cd1_opts.drop_data > 0 else None
    total = 0
    for keys in keys_per_iter:
        for k in keys:
            n = int(frames[k])
            if n <= 0 or n > cd1_opts.max_frames:
                continue
            if rng is not None:
                n = int(np.count_nonzero(rng.random(n) >= cd1_opts.drop_data))
            total += n
    return total


def rbm_train(comm: Any, model_in: str, feats: str, model_out: Optional[str],
              opts: RbmTrainOptions, cd1_opts: Cd1Options, rnd_opts: RbmRandomizerOptions,
              mopts: Optional[RbmMpiOptions] = None, *, feature_transform: str = "",
              backend: str = "cpu", binary: bool = False,
              log: Optional[logging.Logger] = None) -> RbmResult:
    """CD-1 training of the RBM ``model_in`` on one worker (``comm=None``) or the ranks of
    ``comm``; see the module docstring."""
    log = log or logger
    w = Workers(comm, log)
    if w.parallel and mopts is None:
        mopts = RbmMpiOptions()
    opts.check()
    cd1_opts.check()
    rnd_opts.check()
    w.check_options(mopts, {"rbm": opts, "cd1": cd1_opts, "randomizer": rnd_opts,
                            "args": [model_in, feats, model_out],
                            "feature_transform": feature_transform, "backend": backend,
                            "binary": binary}, mixes=True)
    be = w.backend(backend)
    transform = read_nnet(feature_transform, rbm_to_affine=True).to_backend(be) \
        if feature_transform else None
    nnet = w.read_model(model_in, be)

    my_cd1 = dataclasses.replace(cd1_opts, seed=cd1_opts.seed + w.rank)
    my_rnd = dataclasses.replace(rnd_opts, randomizer_seed=rnd_opts.randomizer_seed + w.rank)
    my_opts, n_agreed = opts, None
    shards = w.shards(feats, mopts, list(range(1, cd1_opts.num_iters + 1)),
                      rnd_opts.randomizer_seed, what="iteration %d") if w.parallel else None
    if shards is not None:
        usable = local_frames(shards.mine, shards.frames, my_cd1, my_cd1.seed)
        n_agreed = w.agree_min(usable // rnd_opts.minibatch_size)
        if n_agreed <= 0:
            raise ParallelError(f"fewer usable frames than one minibatch "
                                f"({rnd_opts.minibatch_size}) on some rank (rank {w.rank} has "
                                f"{usable}); use fewer ranks")
        factor = float(w.size) if mopts.scale_lr_by_workers else 1.0
        my_opts = dataclasses.replace(opts, learn_rate=opts.learn_rate * factor)
        log.info("rank %d: %d minibatches agreed (%d local); learning rate %g (x %g); %s mixing "
                 "every %d", w.rank, n_agreed, usable // rnd_opts.minibatch_size,
                 my_opts.learn_rate, factor, mopts.mixing, mopts.average_every)

    wd = w.watchdog(mopts.watchdog_timeout if mopts is not None else 0.0,
                    "no progress (RBM training)")

    def features(it: int):
        if shards is None:
            return read_features(feats)
        return _kicked(shards.read(it - 1), wd.kick)

    with wd, w.mixing(nnet.params, be, mopts, wd) as hook:
        try:
            st = train_rbm(nnet, features, my_opts, my_cd1, my_rnd, feature_transform=transform,
                           hook=hook, num_minibatches=n_agreed, frame_count_scale=w.size,
                           log=log)
        except RbmNoDataError as e:  # an empty table: name it
            raise RbmNoDataError(f"{feats}: {e}") from None
        if hook is not None and w.size > 1:
            hook.finish(n_agreed, nnet.params)
        mixes, t_mix = (hook.mixes, hook.time) if hook is not None else (0, 0.0)
    w.check_model(nnet, be, "the final model")

    glob = st
    if w.parallel:
        log.info("rank %d: %s", w.rank, st.summary_line())
        log.info("rank %d: local reconstruction loss %s (Mse) over %d frames, %d mixes", w.rank,
                 "%g" % st.avg_loss, st.frames, mixes)
        total = w.sum(st.as_vector())
        w.check_same("number of progress blocks", len(st.progress))
        prog_sum = w.sum(np.asarray(st.progress, dtype=np.float64))
        mean, mx = w.mean_max([st.time_total, st.time_io, st.time_optimize, st.time_hook, t_mix])
        glob = dataclasses.replace(st, progress=[float(v) / w.size for v in prog_sum])
        glob.set_from_vector(total)
        glob.time_total = float(mx[0])
        glob.time_io, glob.time_optimize, glob.time_hook = (float(v) for v in mean[1:4])
        t_mix = float(mean[4])

    if model_out:
        w.write(lambda: nnet.write(model_out, binary=binary))
    return RbmResult(glob, st, w.size, n_agreed if n_agreed is not None else st.minibatches,
                     mixes, t_mix)


def _kicked(gen, kick):
    for u in gen:
        kick()
        yield u
