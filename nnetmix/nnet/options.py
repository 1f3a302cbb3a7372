"""Training hyper-parameters of an nnet1 update (src/nnet/nnet-trnopts.h, NnetTrainOptions)."""
from __future__ import annotations

import dataclasses
import math

from nnetmix.errors import NnetmixError
from nnetmix.options import option

__all__ = ["NnetTrainOptions", "NnetError"]


class NnetError(NnetmixError):
    """A network that cannot do what was asked (dims that do not chain, backprop through an Rbm)."""


@dataclasses.dataclass
class NnetTrainOptions:
    """Kaldi's defaults: the gradient is the SUM over the minibatch, so ``learn_rate`` 0.008
    is meant for minibatches of 256 frames; L2 is applied as ``W -= lr * l2 * N * W``."""

    learn_rate: float = option(0.008, "Learning rate")
    momentum: float = option(0.0, "Momentum")
    l2_penalty: float = option(0.0, "L2 penalty (weight decay)")
    l1_penalty: float = option(0.0, "L1 penalty (promote sparsity)")

    def check(self) -> None:
        """Refuse what would train silently in the wrong direction or diverge (Kaldi checks
        none of these): a negative or non-finite learning rate, penalty or momentum."""
        for name in ("learn_rate", "l2_penalty", "l1_penalty"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise NnetError(f"--{name.replace('_', '-')} must be a finite number >= 0, "
                                f"got {value}")
        if not (math.isfinite(self.momentum) and 0 <= self.momentum < 1):
            raise NnetError(f"--momentum must be in [0, 1), got {self.momentum}")
