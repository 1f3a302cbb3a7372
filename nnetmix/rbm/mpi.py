"""CD-1 RBM training over MPI ranks with model mixing: the library behind bin/rbm-train-cd1-mpi.py.

Every rank runs :func:`nnetmix.rbm.train_rbm` on its OWN frame-balanced shard of the data and the
ranks mix the RBM's flat parameters through the trainer's after-minibatch hook, as
:func:`nnetmix.parallel.train_mpi` does for the DNN::

    comm = MPI.COMM_WORLD
    res = train_rbm_mpi(comm, "1.rbm.init", "scp:train.scp", "1.rbm", RbmTrainOptions(),
                        Cd1Options(num_iters=2), RbmRandomizerOptions(),
                        RbmMpiOptions(average_every=10), feature_transform="ft.nnet")

In order (every step a collective; everything works at size 1, where the result is the
single-worker tool's byte for byte):

1. ``check_same`` on every option and argument; the RBM is read on every rank and
   ``check_same_model`` checks that all ranks start from one model.
2. One partition per iteration (Kaldi's tool reopens the reader each iteration):
   :func:`~nnetmix.parallel.partition_utterances` of the frame counts (``--utt2num-frames``, or
   rank 0 reads the features once) with epoch = the iteration and the randomizer seed; the
   digests are checked equal on all ranks. A rank reads only its shard (a temporary scp in the
   original order for ``scp:`` features or ``--shard-scp``; otherwise it skips the others' keys).
3. The ranks agree on the number of minibatches up front: each rank counts the frames the
   trainer will put into its randomizer over all iterations (utterances longer than
   ``--max-frames`` skipped; ``--drop-data`` replayed with the rank's seed, so the count is
   exact), ``// minibatch_size``, and the minimum over ranks is the limit.
4. Training: rank r samples with ``seed + r`` and shuffles with ``randomizer_seed + r``; the
   momentum schedule runs on the global frame count (``frame_count_scale = N``); the parameters
   are mixed every ``--average-every`` minibatches (allreduce | butterfly | ring through a
   :class:`~nnetmix.parallel.Mixer`) and exactly averaged at the end. The CD-1 increment buffer
   (momentum) stays local. The learning rate is NOT multiplied by N unless
   ``--scale-lr-by-workers=true``: averaging N CD-1 steps acts like one step on an N times
   larger minibatch (CD-1 already normalises its update by the minibatch size).
5. The statistics are summed over ranks (one Allreduce of :meth:`RbmStats.as_vector`); the
   ``progress`` blocks (every rank does the same number of equal-size minibatches, so the blocks
   line up) are averaged over ranks. Rank 0 writes the model (atomically, Nnet.write) and prints
   the single-worker tool's lines once.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import tempfile
import time
from typing import Any, Optional

import numpy as np

from nnetmix.parallel.agree import agree_minibatches, check_same, check_same_model
from nnetmix.parallel.buffers import ParallelError
from nnetmix.parallel.failure import Watchdog
from nnetmix.parallel.mixing import Mixer
from nnetmix.parallel.partition import partition_utterances
from nnetmix.parallel.trainer import MixingOptions, table_frames
from nnetmix.rbm.options import Cd1Options, RbmRandomizerOptions, RbmTrainOptions
from nnetmix.rbm.stats import RbmStats

__all__ = ["RbmMpiOptions", "RbmMpiResult", "train_rbm_mpi", "local_frames"]

logger = logging.getLogger(__name__)


def _f(default, help: str):
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass
class RbmMpiOptions(MixingOptions):
    """How the ranks share the RBM training and mix (bin/rbm-train-cd1-mpi.py's own options)."""

    scale_lr_by_workers: bool = _f(False, "Multiply the learning rate by the number of ranks "
                                   "(default false: averaging N CD-1 steps behaves like one "
                                   "step on an N times larger minibatch)")


@dataclasses.dataclass
class RbmMpiResult:
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


def train_rbm_mpi(comm: Any, model_in: str, feats: str, model_out: Optional[str],
                  opts: RbmTrainOptions, cd1_opts: Cd1Options, rnd_opts: RbmRandomizerOptions,
                  mopts: RbmMpiOptions, *, feature_transform: str = "", backend: str = "cpu",
                  binary: bool = False, log: Optional[logging.Logger] = None) -> RbmMpiResult:
    """CD-1 training of the RBM ``model_in`` over the ranks of ``comm``; module docstring."""
    from mpi4py import MPI

    from nnetmix.kernels import get_backend
    from nnetmix.nnet import read_nnet
    from nnetmix.rbm.trainer import read_features, train_rbm

    log = log or logger
    size, rank = comm.Get_size(), comm.Get_rank()
    opts.check()
    cd1_opts.check()
    rnd_opts.check()
    mopts.check()
    check_same(comm, "options", {"rbm": opts, "cd1": cd1_opts, "randomizer": rnd_opts,
                                 "mpi": mopts, "args": [model_in, feats, model_out],
                                 "feature_transform": feature_transform, "backend": backend,
                                 "binary": binary})
    if mopts.mixing == "butterfly" and size & (size - 1):
        raise ParallelError(f"--mixing=butterfly needs a power-of-two number of ranks, got "
                            f"{size} (use --mixing=allreduce or ring)")
    if backend in ("cuda", "auto") and size > 1:
        from nnetmix.kernels import bind_device, cuda_usable
        if backend == "cuda" or cuda_usable(allow_simulator=False)[0]:
            log.info("rank %d: bound to GPU %d", rank, bind_device(comm=comm))
    be = get_backend(backend)
    transform = read_nnet(feature_transform, rbm_to_affine=True).to_backend(be) \
        if feature_transform else None
    nnet = read_nnet(model_in).to_backend(be)
    check_same_model(comm, nnet.params, be)

    # one partition per iteration
    src, keys, lines, frames = table_frames(comm, feats, mopts.shard_scp, mopts.utt2num_frames)
    parts = [partition_utterances(frames, size, it, rnd_opts.randomizer_seed)
             for it in range(1, cd1_opts.num_iters + 1)]
    check_same(comm, "data partitions (sha256)", [p.digest() for p in parts])
    mine = []
    for it, p in enumerate(parts, 1):
        s = set(p.parts[rank])
        mine.append([k for k in keys if k in s])  # the table's order
        log.info("rank %d of %d, iteration %d: %d utterances, %d frames (imbalance %.4f)",
                 rank, size, it, len(mine[-1]), p.frames[rank], p.imbalance)

    my_cd1 = dataclasses.replace(cd1_opts, seed=cd1_opts.seed + rank)
    my_rnd = dataclasses.replace(rnd_opts, randomizer_seed=rnd_opts.randomizer_seed + rank)
    usable = local_frames(mine, frames, my_cd1, my_cd1.seed)
    n_agreed = agree_minibatches(comm, usable // rnd_opts.minibatch_size)
    if n_agreed <= 0:
        raise ParallelError(f"fewer usable frames than one minibatch ({rnd_opts.minibatch_size}) "
                            f"on some rank (rank {rank} has {usable}); use fewer ranks")
    factor = float(size) if mopts.scale_lr_by_workers else 1.0
    my_opts = dataclasses.replace(opts, learn_rate=opts.learn_rate * factor)
    log.info("rank %d: %d minibatches agreed (%d local); learning rate %g (x %g); %s mixing "
             "every %d", rank, n_agreed, usable // rnd_opts.minibatch_size, my_opts.learn_rate,
             factor, mopts.mixing, mopts.average_every)

    every = mopts.average_every
    wd = Watchdog(comm, mopts.watchdog_timeout if size > 1 else 0.0, "no progress (RBM training)")
    mixer = Mixer(comm, mopts.mixing, mopts.allreduce, nnet.params, backend=be)
    mixes = [0]
    t_mix = [0.0]

    def hook(step: int, _nnet) -> None:
        wd.kick()
        if step % every:
            return
        t0 = time.perf_counter()
        mixer.mix(mixes[0])
        mixes[0] += 1
        t_mix[0] += time.perf_counter() - t0

    tmpdir = tempfile.mkdtemp(prefix=f"rbm-train-cd1-mpi.rank{rank}.") if src else None

    def features(it: int):
        shard = mine[it - 1]
        if src:
            path = os.path.join(tmpdir, f"shard.iter{it}.scp")
            with open(path, "w", encoding="utf-8") as fh:
                fh.writelines(lines[k] + "\n" for k in shard)
            return _kicked(read_features(feats.replace(src, path)))
        if size > 1 and it == 1:
            log.warning("rank %d reads the whole feature table and skips the other ranks' "
                        "utterances (use scp: features, or name the utterance scp of the "
                        "pipeline with --shard-scp)", rank)
        return _kicked(read_features(feats, set(shard)))

    def _kicked(gen):
        for u in gen:
            wd.kick()
            yield u

    try:
        with wd:
            st = train_rbm(nnet, features, my_opts, my_cd1, my_rnd, feature_transform=transform,
                           hook=hook, num_minibatches=n_agreed, frame_count_scale=size, log=log)
            t0 = time.perf_counter()
            if size > 1 and (mopts.mixing != "allreduce" or n_agreed % every):
                mixer.exact_average()
            t_mix[0] += time.perf_counter() - t0
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
        mixer.free()
    check_same_model(comm, nnet.params, be, "the final model")
    log.info("rank %d: %s", rank, st.summary_line())
    log.info("rank %d: local reconstruction loss %s (Mse) over %d frames, %d mixes", rank,
             "%g" % st.avg_loss, st.frames, mixes[0])

    # sums over ranks
    total = np.empty_like(st.as_vector())
    comm.Allreduce(st.as_vector(), total, op=MPI.SUM)
    check_same(comm, "number of progress blocks", len(st.progress))
    prog = np.asarray(st.progress, dtype=np.float64)
    prog_sum = np.empty_like(prog)
    comm.Allreduce(prog, prog_sum, op=MPI.SUM)
    tv = np.array([st.time_total, st.time_io, st.time_optimize, st.time_hook, t_mix[0]],
                  dtype=np.float64)
    t_max, t_sum = np.empty_like(tv), np.empty_like(tv)
    comm.Allreduce(tv, t_max, op=MPI.MAX)
    comm.Allreduce(tv, t_sum, op=MPI.SUM)
    glob = dataclasses.replace(st, progress=[float(v) / size for v in prog_sum])
    glob.set_from_vector(total)
    glob.time_total = float(t_max[0])
    glob.time_io, glob.time_optimize, glob.time_hook = (float(v) / size for v in t_sum[1:4])

    if rank == 0 and model_out:
        nnet.write(model_out, binary=binary)
    comm.Barrier()  # the model is on disk before any rank reports success
    return RbmMpiResult(glob, st, size, n_agreed, mixes[0], float(t_sum[4]) / size)
