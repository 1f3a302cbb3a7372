"""What one training run needs from its workers, whether one process or N MPI ranks.

:class:`Workers` is the single place where "1 worker" and "N ranks" differ: the DNN epoch
(:mod:`nnetmix.driver.dnn`) and RBM training (:mod:`nnetmix.driver.rbm`) call the same methods
with ``comm=None`` (one worker: no messages, no partition, no mixing) or a communicator::

    w = Workers(comm, log)
    w.check_options(mopts, {"train": opts, ...})        # ranks that differ refuse to start, named
    be = w.backend("cpu")                                # binds one GPU per rank under MPI
    nnet = w.read_model("nnet.init", be)                 # every rank starts from one model
    shards = w.shards(feats, mopts, epochs=[3], seed=777)   # None for one worker
    with w.mixing(nnet, be, mopts, every=10) as hook:     # None for one worker
        train_epoch(..., hook=hook)
    total = w.sum(stats.as_vector())
    w.write(lambda: nnet.write("nnet.out"))              # rank 0 writes; everyone waits for it

The shard of a rank is cut from the table's utterance list (:func:`table_frames`), balanced by
frames (:func:`~nnetmix.parallel.partition_utterances`, one partition per epoch or RBM
iteration, checked equal on all ranks by digest) and read in the table's order, so at N = 1 a
rank reads exactly what one worker reads. A ``pipeline:`` table (the feature chain of
make-feature-pipeline.py) or an ``scp:`` file is opened in process for just the rank's keys
(:func:`~nnetmix.feat.open_features`); any other rspecifier is read whole and the other ranks'
keys skipped.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
from nnetmix.utils.mpi_init import MPI  # MPI_Init under a deadline

from nnetmix.data.io import read_utt2num_frames
from nnetmix.errors import UsageError
from nnetmix.feat.pipeline import open_features, table_keys
from nnetmix.kernels import bind_device, cuda_usable, get_backend
from nnetmix.log import KaldiFormatter
from nnetmix.nnet import Nnet, read_nnet
from nnetmix.parallel.agree import agree_minibatches, check_same, check_same_model
from nnetmix.parallel.bmuf import BMUF
from nnetmix.parallel.buffers import ParallelError, mpi_cuda_aware
from nnetmix.parallel.compress import ErrorFeedback
from nnetmix.parallel.failure import Watchdog, open_rank_status
from nnetmix.utils.rankstatus import status_path
from nnetmix.parallel.mixing import EXACT, Mixer, check_mixing
from nnetmix.parallel.options import MixingOptions
from nnetmix.parallel.overlap import OverlapMixer, overlap_mixer
from nnetmix.parallel.partition import Partition, partition_utterances

__all__ = ["Workers", "Shards", "MixingHook", "setup_rank_logging", "frame_counts",
           "table_frames", "TASK_LOG_ENV"]

logger = logging.getLogger(__name__)

#: set by utils/run.py --num-tasks to the job's log file; ranks log to <stem>.rankR.log beside it
TASK_LOG_ENV = "NNETMIX_TASK_LOG"


# -- logging ---------------------------------------------------------------------------------------
def setup_rank_logging(comm: Any, prog: str, verbose: int = 0, pattern: str = "") -> Optional[str]:
    """Each rank logs to its own file (``pattern % rank``, or beside ``$NNETMIX_TASK_LOG``);
    rank 0 keeps stderr (the job log), the other ranks send only warnings and errors there.
    Beside each rank log goes the rank's record (``x.rank1.log`` -> ``x.rank1.status``,
    :func:`~nnetmix.parallel.failure.open_rank_status`): what names a failed rank, its host and
    its log in the job's first error line. Returns this rank's log file (None without one)."""
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
    def path_of(r: int) -> str:
        try:
            return pattern % r if "%d" in pattern else f"{pattern}.rank{r}"
        except (TypeError, ValueError):
            raise UsageError(f"--rank-log={pattern}: expected a pattern with one %d") from None

    path = path_of(rank)
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    fh = logging.FileHandler(path, mode="w", encoding="utf-8")
    fh.setFormatter(KaldiFormatter(prog))
    fh.setLevel(logging.INFO - max(0, int(verbose)))
    root.addHandler(fh)
    open_rank_status(comm, lambda r: status_path(path_of(r)), path)
    return path


# -- the utterance list and its frames -------------------------------------------------------------
def frame_counts(comm: Any, feats: str, utt2num_frames: str = "",
                 keys: Optional[list[str]] = None) -> dict[str, int]:
    """Frames per utterance: from utt2num_frames (restricted to ``keys`` when given, every key
    must be there), else counted by rank 0 reading the features and broadcast."""
    if utt2num_frames:
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
        logger.warning("no --utt2num-frames: reading the features once to count frames (pass "
                       "the data dir's utt2num_frames to skip this)")
        with open_features(feats) as r:
            counts = {k: int(m.shape[0]) for k, m in r}
    counts = comm.bcast(counts, root=0)
    if keys is not None:
        counts = {k: counts[k] for k in keys if k in counts}
    return counts


def table_frames(comm: Any, feats: str, utt2num_frames: str
                 ) -> tuple[list[str], dict[str, int], bool]:
    """What every MPI trainer partitions: the table's keys (in its order when it is a pipeline
    or an scp file, else sorted), each utterance's frames, and whether the keys were listed
    (then a rank reads only its own utterances)."""
    keys = table_keys(feats)
    frames = frame_counts(comm, feats, utt2num_frames, keys)
    return (keys if keys is not None else sorted(frames)), frames, keys is not None


@dataclasses.dataclass
class Shards:
    """This rank's utterances for each epoch (or RBM iteration), and how to read them."""

    feats: str
    frames: dict[str, int]                  #: frames of every utterance in the table
    mine: list[list[str]]                   #: per partition, this rank's keys in table order
    partitions: list[Partition]

    def read(self, index: int = 0) -> Iterator[tuple[str, np.ndarray]]:
        """(key, matrix) of this rank's utterances of partition ``index`` (0-based), read in
        process (:func:`~nnetmix.feat.open_features`: a ``pipeline:`` or ``scp:`` table reads
        only these keys)."""
        with open_features(self.feats, self.mine[index]) as reader:
            yield from reader


class MixingHook:
    """The after-minibatch hook of a rank: mix (model averaging) or sync a BMUF block every
    ``every`` minibatches, kicking the watchdog on every call; ``finish`` ends the run with
    one model on every rank (the exact average, or BMUF's W after a last partial block; with
    ``feedback``, compressed mixing, a last compressed mix). With ``overlap``
    (``--overlap-mixing``, :mod:`nnetmix.parallel.overlap`) a block's end starts its all-reduce
    and applies the previous one, progressed after every minibatch in between."""

    def __init__(self, params: Any, be: Any, mopts: MixingOptions, comm: Any, wd: Watchdog,
                 bmuf: Optional[BMUF] = None, feedback: Optional[ErrorFeedback] = None,
                 overlap: Optional[OverlapMixer] = None):
        self.every = mopts.average_every
        self.mixing = mopts.mixing
        self.wd = wd
        self.bmuf = bmuf
        self.feedback = feedback
        self.overlap = overlap
        self.mixer = None if bmuf is not None or overlap is not None else Mixer(
            comm, mopts.mixing, mopts.allreduce, params, backend=be, feedback=feedback)
        self.mixes = 0
        self.time = 0.0

    def __call__(self, step: int, _model: Any) -> None:
        self.wd.kick(step=True)
        block_end = step % self.every == 0
        if not block_end and self.overlap is None:
            return
        t0 = time.perf_counter()
        if self.overlap is not None:
            self.overlap.block_end() if block_end else self.overlap.progress()
        elif self.bmuf is not None:
            self.bmuf.sync()
        else:
            self.mixer.mix(self.mixes)
        self.mixes += block_end
        self.time += time.perf_counter() - t0

    def finish(self, steps: int, params: Any, average: bool = True) -> None:
        """``average=False`` (``--epoch-average=false``, plain mixing): no end-of-epoch average,
        each rank keeps its own model."""
        t0 = time.perf_counter()
        if self.overlap is not None:
            self.overlap.finish(partial=bool(steps % self.every))
            if self.bmuf is not None:
                self.bmuf.copy_model(params)  # W(t): validated and saved
        elif self.bmuf is not None:
            if steps % self.every:
                self.bmuf.sync()  # the last, partial block
            self.bmuf.copy_model(params)  # W(t): validated and saved
        elif self.feedback is not None:
            if steps % self.every:
                self.mixer.mix(self.mixes)  # compressed too: the residual carries on
        elif average and (self.mixing not in EXACT or steps % self.every):
            self.mixer.exact_average()
        self.time += time.perf_counter() - t0

    def free(self) -> None:
        """Frees the mixer (a BMUF filter belongs to the caller, who may still save it)."""
        if self.mixer is not None:
            self.mixer.free()
        if self.overlap is not None:
            self.overlap.free()


class Workers:
    """One worker (``comm=None``) or the ranks of ``comm``; see the module docstring."""

    def __init__(self, comm: Any, log: logging.Logger):
        self.comm = comm
        self.log = log
        self.size = 1 if comm is None else comm.Get_size()
        self.rank = 0 if comm is None else comm.Get_rank()

    @property
    def parallel(self) -> bool:
        return self.comm is not None

    def check_same(self, what: str, value: Any) -> None:
        if self.comm is not None:
            check_same(self.comm, what, value)

    def check_options(self, mopts: Optional[MixingOptions], values: dict, mixes: bool) -> None:
        """Checked options, the same on every rank; butterfly needs a power-of-two size."""
        if mopts is not None:
            mopts.check()
        self.check_same("options", {**values, "mpi": mopts})
        if mixes and mopts is not None:
            check_mixing(mopts.mixing, mopts.allreduce, self.size)

    def backend(self, name: str) -> Any:
        """The compute backend; under MPI each rank takes its own GPU."""
        if name in ("cuda", "auto") and self.size > 1:
            if name == "cuda" or cuda_usable(allow_simulator=False)[0]:
                self.log.info("rank %d: bound to GPU %d", self.rank, bind_device(comm=self.comm))
                if self.rank == 0:
                    how = ("CUDA-aware: the ranks mix device buffers directly"
                           if mpi_cuda_aware(self.comm) else
                           "not CUDA-aware: mixing stages the parameters through pinned host "
                           "buffers (NNETMIX_MPI_CUDA_AWARE=1 overrides the detection)")
                    self.log.info("MPI is %s", how)
        return get_backend(name)

    def read_model(self, path: str, be: Any, **kw) -> Nnet:
        nnet = read_nnet(path, **kw).to_backend(be)
        self.check_model(nnet, be)
        return nnet

    def check_model(self, nnet: Nnet, be: Any, what: str = "the initial model") -> None:
        if self.comm is not None:
            check_same_model(self.comm, nnet.params, be, what)

    def shards(self, feats: str, mopts: MixingOptions, epochs: Sequence[int], seed: int,
               what: str = "epoch %d partition") -> Optional[Shards]:
        """This rank's share of the table for each of ``epochs`` (None for one worker)."""
        if self.comm is None:
            return None
        if mopts.shard_scp:
            self.log.warning("--shard-scp=%s is no longer used: ranks read their shard of "
                             "pipeline: or scp: features in process (make-feature-pipeline.py)",
                             mopts.shard_scp)
        keys, frames, listed = table_frames(self.comm, feats, mopts.utt2num_frames)
        parts = [partition_utterances(frames, self.size, e, seed) for e in epochs]
        self.check_same("data partition (sha256)" if len(parts) == 1
                        else "data partitions (sha256)",
                        parts[0].digest() if len(parts) == 1 else [p.digest() for p in parts])
        mine = []
        for e, p in zip(epochs, parts):
            s = set(p.parts[self.rank])
            mine.append([k for k in keys if k in s])  # the table's order
            self.log.info("rank %d of %d: %d utterances, %d frames (%s, imbalance %.4f)",
                          self.rank, self.size, len(mine[-1]), p.frames[self.rank], what % e,
                          p.imbalance)
        if not listed and self.size > 1:
            self.log.warning("rank %d reads the whole feature table and skips the other ranks' "
                             "utterances (use pipeline: or scp: features to read only a shard)",
                             self.rank)
        return Shards(feats, frames, mine, parts)

    def agree_min(self, value: int) -> int:
        """The smallest ``value`` over the ranks (the minibatches every rank can do)."""
        return value if self.comm is None else agree_minibatches(self.comm, value)

    def watchdog(self, timeout: float, what: str) -> Watchdog:
        """The hang guard of this rank (off for one worker: there is no peer to wait for)."""
        return Watchdog(self.comm, timeout if self.size > 1 else 0.0, what)

    @contextlib.contextmanager
    def mixing(self, params: Any, be: Any, mopts: Optional[MixingOptions], wd: Watchdog,
               bmuf: Optional[BMUF] = None, feedback: Optional[ErrorFeedback] = None,
               overlap: bool = False) -> Iterator[Optional[MixingHook]]:
        """The mixing hook of this rank (None for one worker); freed at the end. ``overlap``:
        ``--overlap-mixing`` (a no-op at one rank, logged)."""
        if self.comm is None or mopts is None:
            yield None
            return
        hook = MixingHook(params, be, mopts, self.comm, wd, bmuf, feedback,
                          overlap_mixer(self.comm, params, be, overlap, bmuf, self.log))
        try:
            yield hook
        finally:
            hook.free()

    def sum(self, v: np.ndarray) -> np.ndarray:
        """Element-wise sum over the ranks of a float64 vector."""
        if self.comm is None:
            return v
        out = np.empty_like(v)
        self.comm.Allreduce(v, out, op=MPI.SUM)
        return out

    def mean_max(self, values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """(mean, max) over the ranks of each value."""
        v = np.asarray(values, dtype=np.float64)
        if self.comm is None:
            return v, v
        s, m = np.empty_like(v), np.empty_like(v)
        self.comm.Allreduce(v, s, op=MPI.SUM)
        self.comm.Allreduce(v, m, op=MPI.MAX)
        return s / self.size, m

    def write(self, write: Callable[[], None]) -> None:
        """Rank 0 writes; no rank returns before the files are on disk."""
        if self.rank == 0:
            write()
        if self.comm is not None:
            self.comm.Barrier()
