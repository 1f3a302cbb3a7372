"""One epoch of data-parallel DNN training over MPI: the library behind bin/nnet-train-mpi.py.

Every rank runs :func:`nnetmix.train.train_epoch` on its OWN shard of the data and mixes the
models through the epoch's after-minibatch hook (DESIGN.md "Parallel semantics")::

    comm = MPI.COMM_WORLD
    result = train_mpi(comm, feats, targets, "nnet.in", "nnet.out", TrainOptions(),
                       NnetTrainOptions(learn_rate=0.008), MpiTrainOptions(average_every=10))

What :func:`train_mpi` does, in order (every step a collective; everything works at size 1):

1. ``check_same`` on every option and argument (ranks that differ refuse to start, named);
   the model is read on every rank and ``check_same_model`` checks they are one model.
2. The partition: frame counts from ``--utt2num-frames`` (every rank reads the file) or, without
   it, from the features (rank 0 reads them once and broadcasts the counts); then
   :func:`~nnetmix.parallel.partition.partition_utterances` for ``--epoch`` (seeded by
   ``randomizer_seed``), checked equal on all ranks by its digest. A rank reads ONLY its share:
   for ``scp:`` features (or a pipe whose utterance list is named by ``--shard-scp``) it reads a
   temporary scp with just its utterances, in the order of the original list (so at N = 1 the
   data and its order are exactly what nnet-train-frmshuff reads); otherwise it reads the whole
   table and skips the other ranks' utterances (a warning says so).
3. The targets of the rank's utterances are read up front, so each rank knows exactly how many
   frames it will train on (the trainer's own rules: missing targets and length mismatches are
   dropped, lengths within ``length_tolerance`` truncated), and the ranks agree on the number of
   minibatches (the minimum, :func:`agree_minibatches`), so they reach every mix together.
4. Training: learning rate x N for model averaging (seed 001 section 5.6), x 1 for BMUF, unless
   ``--scale-lr-by-workers`` says otherwise; mixing (allreduce | butterfly | ring through a
   :class:`Mixer`) or a BMUF block sync every ``--average-every`` minibatches; at the end the
   exact average (model averaging) or a final block sync (BMUF; the saved model is W(t)).
   The frame randomizer of rank r is seeded with ``randomizer_seed + r``.
5. Cross-validation (``--cross-validate=true``): each rank evaluates its share, the statistics
   are summed over ranks (:meth:`EpochStats.as_vector` + Allreduce), and rank 0 prints the same
   ``AvgLoss`` / ``FRAME_ACCURACY`` lines as nnet-train-frmshuff, so a scheduler reads them
   unchanged. A rank with fewer frames than one minibatch evaluates in smaller minibatches (the
   minibatch size does not change CV numbers, only which remainder frames are left out).
6. Rank 0 writes the model (atomically) and the BMUF checkpoint (``--bmuf-state``: W, W_g and
   Delta, read back at the start of the next epoch when its W is the model given).

Logs: each rank logs Kaldi-style lines to its own file (``--rank-log`` pattern, or
``<log>.rankR.log`` beside the job log that ``utils/run.py --num-tasks`` names in
``$NNETMIX_TASK_LOG``); rank 0 also writes to stderr, the job log, where the summary goes:
frames per second over all ranks and the seed 002 (table 4) time split optimize / aggregate /
validate. Failures: the bin runs this under :func:`~nnetmix.parallel.failure.run_ranks`, so a
rank that raises ends the job at once, named; a :class:`Watchdog` turns a hang into an abort.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import tempfile
import time
from typing import Any, Callable, Iterator, Mapping, Optional

import numpy as np

from nnetmix.errors import UsageError
from nnetmix.parallel.agree import agree_minibatches, check_same, check_same_model
from nnetmix.parallel.allreduce import ALGORITHMS
from nnetmix.parallel.bmuf import BMUF, BmufOptions
from nnetmix.parallel.buffers import ParallelError
from nnetmix.parallel.failure import Watchdog
from nnetmix.parallel.mixing import STRATEGIES, Mixer
from nnetmix.parallel.partition import Partition, partition_utterances

__all__ = ["MixingOptions", "MpiTrainOptions", "MpiEpochResult", "train_mpi", "setup_rank_logging",
           "frame_counts", "table_frames", "TASK_LOG_ENV"]

logger = logging.getLogger(__name__)

#: set by utils/run.py --num-tasks to the job's log file; ranks log to <stem>.rankR.log beside it
TASK_LOG_ENV = "NNETMIX_TASK_LOG"


def _f(default, help: str):
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass
class MixingOptions:
    """What every MPI trainer shares (nnet-train-mpi.py, rbm-train-cd1-mpi.py): how often and how
    the ranks mix, how the data is cut into shards, where each rank logs, the hang guard."""

    average_every: int = _f(10, "Minibatches between model mixes (BMUF: the block size tau)")
    mixing: str = _f("allreduce", "Model mixing: allreduce (exact average) | butterfly "
                     "(power-of-two ranks) | ring")
    allreduce: str = _f("mpi", "All-reduce algorithm: mpi | ring | ring-async | "
                        "recursive-doubling | tree")
    utt2num_frames: str = _f("", "utt2num_frames of the data (frame counts for the partition; "
                             "without it rank 0 reads the features once to count)")
    shard_scp: str = _f("", "The utterance scp inside a feature pipeline: each rank substitutes "
                        "a copy holding only its utterances (default: the file of scp: "
                        "features)")
    rank_log: str = _f("", "Per-rank log file pattern, %d = rank (default: <job log>.rank%d.log "
                       "when run by utils/run.py --num-tasks)")
    watchdog_timeout: float = _f(1800.0, "Abort the job when a rank makes no progress for this "
                                 "many seconds (a hung peer; 0 = off)")

    def check(self) -> None:
        if self.average_every < 1:
            raise ParallelError(f"--average-every must be >= 1, got {self.average_every}")
        if self.mixing not in STRATEGIES:
            raise ParallelError(f"--mixing={self.mixing}: expected one of {', '.join(STRATEGIES)}")
        if self.allreduce not in ALGORITHMS:
            raise ParallelError(f"--allreduce={self.allreduce}: expected one of "
                                f"{', '.join(ALGORITHMS)}")


@dataclasses.dataclass
class MpiTrainOptions(MixingOptions):
    """How the ranks share the work and mix (bin/nnet-train-mpi.py's own options)."""

    bmuf: bool = _f(False, "Blockwise model-update filtering (seed 002) instead of plain "
                    "model averaging")
    block_momentum: float = _f(-1.0, "BMUF block momentum eta (negative: 1 - 1/N)")
    block_lr: float = _f(1.0, "BMUF block learning rate zeta")
    bmuf_nesterov: bool = _f(True, "BMUF Nesterov block momentum (NBM) rather than classical")
    reset_momentum_after_block: bool = _f(True, "BMUF: zero the local SGD velocity when a "
                                          "block starts")
    scale_lr_by_workers: str = _f("auto", "Multiply the learning rate by the number of ranks: "
                                  "true | false | auto (auto: true for model averaging, false "
                                  "for BMUF)")
    bmuf_state: str = _f("", "BMUF checkpoint (.npz, W, W_g, Delta): read at the start when it "
                         "exists and belongs to <model-in>, written at the end")
    epoch: int = _f(0, "Epoch number: seeds the per-epoch shuffle of the data partition")

    def check(self) -> None:
        super().check()
        if self.bmuf and self.mixing != "allreduce":
            raise ParallelError(f"--bmuf=true with --mixing={self.mixing}: BMUF filters the "
                                "exact average of the local models (use --mixing=allreduce)")
        self.lr_factor(1)

    def lr_factor(self, num_ranks: int) -> float:
        """The learning-rate multiplier: N or 1 (``scale_lr_by_workers`` resolved)."""
        v = str(self.scale_lr_by_workers).strip().lower()
        if v == "auto":
            scale = not self.bmuf
        elif v in ("true", "t", "1"):
            scale = True
        elif v in ("false", "f", "0"):
            scale = False
        else:
            raise ParallelError(f"--scale-lr-by-workers={self.scale_lr_by_workers}: expected "
                                "true, false or auto")
        return float(num_ranks) if scale else 1.0

    def bmuf_options(self) -> BmufOptions:
        return BmufOptions(self.block_momentum, self.block_lr, self.bmuf_nesterov,
                           self.reset_momentum_after_block)


@dataclasses.dataclass
class MpiEpochResult:
    """What one MPI epoch gives back (identical on every rank except ``local``)."""

    stats: Any                  #: EpochStats summed over ranks (time_total = wall, max over ranks)
    local: Any                  #: this rank's own EpochStats
    num_ranks: int
    minibatches: int            #: per rank (agreed); CV: the sum over ranks
    time_optimize: float        #: mean over ranks, seconds
    time_aggregate: float       #: mixing / all-reduce / BMUF, mean over ranks
    time_validate: float        #: CV pass (cross-validation only), mean over ranks
    time_io: float
    wall: float                 #: the slowest rank's wall time of the epoch
    partition: Optional[Partition] = None

    @property
    def frames_per_sec(self) -> float:
        return self.stats.frames / self.wall if self.wall > 0 else 0.0

    def summary(self, opts: "MpiTrainOptions", cross_validate: bool) -> str:
        what = "cross-validation" if cross_validate else (
            f"{'BMUF' if opts.bmuf else opts.mixing + ' mixing'} every {opts.average_every} "
            f"minibatches ({opts.allreduce} all-reduce)")
        return (f"MPI summary: {self.num_ranks} ranks, {what}; {self.stats.frames} frames in "
                f"{self.wall:.2f} s = {self.frames_per_sec:.1f} frames/s over all ranks; time "
                f"split (mean per rank): optimize {self.time_optimize:.2f} s, aggregate "
                f"{self.time_aggregate:.2f} s, validate {self.time_validate:.2f} s, i/o "
                f"{self.time_io:.2f} s")


# -- logging ---------------------------------------------------------------------------------------
def setup_rank_logging(comm: Any, prog: str, verbose: int = 0, pattern: str = "") -> Optional[str]:
    """Each rank logs to its own file (``pattern % rank``, or beside ``$NNETMIX_TASK_LOG``);
    rank 0 keeps stderr (the job log), the other ranks send only warnings and errors there.
    Returns this rank's log file (None without one)."""
    from nnetmix.log import KaldiFormatter

    rank = comm.Get_rank()
    if not pattern and os.environ.get(TASK_LOG_ENV):
        stem = os.environ[TASK_LOG_ENV]
        stem = stem[:-4] if stem.endswith(".log") else stem
        pattern = stem + ".rank%d.log"
    root = logging.getLogger()
    if rank > 0:
        for h in root.handlers:
            h.setLevel(logging.WARNING)
    if not pattern:
        return None
    try:
        path = pattern % rank if "%d" in pattern else f"{pattern}.rank{rank}"
    except (TypeError, ValueError):
        raise UsageError(f"--rank-log={pattern}: expected a pattern with one %d") from None
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    fh = logging.FileHandler(path, mode="w", encoding="utf-8")
    fh.setFormatter(KaldiFormatter(prog))
    fh.setLevel(logging.INFO - max(0, int(verbose)))
    root.addHandler(fh)
    return path


# -- data ------------------------------------------------------------------------------------------
def _scp_lines(path: str) -> tuple[list[str], dict[str, str]]:
    """(keys in file order, key -> whole line) of an scp file."""
    keys, lines = [], {}
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                s = line.strip()
                if not s:
                    continue
                key = s.split(None, 1)[0]
                if key in lines:
                    raise ParallelError(f"{path}:{n}: duplicate key {key}")
                keys.append(key)
                lines[key] = s
    except OSError as e:
        raise ParallelError(f"{path}: cannot read the utterance list ({e.strerror})") from None
    return keys, lines


def _shard_source(feats: str, shard_scp: str) -> str:
    """The scp file whose lines a rank subsets ('' when none can be)."""
    if shard_scp:
        if shard_scp not in feats:
            raise ParallelError(f"--shard-scp={shard_scp} does not occur in the feature "
                                f"rspecifier '{feats}'")
        return shard_scp
    from nnetmix.kaldi.specifier import classify_rxfilename, parse_rspecifier
    spec = parse_rspecifier(feats)
    if spec.type == "scp" and classify_rxfilename(spec.filename).kind == "file":
        return spec.filename
    return ""


def table_frames(comm: Any, feats: str, shard_scp: str, utt2num_frames: str
                 ) -> tuple[str, list[str], dict[str, str], dict[str, int]]:
    """What every MPI trainer partitions: the utterance scp a rank's shard is cut from ("" when
    the rspecifier has none), its keys in table order, its lines, and each utterance's frames."""
    src = _shard_source(feats, shard_scp)
    lines: dict[str, str] = {}
    if src:
        keys, lines = _scp_lines(src)
        frames = frame_counts(comm, feats, utt2num_frames, keys)
    else:
        frames = frame_counts(comm, feats, utt2num_frames)
        keys = sorted(frames)
    return src, keys, lines, frames


def frame_counts(comm: Any, feats: str, utt2num_frames: str = "",
                 keys: Optional[list[str]] = None) -> dict[str, int]:
    """Frames per utterance: from utt2num_frames (restricted to ``keys`` when given, every key
    must be there), else counted by rank 0 reading the features and broadcast."""
    if utt2num_frames:
        from nnetmix.data.io import read_utt2num_frames
        allf = read_utt2num_frames(utt2num_frames)
        if keys is None:
            return dict(allf)
        missing = [k for k in keys if k not in allf]
        if missing:
            raise ParallelError(f"{utt2num_frames}: no frame count for utterance {missing[0]} "
                                f"({len(missing)} missing; is it this data's utt2num_frames?)")
        return {k: int(allf[k]) for k in keys}
    counts = None
    if comm.Get_rank() == 0:
        from nnetmix.kaldi import SequentialReader
        logger.warning("no --utt2num-frames: reading the features once to count frames (pass "
                       "the data dir's utt2num_frames to skip this)")
        counts = {}
        with SequentialReader(feats, "mat") as r:
            for k, m in r:
                counts[k] = int(m.shape[0])
    counts = comm.bcast(counts, root=0)
    if keys is not None:
        counts = {k: counts[k] for k in keys if k in counts}
    return counts


def _read_targets(targets: str, kind: str, keys: list[str]) -> dict[str, np.ndarray]:
    """The int32 targets of ``keys`` (absent keys left out)."""
    from nnetmix.kaldi import RandomAccessReader
    from nnetmix.train.data import TARGET_KINDS, posterior_to_targets
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


def _usable_frames(keys, frames: Mapping[str, int], targets: Mapping[str, np.ndarray],
                   tolerance: int) -> int:
    """Frames the trainer will use (its rules for missing targets and length mismatch)."""
    total = 0
    for k in keys:
        t = targets.get(k)
        if t is None:
            continue
        n_f, n_t = int(frames[k]), int(t.shape[0])
        if n_f == n_t or abs(n_f - n_t) < tolerance:
            total += min(n_f, n_t)
    return total


def _utterances(feats: str, only: Optional[set], targets: Mapping[str, np.ndarray],
                kick: Callable[[], None]) -> Iterator[tuple]:
    from nnetmix.kaldi import SequentialReader
    with SequentialReader(feats, "mat") as r:
        for key, mat in r:
            if only is not None and key not in only:
                continue
            kick()
            yield key, mat, targets.get(key)


# -- the epoch -------------------------------------------------------------------------------------
def _reduce_times(comm: Any, values: list[float]) -> tuple[np.ndarray, np.ndarray]:
    from mpi4py import MPI
    v = np.asarray(values, dtype=np.float64)
    s, m = np.empty_like(v), np.empty_like(v)
    comm.Allreduce(v, s, op=MPI.SUM)
    comm.Allreduce(v, m, op=MPI.MAX)
    return s / comm.Get_size(), m


def train_mpi(comm: Any, feats: str, targets: str, model_in: str, model_out: Optional[str],
              train_opts, update_opts, mopts: MpiTrainOptions, *, feature_transform: str = "",
              backend: str = "cpu", targets_kind: str = "post", binary: bool = True,
              log: Optional[logging.Logger] = None, optim_opts=None, ngsgd_state_in: str = "",
              ngsgd_state_out: str = "") -> MpiEpochResult:
    """One MPI epoch (training, or CV with ``train_opts.cross_validate``); module docstring."""
    from nnetmix.kernels import get_backend
    from nnetmix.nnet import read_nnet
    from nnetmix.train import train_epoch

    log = log or logger
    size, rank = comm.Get_size(), comm.Get_rank()
    cv = bool(train_opts.cross_validate)
    t_start = time.perf_counter()
    train_opts.check()
    mopts.check()
    check_same(comm, "options", {"train": train_opts, "update": update_opts, "mpi": mopts,
                                 "args": [feats, targets, model_in, model_out],
                                 "feature_transform": feature_transform, "backend": backend,
                                 "targets_kind": targets_kind, "binary": binary,
                                 "optimizer": optim_opts})
    if not cv and mopts.mixing == "butterfly" and size & (size - 1):
        raise ParallelError(f"--mixing=butterfly needs a power-of-two number of ranks, got "
                            f"{size} (use --mixing=allreduce or ring)")
    if backend in ("cuda", "auto") and size > 1:
        from nnetmix.kernels import bind_device, cuda_usable
        if backend == "cuda" or cuda_usable(allow_simulator=False)[0]:
            log.info("rank %d: bound to GPU %d", rank, bind_device(comm=comm))
    be = get_backend(backend)
    transform = read_nnet(feature_transform).to_backend(get_backend("cpu")) \
        if feature_transform else None
    nnet = read_nnet(model_in).to_backend(be)
    check_same_model(comm, nnet.params, be)

    # partition
    src, keys, lines, frames = table_frames(comm, feats, mopts.shard_scp, mopts.utt2num_frames)
    part = partition_utterances(frames, size, mopts.epoch, train_opts.randomizer_seed)
    check_same(comm, "data partition (sha256)", part.digest())
    mine_set = set(part.parts[rank])
    mine = [k for k in keys if k in mine_set]  # the table's order
    log.info("rank %d of %d: %d utterances, %d frames (epoch %d partition, imbalance %.4f)",
             rank, size, len(mine), part.frames[rank], mopts.epoch, part.imbalance)
    tgt = _read_targets(targets, targets_kind, mine)
    usable = _usable_frames(mine, frames, tgt, train_opts.length_tolerance)

    tmpdir = None
    only: Optional[set] = None
    if src:
        tmpdir = tempfile.mkdtemp(prefix=f"nnet-train-mpi.rank{rank}.")
        shard = os.path.join(tmpdir, "shard.scp")
        with open(shard, "w", encoding="utf-8") as fh:
            fh.writelines(lines[k] + "\n" for k in mine)
        my_feats = feats.replace(src, shard)
    else:
        my_feats, only = feats, mine_set
        if size > 1:
            log.warning("rank %d reads the whole feature table and skips the other ranks' "
                        "utterances (use scp: features, or name the utterance scp of the "
                        "pipeline with --shard-scp)", rank)

    opts = dataclasses.replace(train_opts, randomizer_seed=train_opts.randomizer_seed + rank)
    upd = None
    n_agreed: Optional[int] = None
    mixer = bmuf = ng = None
    aggregate = [0.0]
    if cv:
        least = agree_minibatches(comm, usable)  # MIN over ranks
        if least <= 0:
            raise ParallelError(f"cross-validation: a rank has no usable frames (rank {rank} "
                                f"has {usable}; fewer ranks for this little data?)")
        if least < opts.minibatch_size:
            opts = dataclasses.replace(opts, minibatch_size=least)
            log.info("rank %d: cross-validating in minibatches of %d frames (the smallest "
                     "shard has fewer than --minibatch-size)", rank, least)
    else:
        n_agreed = agree_minibatches(comm, usable // opts.minibatch_size)
        if n_agreed <= 0:
            raise ParallelError(f"training: fewer usable frames than one minibatch "
                                f"({opts.minibatch_size}) on some rank (rank {rank} has "
                                f"{usable}); use fewer ranks or smaller minibatches")
        factor = mopts.lr_factor(size)
        upd = dataclasses.replace(update_opts, learn_rate=update_opts.learn_rate * factor)
        if optim_opts is not None and optim_opts.optimizer != "sgd":
            # NG-SGD: every rank starts from the same saved estimate and keeps its own during
            # the epoch (as each Kaldi nnet2 job does); rank 0's is saved with the model.
            from nnetmix.train.ngsgd import setup_optimizer, state_path
            ng = setup_optimizer(nnet, optim_opts, ngsgd_state_in or state_path(model_in),
                                 seed=train_opts.randomizer_seed + rank, log=log)
        log.info("rank %d: %d minibatches agreed (%d local); learning rate %g (x %g)%s", rank,
                 n_agreed, usable // opts.minibatch_size, upd.learn_rate, factor,
                 f"; BMUF block momentum {mopts.bmuf_options().eta(size):g}, block learning "
                 f"rate {mopts.block_lr:g}, {'Nesterov' if mopts.bmuf_nesterov else 'classical'}"
                 if mopts.bmuf else f"; {mopts.mixing} mixing every {mopts.average_every}")
        if mopts.bmuf:
            bmuf = BMUF(comm, nnet.params, mopts.bmuf_options(), mopts.allreduce, be,
                        nnet.velocity)
            _load_bmuf_state(comm, bmuf, mopts.bmuf_state, model_in, log)
        else:
            mixer = Mixer(comm, mopts.mixing, mopts.allreduce, nnet.params, backend=be)

    every = mopts.average_every
    wd = Watchdog(comm, mopts.watchdog_timeout if size > 1 else 0.0,
                  "no progress (training or cross-validation)")
    mixes = [0]

    def hook(step: int, _nnet) -> None:
        wd.kick()
        if step % every:
            return
        t0 = time.perf_counter()
        if bmuf is not None:
            bmuf.sync()
        elif mixer is not None:
            mixer.mix(mixes[0])
        mixes[0] += 1
        aggregate[0] += time.perf_counter() - t0

    try:
        with wd:
            st = train_epoch(nnet, _utterances(my_feats, only, tgt, wd.kick), opts, upd,
                             feature_transform=transform, hook=None if cv else hook,
                             num_minibatches=n_agreed, log=log)
            t0 = time.perf_counter()
            if bmuf is not None:
                if n_agreed % every:
                    bmuf.sync()  # the last, partial block
                bmuf.copy_model(nnet.params)  # W(t): validated and saved
            elif mixer is not None and (mopts.mixing != "allreduce" or n_agreed % every):
                mixer.exact_average()
            aggregate[0] += time.perf_counter() - t0
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
    if not cv:
        check_same_model(comm, nnet.params, be, "the final model")
    log.info("rank %d: %s", rank, st.summary_line())
    log.info("rank %d: local loss %s (Xent) over %d frames, frame accuracy %.4f%%, %d mixes",
             rank, "%g" % st.avg_loss, st.frames, st.frame_accuracy, mixes[0])

    # sums over ranks
    from mpi4py import MPI
    total = np.empty_like(st.as_vector())
    comm.Allreduce(st.as_vector(), total, op=MPI.SUM)
    wall = time.perf_counter() - t_start
    mean, mx = _reduce_times(comm, [st.time_optimize, aggregate[0], st.time_total if cv else 0.0,
                                    st.time_io, wall])
    glob = dataclasses.replace(st, progress=list(st.progress))
    glob.set_from_vector(total)
    glob.time_total = float(mx[4])
    glob.time_io = float(mean[3])
    res = MpiEpochResult(glob, st, size, n_agreed if n_agreed is not None else glob.minibatches,
                         float(mean[0]), float(mean[1]), float(mean[2]), float(mean[3]),
                         float(mx[4]), part)

    if rank == 0 and not cv and model_out:
        nnet.write(model_out, binary=binary)
        if ng is not None:
            from nnetmix.train.ngsgd import state_path
            ng.save(ngsgd_state_out or state_path(model_out))
        if bmuf is not None and mopts.bmuf_state:
            bmuf.save(mopts.bmuf_state)
    if bmuf is not None:
        bmuf.free()
    if mixer is not None:
        mixer.free()
    comm.Barrier()  # the model is on disk before any rank reports success
    return res


def _load_bmuf_state(comm: Any, bmuf: BMUF, path: str, model_in: str, log) -> None:
    """Resume the filter from ``path`` when it exists and its W is the model we start from."""
    if not path or not os.path.exists(path):
        if path:
            log.info("BMUF state %s does not exist yet: the filter starts at <model-in> with "
                     "Delta = 0", path)
        return
    from nnetmix.parallel.agree import params_digest
    with np.load(path) as z:
        w_digest = params_digest(np.asarray(z["W"], dtype=bmuf.dtype)) if "W" in z.files else ""
    if w_digest != params_digest(bmuf.params, bmuf.be):
        log.warning("BMUF state %s was saved for another model than %s (its W differs): the "
                    "filter starts afresh (Delta = 0)", path, model_in)
        return
    bmuf.load(path)
    log.info("BMUF state %s resumed (block %d): the ranks start from W_g", path, bmuf.blocks)
