"""Option groups of frame-level training (nnet-train-frmshuff's, src/nnet/nnet-randomizer.h).

``TrainOptions`` is what one epoch needs besides the network's own update hyper-parameters
(:class:`~nnetmix.nnet.NnetTrainOptions`: learn rate, momentum, L2, L1). Both are dataclasses
whose fields carry ``metadata["help"]``, so a bin/ tool registers them with
``OptionParser.register_group``.
"""
from __future__ import annotations

import dataclasses

from nnetmix.errors import NnetmixError

__all__ = ["RandomizerOptions", "TrainOptions", "TrainError"]


class TrainError(NnetmixError):
    """An epoch that cannot run or must not be kept (NaN/Inf, dims, targets, empty data)."""


def _f(default, help: str):
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass
class RandomizerOptions:
    """NnetDataRandomizerOptions: the frame buffer is filled with whole utterances until it
    holds more than ``randomizer_size`` frames, shuffled, and cut into minibatches."""

    minibatch_size: int = _f(256, "Size of a minibatch (frames)")
    randomizer_size: int = _f(32768, "Capacity of the frame randomizer buffer (frames)")
    randomizer_seed: int = _f(777, "Seed of the frame shuffling")

    def check(self) -> None:
        if self.minibatch_size <= 0:
            raise TrainError(f"--minibatch-size must be > 0, got {self.minibatch_size}")
        if self.randomizer_size < self.minibatch_size:
            raise TrainError(f"--randomizer-size ({self.randomizer_size}) must be at least "
                             f"--minibatch-size ({self.minibatch_size})")


@dataclasses.dataclass
class TrainOptions(RandomizerOptions):
    """Everything about one pass over the data that is not the update rule itself."""

    cross_validate: bool = _f(False, "Perform cross-validation (no backpropagation, no update)")
    randomize: bool = _f(True, "Shuffle the frames in the randomizer buffer (training only)")
    length_tolerance: int = _f(5, "Allowed length mismatch of features/targets (in frames; "
                               "longer ones are truncated to the shortest)")
    objective_function: str = _f("xent", "Objective function (only xent)")
    prefetch: bool = _f(True, "Read the next utterances on a background thread while training")
    prefetch_frames: int = _f(32768, "Frames the prefetch queue may hold ahead of the trainer")
    max_dropped_fraction: float = _f(0.2, "Fail the epoch when more than this fraction of the "
                                     "utterances had no targets or bad lengths")
    check_params_every: int = _f(100, "Check the parameters for NaN/Inf every N minibatches "
                                 "(and at the end of the epoch; 0 = only at the end)")

    def check(self) -> None:
        super().check()
        if self.objective_function != "xent":
            raise TrainError(f"--objective-function={self.objective_function} is not supported "
                             "(only xent)")
        if self.length_tolerance < 0:
            raise TrainError(f"--length-tolerance must be >= 0, got {self.length_tolerance}")
        if not 0.0 <= self.max_dropped_fraction <= 1.0:
            raise TrainError("--max-dropped-fraction must be in [0, 1], got "
                             f"{self.max_dropped_fraction}")
