"""Training hyper-parameters of an nnet1 update (src/nnet/nnet-trnopts.h, NnetTrainOptions)."""
from __future__ import annotations

import dataclasses

from nnetmix.errors import NnetmixError

__all__ = ["NnetTrainOptions", "NnetError"]


class NnetError(NnetmixError):
    """A network that cannot do what was asked (dims that do not chain, backprop through an Rbm)."""


@dataclasses.dataclass
class NnetTrainOptions:
    """Kaldi's defaults: the gradient is the SUM over the minibatch, so ``learn_rate`` 0.008
    is meant for minibatches of 256 frames; L2 is applied as ``W -= lr * l2 * N * W``."""

    learn_rate: float = dataclasses.field(default=0.008, metadata={"help": "Learning rate"})
    momentum: float = dataclasses.field(default=0.0, metadata={"help": "Momentum"})
    l2_penalty: float = dataclasses.field(default=0.0, metadata={"help": "L2 penalty (weight decay)"})
    l1_penalty: float = dataclasses.field(default=0.0, metadata={"help": "L1 penalty (promote sparsity)"})
