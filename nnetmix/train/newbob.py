"""Learning-rate schedules: Newbob (Kaldi's steps/nnet/train_scheduler.sh) and exponential decay.

Newbob, the rules of train_scheduler.sh, epoch by epoch (``iter`` counts from 1):

1. Train from the best model so far, then cross-validate. Accept the new model when its CV loss
   is lower than the best loss, or unconditionally while ``iter <= keep_lr_iters``; otherwise
   reject it (the next epoch starts again from the best model).
2. While ``iter <= keep_lr_iters`` nothing else happens (no halving, no stopping).
3. ``rel_impr = (loss_prev - loss) / loss_prev`` with ``loss`` the best loss after step 1 (so a
   rejected epoch has rel_impr 0).
4. When already halving and ``rel_impr < end_halving_impr``: stop, unless ``min_iters`` is set
   and larger than ``iter`` (then go on to the next epoch at the SAME learning rate: Kaldi's
   ``continue`` skips the halving below too).
5. When ``rel_impr < start_halving_impr``: halving starts (and stays on).
6. When halving: ``learn_rate *= halving_factor``.
7. At most ``max_iters`` epochs.

Kaldi reads the losses back from the logs, where they are printed with 6 significant digits, and
keeps the learning rate as awk prints it (``%.6g``); :func:`kaldi_round` does the same to the
library's numbers so decisions match Kaldi's to the digit.

Exponential: ``lr(e) = lr0 * final_ratio ** (e / (E - 1))`` for epochs e = 0..E-1 (final_ratio
0.01, so the last epoch runs at lr0/100), every epoch kept.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from nnetmix.options import option
from nnetmix.train.options import TrainError

__all__ = ["NewbobOptions", "NewbobState", "NewbobDecision", "newbob_step", "exponential_lr",
           "kaldi_round"]


def kaldi_round(x: float) -> float:
    """x as it survives a trip through a log or awk: 6 significant digits."""
    return float("%.6g" % float(x))


@dataclasses.dataclass
class NewbobOptions:
    """train_scheduler.sh's learn-rate scheduling options and defaults."""

    max_iters: int = option(20, "Maximum number of epochs")
    min_iters: int = option(0, "Minimum number of epochs before the end-halving rule may stop (0 = "
                            "not set)")
    keep_lr_iters: int = option(0, "Epochs accepted unconditionally at the initial learning rate")
    start_halving_impr: float = option(0.01, "Start halving when the relative CV improvement is "
                                       "below this")
    end_halving_impr: float = option(0.001, "Stop (once halving) when the relative CV improvement "
                                     "is below this")
    halving_factor: float = option(0.5, "Factor the learning rate is multiplied by when halving")

    def check(self) -> None:
        if self.max_iters < 1:
            raise TrainError(f"--max-iters must be >= 1, got {self.max_iters}")
        if not 0.0 < self.halving_factor <= 1.0:
            raise TrainError(f"--halving-factor must be in (0, 1], got {self.halving_factor}")


@dataclasses.dataclass
class NewbobState:
    """What train_scheduler.sh keeps in .learn_rate, .halving and .mlp_best (plus the loss)."""

    learn_rate: float
    loss: float                 #: CV loss of the best model
    mlp_best: str
    halving: bool = False
    last_iter: int = 0          #: last completed epoch
    finished: bool = False


@dataclasses.dataclass
class NewbobDecision:
    iter: int
    accepted: bool
    keep_lr: bool               #: accepted by the keep_lr_iters rule
    rel_impr: Optional[float]   #: None while iter <= keep_lr_iters
    stop: bool
    learn_rate_used: float
    next_learn_rate: float
    message: str


def newbob_step(state: NewbobState, opts: NewbobOptions, it: int, cv_loss: float,
                accepted_name: str = "") -> NewbobDecision:
    """Apply one epoch's CV loss to ``state`` (in place) and say what happened.

    ``accepted_name`` becomes ``state.mlp_best`` when the model is accepted.
    """
    cv = kaldi_round(cv_loss)
    lr_used = state.learn_rate
    loss_prev = state.loss
    keep = it <= opts.keep_lr_iters
    accepted = cv < state.loss or keep
    if accepted:
        state.loss = cv
        state.mlp_best = accepted_name or state.mlp_best
    state.last_iter = it
    msg = []
    rel: Optional[float] = None
    stop = False
    if not keep:
        rel = (loss_prev - state.loss) / loss_prev if loss_prev != 0 else 0.0
        skip_rest = False
        if state.halving and rel < opts.end_halving_impr:
            if opts.min_iters and opts.min_iters > it:
                msg.append(f"we were supposed to finish, but we continue as min_iters : "
                           f"{opts.min_iters}")
                skip_rest = True
            else:
                msg.append(f"finished, too small rel. improvement {rel:.10f}")
                stop = True
        if not stop and not skip_rest:
            if rel < opts.start_halving_impr:
                state.halving = True
            if state.halving:
                state.learn_rate = kaldi_round(state.learn_rate * opts.halving_factor)
    # ``finished`` is convergence only: the --max-iters limit is the caller's loop bound, so a
    # run resumed with a larger --max-iters trains the new epochs (README: raise it to go on)
    state.finished = stop
    if it >= opts.max_iters:
        stop = True
    return NewbobDecision(it, accepted, keep, rel, stop, lr_used, state.learn_rate, "; ".join(msg))


def exponential_lr(lr0: float, epoch: int, num_epochs: int, final_ratio: float = 0.01) -> float:
    """Learning rate of 0-based ``epoch`` of ``num_epochs``: lr0 * final_ratio^(e/(E-1))."""
    if num_epochs < 1 or not 0 <= epoch < num_epochs:
        raise TrainError(f"exponential schedule: epoch {epoch} of {num_epochs}")
    if num_epochs == 1:
        return float(lr0)
    return float(lr0) * float(final_ratio) ** (epoch / (num_epochs - 1))
