# Copyright 2026 nnetmix authors. Apache 2.0.
"""What a finished DNN training directory left on disk, as numbers: the one reader of
steps/nnet/train.sh's and decode.sh's logs, used by egs/digits/s5/local/summarize_dnn.py and
bench/experiments (issue 9's tables).

Reads, in ``<dnn-dir>`` (steps/nnet/train.sh + steps/nnet/decode.sh, digits run.sh stages 8-9):
``log/train_scheduler.log`` and the logs of the runs it resumed (the PRERUN and ITERATION lines:
epochs, CV loss and frame accuracy of the model kept), ``log/iterNN.tr.log`` and
``log/iterNN.{cv,initial}.log`` (the MPI trainer's ``MPI summary`` line: frames, wall, optimize /
aggregate / validate / i/o seconds; the ``minibatches agreed``, ``mixes`` and NG-SGD's ``layer
updates limited`` lines), ``decode_test/wer_*`` (the best ``%WER`` line), and what the older
digits driver added: ``stages67_seconds`` and ``loadavg``.
A directory that is missing or unfinished reads as ``None`` (the table shows it as not run).
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Optional

__all__ = ["RunResult", "EpochTiming", "read_run", "read_schedule", "read_timings",
           "ResultError"]

PRERUN = re.compile(r"CROSSVAL PRERUN AVG\.LOSS ([\d.]+) \(Xent\), FRAME_ACCURACY ([\d.]+)%")
ITER = re.compile(r"ITERATION (\d+): TRAIN AVG\.LOSS ([\d.]+), \(lrate([\d.e+-]+)\), CROSSVAL "
                  r"AVG\.LOSS ([\d.]+), FRAME_ACCURACY tr ([\d.]+)% cv ([\d.]+)%, nnet "
                  r"(accepted|rejected|kept)")
SUMMARY = re.compile(r"MPI summary: (\d+) ranks, [^;]*; (\d+) frames in ([\d.]+) s = [\d.]+ "
                     r"frames/s over all ranks; time split \(mean per rank\): optimize ([\d.]+) s,"
                     r" aggregate ([\d.]+) s, validate ([\d.]+) s, i/o ([\d.]+) s")
AGREED = re.compile(r"rank 0: (\d+) minibatches agreed")
MIXES = re.compile(r"rank 0: local loss .* (\d+) mixes")
#: rank 0's NG-SGD max-change count (the older line has no "of N")
LIMITED = re.compile(r"\((\d+)(?: of (\d+))? layer updates limited by --max-change-per-sample\)")
WER = re.compile(r"%WER ([\d.]+) \[ (\d+) / (\d+)")


class ResultError(Exception):
    """A run directory whose files do not read as expected."""


def read_schedule(log_dir: Path) -> tuple[Optional[re.Match], list[tuple]]:
    """The PRERUN match (None when there is none) and the ITERATION lines' fields (:data:`ITER`'s
    groups), one per epoch in epoch order, from ``log_dir/train_scheduler.log`` and the logs of
    the runs it resumed (``train_scheduler.log.N``, kept by steps/nnet/train.sh): a later log's
    line of an epoch replaces an earlier one's, so a run resumed before the scheduler logged the
    finished epochs again reads whole too."""
    logs = sorted(Path(log_dir).glob("train_scheduler.log.[0-9]*"),
                  key=lambda p: int(p.suffix[1:]) if p.suffix[1:].isdigit() else 0)
    pre, iters = None, {}
    for log in logs + [Path(log_dir) / "train_scheduler.log"]:
        if not log.exists():
            continue
        text = log.read_text(errors="replace")
        pre = PRERUN.search(text) or pre
        iters.update((int(it[0]), it) for it in ITER.findall(text))
    return pre, [iters[k] for k in sorted(iters)]


@dataclasses.dataclass
class EpochTiming:
    """One MPI job's summary line (a training epoch, or a cross-validation pass)."""

    ranks: int
    frames: int
    wall: float
    optimize: float
    aggregate: float
    validate: float
    io: float
    minibatches: int = 0     #: per rank (training epochs)
    mixes: int = 0           #: rank 0's mixes (training epochs)
    #: rank 0's NG-SGD layer updates scaled down by --max-change-per-sample, and all its NG-SGD
    #: layer updates (training epochs with NG-SGD; None where the log does not say)
    limited: Optional[int] = None
    layer_updates: Optional[int] = None


@dataclasses.dataclass
class RunResult:
    """One finished run, summed over its epochs."""

    path: Path
    workers: int
    epochs: int                 #: training epochs run (rejected ones included)
    rejected: int
    cv_loss: float              #: of the model kept (PRERUN when no epoch was kept)
    cv_acc: float               #: CV frame accuracy, %, of the model kept
    wer: Optional[float]        #: best %WER over the LM-weight / penalty sweep
    wer_errors: Optional[int]
    wer_words: Optional[int]
    train: list                 #: EpochTiming per training epoch
    cv: list                    #: EpochTiming per CV pass after an epoch
    seconds: Optional[int]      #: wall seconds of the DNN stages (digits 8-9; the driver's clock)
    load: str = ""              #: load average before -> after, as the driver saw it
    wer_file: str = ""          #: the best wer_* file's name (wer_<LMWT>_<WIP>)

    @property
    def train_frames(self) -> int:
        return sum(t.frames for t in self.train)

    @property
    def train_wall(self) -> float:
        return sum(t.wall for t in self.train)

    @property
    def fps(self) -> Optional[float]:
        """Training frames per second over all ranks (whole epochs, launch excluded)."""
        w = self.train_wall
        return self.train_frames / w if w > 0 else None

    def split_per_epoch(self) -> dict:
        """Seed 002 Table 4's split, mean per rank and per epoch: optimize, aggregate (training
        jobs), validate (CV jobs' evaluation), i/o (both), seconds."""
        n = max(1, len(self.train))
        return {"optimize": sum(t.optimize for t in self.train) / n,
                "aggregate": sum(t.aggregate for t in self.train) / n,
                "validate": sum(t.validate for t in self.cv) / n,
                "io": (sum(t.io for t in self.train) + sum(t.io for t in self.cv)) / n}

    @property
    def ms_per_minibatch(self) -> Optional[float]:
        """Local time per minibatch on one rank: (wall - aggregate) / minibatches, ms."""
        mbs = sum(t.minibatches for t in self.train)
        if not mbs:
            return None
        return 1e3 * sum(t.wall - t.aggregate for t in self.train) / mbs

    @property
    def mixes(self) -> int:
        return sum(t.mixes for t in self.train)


def _summary(path: Path) -> Optional[EpochTiming]:
    text = path.read_text(errors="replace")
    m = SUMMARY.search(text)
    if not m:
        return None
    t = EpochTiming(int(m.group(1)), int(m.group(2)), *(float(m.group(i)) for i in range(3, 8)))
    a = AGREED.search(text)
    x = MIXES.search(text)
    t.minibatches = int(a.group(1)) if a else 0
    t.mixes = int(x.group(1)) if x else 0
    lim = LIMITED.search(text)
    if lim:
        t.limited = int(lim.group(1))
        t.layer_updates = int(lim.group(2)) if lim.group(2) else None
    return t


def read_timings(log_dir: Path) -> tuple[list, list]:
    """(training epochs, CV passes after them) from the per-epoch job logs, in epoch order. The
    CV pass of the initial model (iter00.initial.log) is not part of any epoch and is left out."""
    train, cv = [], []
    for f in sorted(log_dir.glob("iter[0-9][0-9].*.log")):
        kind = f.name.split(".")[1]
        if ".rank" in f.name or kind not in ("tr", "cv"):
            continue
        t = _summary(f)
        if t is not None:
            (train if kind == "tr" else cv).append(t)
    return train, cv


def best_wer(decode_dir: Path) -> Optional[tuple]:
    """(wer, errors, words, file name) of the best wer_* file, None when there is none."""
    best = None
    for f in sorted(decode_dir.glob("wer_*")):
        m = WER.search(f.read_text(errors="replace"))
        if m and (best is None or float(m.group(1)) < best[0]):
            best = (float(m.group(1)), int(m.group(2)), int(m.group(3)), f.name)
    return best


def read_run(path: Path) -> Optional[RunResult]:
    """The run in ``path``; None when it has not finished (no ``.done`` marker or no
    ``final.nnet``)."""
    path = Path(path)
    if not (path / ".done").exists() and not (path / "final.nnet").exists():
        return None
    log = path / "log" / "train_scheduler.log"
    if not log.exists():
        return None
    pre, iters = read_schedule(log.parent)
    if pre is None:
        raise ResultError(f"{log}: no CROSSVAL PRERUN line (not a train.sh log?)")
    kept = [it for it in iters if it[6] in ("accepted", "kept")]
    cv_loss, cv_acc = ((float(kept[-1][3]), float(kept[-1][5])) if kept
                       else (float(pre.group(1)), float(pre.group(2))))
    train, cv = read_timings(path / "log")
    wer = best_wer(path / "decode_test")
    secs = path / "stages67_seconds"
    load = path / "loadavg"
    return RunResult(
        path=path, workers=train[0].ranks if train else 1, epochs=len(iters),
        rejected=sum(1 for it in iters if it[6] == "rejected"), cv_loss=cv_loss, cv_acc=cv_acc,
        wer=wer[0] if wer else None, wer_errors=wer[1] if wer else None,
        wer_words=wer[2] if wer else None, train=train, cv=cv,
        seconds=int(secs.read_text().split()[0]) if secs.exists() else None,
        load=load.read_text().strip() if load.exists() else "", wer_file=wer[3] if wer else "")
