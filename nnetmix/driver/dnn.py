"""One epoch of DNN cross-entropy training (or one CV pass), on one worker or N MPI ranks.

The library behind bin/nnet-train-frmshuff.py (``comm=None``), bin/nnet-train-mpi.py (a
communicator) and the in-process epochs of :mod:`nnetmix.driver.scheduler`; the epoch is one
:class:`~nnetmix.driver.spec.EpochSpec` (how it trains) and its
:class:`~nnetmix.driver.spec.EpochFiles` (what it reads and writes)::

    spec = EpochSpec(TrainOptions(), NnetTrainOptions(learn_rate=0.008),
                     mixing=MpiTrainOptions(average_every=10))
    res = dnn_epoch(MPI.COMM_WORLD, spec,
                    EpochFiles("scp:feats.scp", "ark:post.ark", "nnet.in", "nnet.out"))

Both run the one minibatch loop: :func:`nnetmix.train.train_epoch` on shuffled frames or, for a
recurrent network given ``spec.streams`` (nnet-train-mpi.py's stream options; the
single-worker nnet-train-multistream*.py tools run here too, :mod:`nnetmix.driver.multistream`),
multi-stream steps (:mod:`nnetmix.driver.batches`, where a minibatch below is one step and what
happens to each rank's LSTM state at a mix is said). What N ranks add, in order (every step a
collective; docs/parallel.md "Semantics"):

1. ``check_same`` on every option and argument; every rank reads the model and checks that all
   start from one model.
2. The partition of ``--epoch`` (:meth:`Workers.shards`); a rank reads only its shard.
3. The targets of the rank's utterances are read up front, so each rank knows exactly how many
   frames it will train on (the trainer's rules: missing targets and length mismatches dropped,
   lengths within ``length_tolerance`` truncated) and the ranks agree on the number of
   minibatches (the minimum; for streams, the steps its stream source takes over those
   lengths), so they reach every mix together.
4. Training: learning rate x N for model averaging (seed 001 section 5.6), x 1 for BMUF, unless
   ``--scale-lr-by-workers`` says otherwise; mixing or a BMUF block sync every
   ``--average-every`` minibatches (:class:`~nnetmix.driver.ranks.MixingHook`); at the end one
   model. The frame randomizer and NG-SGD of rank r are seeded with ``randomizer_seed + r``;
   every rank starts NG-SGD from the same saved estimate and keeps its own during the epoch (as
   each Kaldi nnet2 job does); rank 0's is saved with the model.
5. Cross-validation: each rank evaluates its share and the statistics are summed, so the
   ``AvgLoss`` / ``FRAME_ACCURACY`` lines are over all the data. A rank with fewer frames than one
   minibatch evaluates in smaller minibatches.
6. Rank 0 writes the model (atomically), the NG-SGD state and the BMUF checkpoint
   (``--bmuf-state``: W, W_g and Delta, resumed at the start of the next epoch when its W is the
   model given), and the result file (:func:`write_result`), which a scheduler reads instead of
   the log. With ``--mix-compression`` (:mod:`nnetmix.parallel.compress`) every rank's
   error-feedback residual is gathered and written with them, ``<model-out>.mix.npz``, and read
   back from ``<model-in>.mix.npz`` by the next epoch (refused when it belongs to another model,
   compression or number of ranks; with ``--resume-workers=any`` a state of another number of
   ranks, the residuals as the BMUF and NG-SGD states, is remapped instead:
   :mod:`nnetmix.parallel.elastic`). Without that file the residuals start at zero (the first
   epoch, or a model of an uncompressed run), except when the BMUF state is resumed: that
   checkpoint continues a run, whose residuals must be there too, so their absence is an
   error before anything is trained or written. At one rank there is nothing to mix and the
   option is a no-op. With ``--overlap-mixing`` each block's all-reduce runs during the next
   block and is applied one block late (:mod:`nnetmix.parallel.overlap`). With
   ``--epoch-average=false`` the ranks skip the end-of-epoch average: rank 0's model is
   validated and saved, every rank's is gathered and written beside it,
   ``<model-out>.ranks.npz``, and each rank of the next epoch starts from its own row of
   ``<model-in>.ranks.npz`` (:mod:`nnetmix.parallel.rank_models`).
"""
from __future__ import annotations

import dataclasses
import logging
import os
import time
from typing import Any, Iterator, Mapping, Optional

import numpy as np

from nnetmix.kaldi import RandomAccessReader
from nnetmix.kaldi.codec import text_round_trip
from nnetmix.kernels import get_backend
from nnetmix.nnet import NnetTrainOptions, read_nnet
from nnetmix.outfile import write_together
from nnetmix.parallel.agree import params_digest
from nnetmix.parallel.bmuf import BMUF, read_bmuf_state
from nnetmix.parallel.buffers import ParallelError
from nnetmix.parallel.compress import (MIX_STATE_SUFFIX, ErrorFeedback, read_mix_state,
                                       write_mix_state)
from nnetmix.parallel.elastic import ElasticResume
from nnetmix.parallel.options import MpiTrainOptions
from nnetmix.parallel.rank_models import (RANK_MODELS_SUFFIX, gather_rank_models,
                                          take_rank_model, write_rank_models)
from nnetmix.driver.batches import describe_step, epoch_streams, stream_steps, train_pass
from nnetmix.driver.ranks import Workers
from nnetmix.driver.spec import EpochFiles, EpochSpec
from nnetmix.train.loop import Hook
from nnetmix.train.data import TARGET_KINDS, posterior_to_targets, read_utterances
from nnetmix.train.ngsgd import setup_optimizer, state_path
from nnetmix.train.options import NoDataError, TrainError
from nnetmix.train.stats import EpochStats
from nnetmix.utils.state import read_json, write_json

__all__ = ["EpochResult", "dnn_epoch", "write_result", "read_result"]

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class EpochResult:
    """What one epoch gives back (identical on every rank except ``local``)."""

    stats: EpochStats           #: summed over ranks (time_total = wall, max over ranks)
    local: EpochStats           #: this rank's own
    num_ranks: int
    minibatches: int            #: per rank (agreed); CV: the sum over ranks
    time_optimize: float        #: mean over ranks, seconds
    time_aggregate: float       #: mixing / all-reduce / BMUF, mean over ranks
    time_validate: float        #: CV pass (cross-validation only), mean over ranks
    time_io: float
    wall: float                 #: the slowest rank's wall time of the epoch
    ngsgd_limited: int = 0      #: this rank's NG-SGD layer updates that max-change limited
    ngsgd_updates: int = 0      #: this rank's NG-SGD layer updates (minibatches x affine layers)

    def max_change_note(self) -> str:
        """'N of M layer updates limited by --max-change-per-sample' (this rank's), as the
        NG-SGD line logs it and nnetmix.train.runlog reads it back."""
        return (f"{self.ngsgd_limited} of {self.ngsgd_updates} layer updates limited by "
                f"--max-change-per-sample")

    @property
    def frames_per_sec(self) -> float:
        return self.stats.frames / self.wall if self.wall > 0 else 0.0

    def summary(self, opts: MpiTrainOptions, cross_validate: bool) -> str:
        what = "cross-validation" if cross_validate else (
            f"{'BMUF' if opts.bmuf else opts.mixing + ' mixing'}"
            f"{' (hierarchical averages)' if opts.bmuf and opts.mixing == 'hierarchical' else ''}"
            f" every {opts.average_every} "
            f"minibatches ({opts.allreduce} all-reduce"
            + (f", {opts.mix_compression} updates" if opts.mix_compression != "none" else "")
            + (", overlapped" if opts.overlap_mixing and self.num_ranks > 1 else "") + ")")
        return (f"MPI summary: {self.num_ranks} ranks, {what}; {self.stats.frames} frames in "
                f"{self.wall:.2f} s = {self.frames_per_sec:.1f} frames/s over all ranks; time "
                f"split (mean per rank): optimize {self.time_optimize:.2f} s, aggregate "
                f"{self.time_aggregate:.2f} s, validate {self.time_validate:.2f} s, i/o "
                f"{self.time_io:.2f} s")


# -- the result file -------------------------------------------------------------------------------
def write_result(path: str, res: EpochResult) -> None:
    """The epoch's numbers as JSON (atomically): what a scheduler reads instead of the log."""
    st = res.stats
    d = {"cross_validate": st.cross_validate, "avg_loss": st.avg_loss,
         "frame_accuracy": st.frame_accuracy, "frames": st.frames, "minibatches": res.minibatches,
         "num_done": st.num_done, "num_no_tgt": st.num_no_tgt,
         "num_other_error": st.num_other_error, "num_ranks": res.num_ranks, "wall": res.wall,
         "time_optimize": res.time_optimize, "time_aggregate": res.time_aggregate,
         "time_io": res.time_io}
    write_json(path, d)


#: what a scheduler reads from a result file (the file holds more, for people)
_RESULT_FIELDS = {"cross_validate": bool, "avg_loss": float, "frame_accuracy": float,
                  "frames": int, "num_done": int, "minibatches": int}


def read_result(path: str) -> EpochStats:
    """The statistics of a result file, as far as a scheduler needs them (loss, accuracy)."""
    if not os.path.exists(path):
        raise TrainError(f"{path}: no result file (the training tool did not finish)")
    d = read_json(path, "result file of nnet-train-*.py", _RESULT_FIELDS)
    st = EpochStats(cross_validate=d["cross_validate"])
    st.frames = d["frames"]
    st.xent_sum = float(d["avg_loss"]) * st.frames
    st.correct = int(round(float(d["frame_accuracy"]) * st.frames / 100.0))
    st.num_done = d["num_done"]
    st.minibatches = d["minibatches"]
    return st


# -- data ------------------------------------------------------------------------------------------
def _read_targets(targets: str, kind: str, keys: list[str]) -> dict[str, np.ndarray]:
    """The int32 targets of ``keys`` (absent keys left out)."""
    if kind not in TARGET_KINDS:
        raise ParallelError(f"targets kind '{kind}': expected one of {', '.join(TARGET_KINDS)}")
    out = {}
    with RandomAccessReader(targets, "post" if kind == "post" else "ivec") as r:
        for k in keys:
            if k in r:
                v = r[k]
                out[k] = (posterior_to_targets(v, k, targets) if kind == "post"
                          else np.asarray(v, dtype=np.int32))
    return out


def _usable_lengths(keys, frames: Mapping[str, int], targets: Mapping[str, np.ndarray],
                    tolerance: int) -> list[int]:
    """Frames the trainer will use of each utterance, in the order of ``keys`` (its rules for
    missing targets and length mismatch; 0 for a dropped utterance)."""
    out = []
    for k in keys:
        t = targets.get(k)
        n_f, n_t = int(frames[k]), (-1 if t is None else int(t.shape[0]))
        ok = t is not None and (n_f == n_t or abs(n_f - n_t) < tolerance)
        out.append(min(n_f, n_t) if ok else 0)
    return out


def _with_targets(feats: Iterator, targets: Mapping[str, np.ndarray], kick) -> Iterator[tuple]:
    for key, mat in feats:
        kick()
        yield key, mat, targets.get(key)


def _beside(model: str, suffix: str = "") -> str:
    """A state file beside a model file: NG-SGD's, or ``model + suffix`` ('' for pipes and
    stdout)."""
    if model == "-" or "|" in model:
        return ""
    return model + suffix if suffix else state_path(model)


def _written_digest(nnet, be, binary: bool) -> str:
    """The digest of ``nnet``'s parameters as the next epoch reads them from the model file: a
    text model (--binary=false) holds them at precision 7 (a binary one exactly)."""
    if binary:
        return params_digest(nnet.params, be)
    return params_digest(text_round_trip(be.to_host(nnet.params)))


def _load_bmuf_state(bmuf: BMUF, path: str, model_in: str, log,
                     resume: ElasticResume, block_momentum: float) -> bool:
    """Resume the filter from ``path`` when it exists and its W is the model we start from
    (written by another number of ranks: as ``resume`` says); True when it was resumed."""
    if not path or not os.path.exists(path):
        if path:
            log.info("BMUF state %s does not exist yet: the filter starts at <model-in> with "
                     "Delta = 0", path)
        return False
    state = read_bmuf_state(path)
    w_saved = np.asarray(state["W"], dtype=bmuf.dtype)
    model = params_digest(bmuf.params, bmuf.be)
    if params_digest(w_saved) != model and params_digest(text_round_trip(w_saved)) != model:
        log.warning("BMUF state %s was saved for another model than %s (its W differs): the "
                    "filter starts afresh (Delta = 0)", path, model_in)
        return False
    resume.bmuf_state(state, path, bmuf.eta, bmuf.zeta, block_momentum)
    bmuf.load_state_dict(state, path)
    log.info("BMUF state %s resumed (block %d): the ranks start from W_g", path, bmuf.blocks)
    return True


def _load_mix_state(fb: ErrorFeedback, path: str, model_digest: str, bmuf_state: str,
                    log, resume: ElasticResume) -> None:
    """The residuals saved beside <model-in> (module docstring, 6); ``bmuf_state``: the BMUF
    checkpoint that was resumed ('' when none was)."""
    if path and os.path.exists(path):
        fb.load_state_dict(resume.mix_state(read_mix_state(path), path), path, model_digest)
        log.info("mixing state %s resumed: rank %d's residual RMS %g", path, fb.rank,
                 float(np.sqrt(np.mean(np.square(fb.residual, dtype=np.float64)))))
        return
    if bmuf_state:
        raise ParallelError(f"{path or '<model-in>.mix.npz'}: no mixing state, but "
                            f"--mix-compression={fb.compression} resumes the BMUF state "
                            f"{bmuf_state}, whose run's residuals belong there (copy the model "
                            "with its .mix.npz, or remove the BMUF state to start afresh)")
    log.info("no mixing state %s: --mix-compression=%s starts with zero residuals",
             path or "(model from a pipe)", fb.compression)


# -- the epoch -------------------------------------------------------------------------------------
def dnn_epoch(comm: Any, spec: EpochSpec, files: EpochFiles, *,
              log: Optional[logging.Logger] = None, hook: Optional[Hook] = None) -> EpochResult:
    """One epoch (training, or CV with ``spec.train.cross_validate``) on one worker
    (``comm=None``) or the ranks of ``comm``; see the module docstring. ``hook``: one worker
    only, the caller's after-minibatch hook (N ranks have theirs: the mixing).
    ``spec.streams``: a recurrent network is trained in multi-stream steps of these
    (:mod:`nnetmix.driver.batches`); without them it is refused, as nnet-train-frmshuff.py
    refuses it; ``spec.streams_always``: a feed-forward network too is trained in these steps
    (the multistream tools, :func:`~nnetmix.driver.multistream.multistream_epoch`)."""
    log = log or logger
    w = Workers(comm, log)
    mopts = spec.mixing
    if w.parallel and mopts is None:
        mopts = MpiTrainOptions()
    train_opts, update_opts, optim_opts = spec.train, spec.update, spec.optimizer
    cv = bool(train_opts.cross_validate)
    t_start = time.perf_counter()
    spec.check()
    w.check_options(mopts, {"spec": spec, "files": files}, mixes=not cv)
    be = w.backend(spec.backend)
    transform = read_nnet(spec.feature_transform).to_backend(get_backend("cpu")) \
        if spec.feature_transform else None
    nnet = w.read_model(files.model_in, be)
    model_digest = params_digest(nnet.params, be)
    streams = epoch_streams(nnet, spec.streams, spec.streams_always)
    if streams is not None and not cv and optim_opts.optimizer != "sgd":
        raise TrainError(f"--optimizer={optim_opts.optimizer} is for feed-forward networks: "
                         "a recurrent network trains with --optimizer=sgd")

    opts = dataclasses.replace(train_opts, randomizer_seed=train_opts.randomizer_seed + w.rank)
    upd = None if cv else update_opts
    n_agreed: Optional[int] = None
    shards = None
    if w.parallel:
        shards = w.shards(files.feats, mopts, [mopts.epoch], train_opts.randomizer_seed)
        mine = shards.mine[0]
        tgt = _read_targets(files.targets, spec.targets_kind, mine)
        lengths = _usable_lengths(mine, shards.frames, tgt, train_opts.length_tolerance)
        usable = sum(lengths)
        if cv:
            least = w.agree_min(usable)
            if least <= 0:
                raise ParallelError(f"cross-validation: a rank has no usable frames (rank "
                                    f"{w.rank} has {usable}; fewer ranks for this little data?)")
            if least < opts.minibatch_size and streams is None:
                opts = dataclasses.replace(opts, minibatch_size=least)
                log.info("rank %d: cross-validating in minibatches of %d frames (the smallest "
                         "shard has fewer than --minibatch-size)", w.rank, least)
        else:
            local = (usable // opts.minibatch_size if streams is None
                     else stream_steps(lengths, streams, opts, nnet.input_dim))
            n_agreed = w.agree_min(local)
            if n_agreed <= 0:
                least = (f"one minibatch ({opts.minibatch_size})" if streams is None
                         else "one frame")
                raise ParallelError(f"training: fewer usable frames than {least} on some rank "
                                    f"(rank {w.rank} has {usable}); use fewer ranks or smaller "
                                    "minibatches")
            if streams is not None:
                state = ("at a mix each rank keeps its streams' LSTM state"
                         if hasattr(streams, "batch_size") else "no state crosses a step")
                log.info("rank %d: a minibatch is one multi-stream step (%s); %s", w.rank,
                         describe_step(streams), state)
            factor = mopts.lr_factor(w.size)
            upd = dataclasses.replace(update_opts, learn_rate=update_opts.learn_rate * factor)
            log.info("rank %d: %d minibatches agreed (%d local); learning rate %g (x %g)%s",
                     w.rank, n_agreed, local, upd.learn_rate, factor,
                     f"; BMUF block momentum {mopts.bmuf_options().eta(w.size):g}, block "
                     f"learning rate {mopts.block_lr:g}, "
                     f"{'Nesterov' if mopts.bmuf_nesterov else 'classical'}"
                     if mopts.bmuf else f"; {mopts.mixing} mixing every {mopts.average_every}")
    ng = None
    # a checkpoint written by another number of ranks: refused or remapped (--resume-workers)
    resume = ElasticResume(mopts.resume_workers, w.size, log) if w.parallel and not cv else None
    if not cv:
        ng_in = files.ngsgd_state_in or _beside(files.model_in)
        if resume is not None and optim_opts.optimizer != "sgd":
            resume.ngsgd_file(ng_in)
        ng = setup_optimizer(nnet, optim_opts, ng_in, seed=opts.randomizer_seed, log=log)
        if ng is not None and w.parallel:
            ng.num_ranks = w.size  # recorded in the saved state
    fb = None
    if w.parallel and not cv and mopts.mix_compression != "none":
        if w.size > 1:
            fb = ErrorFeedback(comm, mopts.mix_compression, int(nnet.params.shape[0]),
                               mopts.mix_compression_topk_fraction, be)
        else:
            log.info("one rank: nothing to mix, --mix-compression=%s does nothing",
                     mopts.mix_compression)
    bmuf = None
    resumed = False
    if w.parallel and not cv and mopts.bmuf:
        bmuf = BMUF(comm, nnet.params, mopts.bmuf_options(), mopts.allreduce, be, nnet.velocity,
                    feedback=fb, mixing=mopts.mixing)
        resumed = _load_bmuf_state(bmuf, mopts.bmuf_state, files.model_in, log, resume,
                                   mopts.block_momentum)
    if fb is not None:
        _load_mix_state(fb, _beside(files.model_in, MIX_STATE_SUFFIX), model_digest,
                        mopts.bmuf_state if resumed else "", log, resume)
    own_models = w.parallel and not cv and not mopts.epoch_average
    if own_models:  # seed 000's way: each rank goes on from its own model of the last epoch
        take_rank_model(_beside(files.model_in, RANK_MODELS_SUFFIX), nnet, w.rank, w.size,
                        model_digest, log, resume)
    if resume is not None:
        resume.report(mopts.lr_factor, mopts.epoch)

    # the watchdog runs to the end: a rank that hangs while rank 0 writes is caught too
    wd = w.watchdog(mopts.watchdog_timeout if mopts is not None else 0.0,
                    "no progress (training or cross-validation)").start()
    with w.mixing(nnet.params, be, None if cv else mopts, wd, bmuf, fb,
                  overlap=mopts is not None and mopts.overlap_mixing) as mix:
        if shards is None:
            utts = read_utterances(files.feats, files.targets, spec.targets_kind)
        else:
            utts = _with_targets(shards.read(0), tgt, wd.kick)
        try:
            st = train_pass(nnet, utts, opts, upd, streams=streams, feature_transform=transform,
                            hook=mix if w.parallel else hook, limit=n_agreed, log=log)
        except NoDataError as e:  # empty tables, or no key in both: name them
            raise NoDataError(f"{files.feats}, {files.targets}: {e}") from None
        if mix is not None:
            mix.finish(n_agreed, nnet.params, average=not own_models)
        t_aggregate = mix.time if mix is not None else 0.0
        mixes = mix.mixes if mix is not None else 0
    wd.kick()
    if not cv and not own_models:
        w.check_model(nnet, be, "the final model")
    if w.parallel:
        log.info("rank %d: %s", w.rank, st.summary_line())
        log.info("rank %d: local loss %s (Xent) over %d frames, frame accuracy %.4f%%, %d mixes",
                 w.rank, "%g" % st.avg_loss, st.frames, st.frame_accuracy, mixes)
    mix_state, mix_out = None, ""
    if fb is not None:
        log.info("rank %d: --mix-compression=%s: %d compressed mixes of %d payload bytes (float32: "
                 "%d), %d bytes sent; residual RMS %g", w.rank, fb.compression, fb.mixes,
                 fb.payload_bytes, 4 * fb.count, fb.bytes_sent,
                 float(np.sqrt(np.mean(np.square(fb.residual, dtype=np.float64)))))
        mix_out = _beside(files.model_out, MIX_STATE_SUFFIX) if files.model_out else ""
        if mix_out:  # every rank's residual
            mix_state = fb.state_dict(_written_digest(nnet, be, spec.binary))

    ranks_state, ranks_out = None, ""
    if own_models and files.model_out:
        ranks_out = _beside(files.model_out, RANK_MODELS_SUFFIX)
        ranks_state = gather_rank_models(comm, nnet, _written_digest(nnet, be, spec.binary))

    total = w.sum(st.as_vector())
    wall = time.perf_counter() - t_start
    mean, mx = w.mean_max([st.time_optimize, t_aggregate, st.time_total if cv else 0.0,
                           st.time_io, wall])
    glob = dataclasses.replace(st, progress=list(st.progress))
    glob.set_from_vector(total)
    if w.parallel:
        glob.time_total = float(mx[4])
        glob.time_io = float(mean[3])
    minibatches = n_agreed if n_agreed is not None else glob.minibatches
    res = EpochResult(glob, st, w.size, minibatches,
                      float(mean[0]), float(mean[1]), float(mean[2]), float(mean[3]),
                      float(mx[4]), ng.num_limited if ng is not None else 0,
                      minibatches * len(ng.layers) if ng is not None and not cv else 0)

    def write() -> None:
        if not cv and files.model_out:
            # the model and its state files are committed together or not at all, the model
            # last: a model on disk implies its state (a later epoch never starts afresh)
            outputs = []
            out = (files.ngsgd_state_out or _beside(files.model_out)) if ng is not None else ""
            if out:
                outputs.append((out, ng.save))
            if bmuf is not None and mopts.bmuf_state:
                outputs.append((mopts.bmuf_state, bmuf.save))
            if mix_state is not None:
                outputs.append((mix_out, lambda path: write_mix_state(path, mix_state)))
            if ranks_state is not None and ranks_out:
                outputs.append((ranks_out, lambda path: write_rank_models(path, ranks_state)))
            outputs.append((files.model_out, lambda path: nnet.write(path, binary=spec.binary)))
            write_together(outputs)
            if ng is not None:
                log.info("NG-SGD state written to %s (%s)", out or "nowhere",
                         res.max_change_note())
        if files.result_file:
            write_result(files.result_file, res)

    w.write(write)  # the model is on disk before any rank reports success
    wd.stop()
    if bmuf is not None:
        bmuf.free()
    if fb is not None:
        fb.free()
    return res
