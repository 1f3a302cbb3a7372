"""What RBM training reports: Kaldi's Mse loss (nnet-loss.cc) on the reconstruction, counts and
the time split.

Report lines as rbm-train-cd1-frmshuff prints them (numbers as a C++ ostream does)::

    Done 2 iterations, 1800 files, skipped 0 files. [0.41 min, processing 11723.5 frames per sec.]
    AvgLoss: 12.34 (Mse), [RMS 0.53, frames 123456]
    progress: [14.1 12.9 ]

``AvgLoss`` is 0.5 * sum of squared reconstruction errors per frame; RMS is
sqrt(AvgLoss / dim). ``progress`` holds the loss of every block of ``loss_report_frames`` frames
(steps/nnet/pretrain_dbn.sh greps these lines into its final report).
"""
from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np

from nnetmix.train.stats import kaldi_float

__all__ = ["RbmStats"]


@dataclasses.dataclass
class RbmStats:
    """Statistics of one RBM training run (all iterations)."""

    dim: int = 0                 #: visible dim (for the RMS)
    loss_report_frames: int = 5 * 3600 * 100
    iterations: int = 0
    num_done: int = 0            #: utterances put into the randomizer
    num_other_error: int = 0     #: utterances skipped (too long)
    frames: int = 0              #: frames in minibatches
    minibatches: int = 0
    mse_sum: float = 0.0
    guard_events: int = 0        #: minibatches where the weight-explosion guard fired
    time_total: float = 0.0
    time_io: float = 0.0         #: reading, feature transform, randomizer
    time_optimize: float = 0.0   #: the CD-1 steps
    time_hook: float = 0.0       #: inside the after-minibatch hook (MPI mixing)
    progress: list = dataclasses.field(default_factory=list)
    _prog_frames: int = 0
    _prog_loss: float = 0.0

    _ADDITIVE = ("num_done", "num_other_error", "frames", "minibatches", "mse_sum",
                 "guard_events")

    def add(self, mse: float, frames: int, log: logging.Logger) -> None:
        self.mse_sum += mse
        self.frames += frames
        self.minibatches += 1
        if self.loss_report_frames > 0:
            self._prog_frames += frames
            self._prog_loss += mse
            if self._prog_frames > self.loss_report_frames:
                v = self._prog_loss / self._prog_frames
                log.info("ProgressLoss[last %dh of %dh]: %s (Mse)",
                         int(self._prog_frames / 100 / 3600), int(self.frames / 100 / 3600),
                         kaldi_float(v))
                self.progress.append(v)
                self._prog_frames, self._prog_loss = 0, 0.0

    def as_vector(self) -> np.ndarray:
        """The additive fields as float64 (sum them over MPI ranks with one all-reduce)."""
        return np.array([float(getattr(self, k)) for k in self._ADDITIVE], dtype=np.float64)

    def set_from_vector(self, v: np.ndarray) -> None:
        """Set the additive fields from a (summed) :meth:`as_vector`."""
        for k, x in zip(self._ADDITIVE, np.asarray(v, dtype=np.float64)):
            setattr(self, k, type(getattr(self, k))(x))

    @property
    def avg_loss(self) -> float:
        return self.mse_sum / self.frames if self.frames else float("nan")

    @property
    def rms(self) -> float:
        return math.sqrt(self.avg_loss / self.dim) if self.frames and self.dim else float("nan")

    @property
    def fps(self) -> float:
        return self.frames / self.time_total if self.time_total > 0 else 0.0

    def summary_line(self) -> str:
        return (f"Done {self.iterations} iterations, {self.num_done} files, skipped "
                f"{self.num_other_error} files. [{kaldi_float(self.time_total / 60)} min, "
                f"processing {kaldi_float(self.fps)} frames per sec.]")

    def report(self) -> str:
        prog = "".join("%s " % kaldi_float(v) for v in self.progress)
        return (f"AvgLoss: {kaldi_float(self.avg_loss)} (Mse), [RMS {kaldi_float(self.rms)}, "
                f"frames {kaldi_float(self.frames)}]\nprogress: [{prog}]")

    def time_split(self) -> str:
        t = self.time_total or 1.0
        return (f"Time: total {self.time_total:.2f}s, i/o {100 * self.time_io / t:.1f}%, "
                f"optimize {100 * self.time_optimize / t:.1f}%, "
                f"hook {100 * self.time_hook / t:.1f}%"
                f"; weight-explosion guard fired {self.guard_events} times")
