"""Option groups of RBM training (Kaldi's RbmTrainOptions, src/nnet/nnet-trnopts.h, and the
options of src/nnetbin/rbm-train-cd1-frmshuff.cc).

Dataclasses whose fields carry ``metadata["help"]``, so a bin/ tool registers them with
``OptionParser.register_group``.
"""
from __future__ import annotations

import dataclasses

from nnetmix.errors import NnetmixError
from nnetmix.options import option
from nnetmix.train.options import RandomizerOptions

__all__ = ["RbmError", "RbmNoDataError", "RbmTrainOptions", "RbmRandomizerOptions", "Cd1Options",
           "register_cd1_options"]


class RbmError(NnetmixError):
    """RBM training cannot go on (NaN/Inf, bad dims, no data, not an RBM)."""


class RbmNoDataError(RbmError):
    """No utterance could be used: the callers that read the features name them."""


@dataclasses.dataclass
class RbmTrainOptions:
    """Kaldi's RbmTrainOptions: the CD-1 update rule and its momentum schedule.

    The update (Rbm::RbmUpdate) is classic Hinton-style: the increment ("corr") buffer holds
    ``mmt * corr + lr/N * (pos - neg) - lr * l2 * W``, then ``W += corr``; biases the same without
    L2. The learning rate handed to the RBM is ``learn_rate * (1 - momentum_actual)`` so the
    effective step stays constant while momentum ramps linearly from ``momentum`` to
    ``momentum_max`` in ``momentum_steps`` steps of ``momentum_step_period`` frames
    (40 x 500k = 20M frames, about 55 h). ``with_bug`` is Kaldi's --with-bug (default true in
    Kaldi since 2014): the momentum itself is set to ``momentum_max`` at the first step while the
    learning rate still follows the ramp ("Apply bug which led to better results").
    """

    learn_rate: float = option(0.4, "Learning rate")
    momentum: float = option(0.5, "Initial momentum for linear scheduling")
    momentum_max: float = option(0.9, "Final momentum for linear scheduling")
    momentum_steps: int = option(40, "Number of steps of linear momentum scheduling")
    momentum_step_period: int = option(500000, "Number of datapoints per single momentum "
                                       "increase step")
    l2_penalty: float = option(0.0002, "L2 penalty (weight decay, increases mixing-rate)")
    with_bug: bool = option(True, "Apply bug which led to better results "
                            "(set-initial-momentum-to-max), as Kaldi's default")

    def check(self) -> None:
        if not self.learn_rate > 0.0:
            raise RbmError(f"--learn-rate must be > 0, got {self.learn_rate}")
        for name in ("momentum", "momentum_max"):
            v = getattr(self, name)
            if not 0.0 <= v < 1.0:
                raise RbmError(f"--{name.replace('_', '-')} must be in [0, 1), got {v}")
        if self.momentum_steps <= 0 or self.momentum_step_period <= 0:
            raise RbmError("--momentum-steps and --momentum-step-period must be > 0, got "
                           f"{self.momentum_steps} and {self.momentum_step_period}")
        if self.l2_penalty < 0.0:
            raise RbmError(f"--l2-penalty must be >= 0, got {self.l2_penalty}")


@dataclasses.dataclass
class RbmRandomizerOptions(RandomizerOptions):
    """The frame randomizer of rbm-train-cd1-frmshuff: as nnet-train-frmshuff's, but Kaldi sets
    the minibatch to 100 frames for CD-1."""

    minibatch_size: int = option(100, "Size of a minibatch (frames)")


@dataclasses.dataclass
class Cd1Options:
    """Everything about the passes over the data that is not the update rule."""

    num_iters: int = option(1, "Number of iterations (smaller datasets should have more "
                            "iterations, iterating within tool because of linear "
                            "momentum scheduling)")
    drop_data: float = option(0.0, "Threshold for random dropping of the data (0 no-drop, "
                              "1 drop-all; per frame, seeded by --seed)")
    max_frames: int = option(6000, "Maximum number of frames a segment can have to be processed")
    seed: int = option(777, "Seed of the hidden-state sampling and of --drop-data")
    loss_report_frames: int = option(5 * 3600 * 100, "Report loss per blocks of N frames "
                                     "(0 = no reports)")
    prefetch: bool = option(True, "Read the next utterances on a background thread while training")
    check_params_every: int = option(100, "Check the parameters for NaN/Inf every N minibatches "
                                     "(and at the end; 0 = only at the end)")

    def check(self) -> None:
        if self.num_iters <= 0:
            raise RbmError(f"--num-iters must be > 0, got {self.num_iters}")
        if not 0.0 <= self.drop_data < 1.0:
            raise RbmError(f"--drop-data must be in [0, 1), got {self.drop_data}")
        if self.max_frames <= 0:
            raise RbmError(f"--max-frames must be > 0, got {self.max_frames}")


def register_cd1_options(p) -> None:
    """Register rbm-train-cd1-frmshuff.py's options on an option parser ``p`` (anything with
    ``register`` and ``register_group``); the MPI tool takes all of them too."""
    p.register_group(RbmTrainOptions)
    p.register_group(RbmRandomizerOptions)
    p.register_group(Cd1Options)
    p.register("binary", False, "Write output in binary mode")
    p.register("feature-transform", "", "Feature transform in Nnet format")
    p.register("backend", "cpu", "Compute backend: cpu, cuda or auto (the feature transform "
               "runs on it too)")
