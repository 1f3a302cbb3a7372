"""What an epoch reports: counts, the cross-entropy, frame accuracy and the time split.

The report lines are those of nnet-train-frmshuff (src/nnetbin/nnet-train-frmshuff.cc) and
Xent::Report (src/nnet/nnet-loss.cc), numbers printed as a C++ ostream does (6 significant
digits), so logs read and grep the same as Kaldi's::

    Done 1800 files, 2 with no tgt_mats, 0 with other errors. [TRAINING, RANDOMIZED, 0.41 min, processing 11723.5 frames per sec; i/o time 7.2%]
    AvgLoss: 1.0234 (Xent), [AvgXent: 1.0234, AvgTargetEnt: 0]
    progress: [1.31 1.02 ]
    FRAME_ACCURACY >> 68.3412% <<

``AvgLoss`` is (cross-entropy - target entropy) / frames; the entropy of one-hot targets is 0.
The "i/o time" share (not in Kaldi's line) is the time the trainer waited for data (reading,
feature transform, filling the randomizer) over the whole epoch.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

__all__ = ["EpochStats", "PROGRESS_FRAMES", "kaldi_float"]

PROGRESS_FRAMES = 3600 * 100  #: Xent's progress_step: a ProgressLoss line every hour of frames


def kaldi_float(x: float) -> str:
    """A double as ``std::ostream <<`` prints it by default (like %g, 6 significant digits)."""
    x = float(x)
    if x != x:
        return "nan" if not np.signbit(x) else "-nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return "%g" % x


@dataclasses.dataclass
class EpochStats:
    """Statistics of one pass over the data (training or cross-validation).

    The additive fields (counts, sums, times) can be summed over MPI ranks with
    :meth:`as_vector` / :meth:`from_vector` (one all-reduce of a float64 vector).
    """

    cross_validate: bool = False
    randomized: bool = True
    num_done: int = 0            #: utterances put into the randomizer
    num_no_tgt: int = 0          #: utterances without targets
    num_other_error: int = 0     #: utterances dropped for length mismatch
    frames: int = 0              #: frames in minibatches (what the loss is over)
    minibatches: int = 0
    xent_sum: float = 0.0        #: sum over frames of -log y[target]
    entropy_sum: float = 0.0     #: sum of the target entropy (0 for one-hot targets)
    correct: int = 0             #: frames whose argmax is the target
    time_total: float = 0.0      #: wall seconds of the epoch
    time_io: float = 0.0         #: waiting for data, feature transform, randomizer
    time_optimize: float = 0.0   #: forward, loss, backward, update
    time_hook: float = 0.0       #: inside the after-minibatch hook (MPI mixing)
    progress: list = dataclasses.field(default_factory=list)  #: ProgressLoss values

    _ADDITIVE = ("num_done", "num_no_tgt", "num_other_error", "frames", "minibatches",
                 "xent_sum", "entropy_sum", "correct")

    # -- derived ----------------------------------------------------------------------------
    @property
    def avg_loss(self) -> float:
        """(cross-entropy - target entropy) per frame: the value train_scheduler.sh compares."""
        return (self.xent_sum - self.entropy_sum) / self.frames if self.frames else float("nan")

    @property
    def avg_xent(self) -> float:
        return self.xent_sum / self.frames if self.frames else float("nan")

    @property
    def avg_target_ent(self) -> float:
        return self.entropy_sum / self.frames if self.frames else float("nan")

    @property
    def frame_accuracy(self) -> float:
        """Percent of frames classified correctly."""
        return 100.0 * self.correct / self.frames if self.frames else float("nan")

    @property
    def frames_per_sec(self) -> float:
        return self.frames / self.time_total if self.time_total > 0 else 0.0

    @property
    def io_fraction(self) -> float:
        return self.time_io / self.time_total if self.time_total > 0 else 0.0

    # -- reduction over ranks -----------------------------------------------------------------
    def as_vector(self) -> np.ndarray:
        return np.array([float(getattr(self, f)) for f in self._ADDITIVE], dtype=np.float64)

    def set_from_vector(self, v: np.ndarray) -> None:
        """Overwrite the additive fields with ``v`` (e.g. the sum over ranks)."""
        for f, x in zip(self._ADDITIVE, np.asarray(v, dtype=np.float64).tolist()):
            setattr(self, f, type(getattr(self, f))(x if isinstance(getattr(self, f), float)
                                                    else round(x)))

    # -- Kaldi's lines ------------------------------------------------------------------------
    def summary_line(self) -> str:
        mode = "CROSS-VALIDATION" if self.cross_validate else "TRAINING"
        rnd = "RANDOMIZED" if self.randomized else "NOT-RANDOMIZED"
        fps = self.frames / self.time_total if self.time_total > 0 else 0.0
        return (f"Done {self.num_done} files, {self.num_no_tgt} with no tgt_mats, "
                f"{self.num_other_error} with other errors. [{mode}, {rnd}, "
                f"{kaldi_float(self.time_total / 60)} min, processing {kaldi_float(fps)} frames "
                f"per sec; i/o time {100.0 * self.io_fraction:.1f}%]")

    def report(self) -> str:
        """Xent::Report: AvgLoss line, progress line, FRAME_ACCURACY line."""
        prog = "".join(kaldi_float(np.float32(v)) + " " for v in self.progress)
        return (f"AvgLoss: {kaldi_float(self.avg_loss)} (Xent), [AvgXent: "
                f"{kaldi_float(self.avg_xent)}, AvgTargetEnt: {kaldi_float(self.avg_target_ent)}]"
                f"\nprogress: [{prog}]"
                f"\nFRAME_ACCURACY >> {kaldi_float(self.frame_accuracy)}% <<")

    def time_split(self) -> str:
        other = max(0.0, self.time_total - self.time_io - self.time_optimize - self.time_hook)
        return (f"Time split: optimize {self.time_optimize:.2f}s, i/o {self.time_io:.2f}s, "
                f"hook {self.time_hook:.2f}s, other {other:.2f}s, total {self.time_total:.2f}s "
                f"({self.minibatches} minibatches, {self.frames} frames)")


def parse_report(text: str) -> Optional[dict]:
    """The last AvgLoss and FRAME_ACCURACY values in a log text (for tests and tools)."""
    import re

    loss = re.findall(r"AvgLoss: (\S+) \(Xent\)", text)
    acc = re.findall(r"FRAME_ACCURACY >> (\S+)% <<", text)
    if not loss or not acc:
        return None
    return {"avg_loss": float(loss[-1]), "frame_accuracy": float(acc[-1])}


__all__ += ["parse_report"]
