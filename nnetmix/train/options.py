"""Option groups of frame-level training (nnet-train-frmshuff's, src/nnet/nnet-randomizer.h).

``TrainOptions`` is what one epoch needs besides the network's own update hyper-parameters
(:class:`~nnetmix.nnet.NnetTrainOptions`: learn rate, momentum, L2, L1). Both are dataclasses
whose fields carry ``metadata["help"]``, so a bin/ tool registers them with
``OptionParser.register_group``.
"""
from __future__ import annotations

import dataclasses

from nnetmix.errors import NnetmixError
from nnetmix.options import option

__all__ = ["RandomizerOptions", "TrainOptions", "TrainError", "NoDataError", "OptimizerOptions",
           "OPTIMIZERS"]

OPTIMIZERS = ("sgd", "ngsgd")


class TrainError(NnetmixError):
    """An epoch that cannot run or must not be kept (NaN/Inf, dims, targets, empty data)."""


class NoDataError(TrainError):
    """No utterance could be used: the callers that read the tables name them."""


@dataclasses.dataclass
class RandomizerOptions:
    """NnetDataRandomizerOptions: the frame buffer is filled with whole utterances until it
    holds more than ``randomizer_size`` frames, shuffled, and cut into minibatches."""

    minibatch_size: int = option(256, "Size of a minibatch (frames)")
    randomizer_size: int = option(32768, "Capacity of the frame randomizer buffer (frames)")
    randomizer_seed: int = option(777, "Seed of the frame shuffling")

    def check(self) -> None:
        if self.minibatch_size <= 0:
            raise TrainError(f"--minibatch-size must be > 0, got {self.minibatch_size}")
        if self.randomizer_size < self.minibatch_size:
            raise TrainError(f"--randomizer-size ({self.randomizer_size}) must be at least "
                             f"--minibatch-size ({self.minibatch_size})")


@dataclasses.dataclass
class TrainOptions(RandomizerOptions):
    """Everything about one pass over the data that is not the update rule itself."""

    cross_validate: bool = option(False, "Perform cross-validation (no backpropagation, no update)")
    randomize: bool = option(True, "Shuffle the frames in the randomizer buffer (training only)")
    length_tolerance: int = option(5, "Allowed length mismatch of features/targets (in frames; "
                                   "longer ones are truncated to the shortest)")
    objective_function: str = option("xent", "Objective function (only xent)")
    prefetch: bool = option(True, "Read the next utterances on a background thread while training")
    prefetch_frames: int = option(32768, "Frames the prefetch queue may hold ahead of the trainer")
    max_dropped_fraction: float = option(0.2, "Fail the epoch when more than this fraction of the "
                                         "utterances had no targets or bad lengths")
    check_params_every: int = option(100, "Check the parameters for NaN/Inf every N minibatches "
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


@dataclasses.dataclass
class OptimizerOptions:
    """The update rule: nnet1's plain SGD, or online natural-gradient SGD (NG-SGD) on every
    <AffineTransform> (Povey, Zhang, Khudanpur 2014, arXiv 1410.7455, §4 and appendix C; Kaldi's
    nnet2 AffineComponentPreconditionedOnline). The defaults are Kaldi's: rank 20 for the
    input Fisher, 80 for the output-derivative Fisher, subspace update every 4 minibatches,
    forgetting factor from 2000 samples of history, smoothing alpha 4, max-change-per-sample
    0.075 (nnet2's default). NG-SGD's state lives next to the model (``<model>.ngsgd.npz``)."""

    optimizer: str = option("sgd", "Update rule: sgd (nnet1 SGD) or ngsgd (online natural-gradient "
                            "SGD on every <AffineTransform>)")
    ngsgd_rank_in: int = option(20, "NG-SGD: rank of the Fisher estimate of a layer's input "
                                "(with the column of ones)")
    ngsgd_rank_out: int = option(80, "NG-SGD: rank of the Fisher estimate of a layer's "
                                 "output derivative")
    ngsgd_update_period: int = option(4, "NG-SGD: re-estimate the Fisher subspaces every N "
                                      "minibatches (every minibatch for the first 10)")
    ngsgd_num_samples_history: float = option(2000.0, "NG-SGD: forgetting factor of the Fisher "
                                              "estimates, in samples (eta = 1 - exp(-N/history))")
    ngsgd_alpha: float = option(4.0, "NG-SGD: smoothing of the Fisher estimates towards the "
                                "identity (alpha * trace / dim added to the diagonal)")
    max_change_per_sample: float = option(0.075, "NG-SGD: limit on lr * sum over frames of "
                                          "|input row| * |output-derivative row| per frame of the "
                                          "minibatch (0 = no limit)")

    def check(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise TrainError(f"--optimizer={self.optimizer} is not known (expected one of "
                             f"{', '.join(OPTIMIZERS)})")
        if self.ngsgd_rank_in < 1 or self.ngsgd_rank_out < 1:
            raise TrainError("--ngsgd-rank-in and --ngsgd-rank-out must be >= 1, got "
                             f"{self.ngsgd_rank_in} and {self.ngsgd_rank_out}")
        if self.ngsgd_update_period < 1:
            raise TrainError(f"--ngsgd-update-period must be >= 1, got {self.ngsgd_update_period}")
        if not self.ngsgd_num_samples_history > 0.0:
            raise TrainError("--ngsgd-num-samples-history must be > 0, got "
                             f"{self.ngsgd_num_samples_history}")
        if self.ngsgd_alpha < 0.0:
            raise TrainError(f"--ngsgd-alpha must be >= 0, got {self.ngsgd_alpha}")
        if self.max_change_per_sample < 0.0:
            raise TrainError("--max-change-per-sample must be >= 0, got "
                             f"{self.max_change_per_sample}")
