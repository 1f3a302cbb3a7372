"""The momentum / learning-rate schedule of rbm-train-cd1-frmshuff.cc.

After every minibatch, with F the frames processed so far (over all iterations)::

    step = (momentum_max - momentum) / momentum_steps
    n    = F // momentum_step_period
    m    = momentum_max if n > momentum_steps else momentum + n * step
    when n grows (also at the very first minibatch, n = 0):
        learning rate handed to the RBM = learn_rate * (1 - m)
        momentum handed to the RBM      = momentum_max if with_bug else m

Before the first minibatch the RBM gets ``learn_rate * (1 - momentum)`` and ``momentum``.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from nnetmix.rbm.options import RbmTrainOptions

__all__ = ["MomentumSchedule", "RateChange"]


@dataclasses.dataclass(frozen=True)
class RateChange:
    momentum: float        #: what the RBM uses from now on
    learn_rate: float      #: what the RBM uses from now on
    momentum_ramp: float   #: the ramp's value (equals momentum unless with_bug)


class MomentumSchedule:
    """Stateful: call :meth:`after` with the running frame count after every minibatch."""

    def __init__(self, opts: RbmTrainOptions):
        self.opts = opts
        self.n_prev = -1

    def initial(self) -> tuple[float, float]:
        """(learn rate, momentum) before the first minibatch."""
        o = self.opts
        return o.learn_rate * (1.0 - o.momentum), o.momentum

    def ramp(self, total_frames: int) -> tuple[int, float]:
        o = self.opts
        step = (o.momentum_max - o.momentum) / o.momentum_steps
        n = int(total_frames) // o.momentum_step_period
        m = o.momentum_max if n > o.momentum_steps else o.momentum + n * step
        return n, m

    def after(self, total_frames: int) -> Optional[RateChange]:
        """The new rates when the step count grew, else None."""
        n, m = self.ramp(total_frames)
        if n <= self.n_prev:
            return None
        self.n_prev = n
        o = self.opts
        return RateChange(o.momentum_max if o.with_bug else m, o.learn_rate * (1.0 - m), m)
