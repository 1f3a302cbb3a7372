"""nnet1's <ParametricRelu> and <Dropout>: ReLU DNNs and dropout training.

* :class:`ParametricRelu` (src/nnet/nnet-parametric-relu.h): y = alpha[j] x where x > 0, else
  beta[j] x, with per-neuron vectors alpha and beta that are trained when their learn-rate
  coefficients are > 0 (Kaldi's default is 0 for both: fixed). Plain ReLU is alpha = 1, beta = 0,
  what a prototype line without options gives. Kaldi's Update is momentum SGD on alpha and beta
  (no L1/L2); ``update`` is the same through ``Backend.sgd_update``.
* :class:`Dropout` (nnet-activation.h): at TRAINING time a random fraction ``dropout_rate`` of
  the entries is zeroed and the rest scaled by 1 / (1 - rate), so the test-time network is the
  identity and needs no rescaling. Kaldi switches dropout off by setting the rate to 0 in
  nnet-forward and in cross-validation (Nnet::SetDropoutRate); here a network is in test mode
  unless a trainer puts it in training mode (:meth:`Nnet.set_training`, with the trainer's
  seed), so nnet-forward, the decoders and cross-validation never drop and the file keeps its
  rate. The masks come from prelu_dropout_cpu.py's counter-based hash, one step per forward pass.

The tokens, their order and the Info lines are Kaldi's, so files go both ways.
"""
from __future__ import annotations

import numpy as np

from nnetmix.kaldi.tokens import TokenReader, TokenWriter
from nnetmix.kernels.prelu_dropout_cpu import prelu_dropout_ops
from nnetmix.nnet.components import (Component, component_type, moment_statistics,
                                     register_component)
from nnetmix.nnet.options import NnetError, NnetTrainOptions

__all__ = ["ParametricRelu", "Dropout"]

_g = "{:.6g}".format


def _square(r: TokenReader, cls: type, input_dim: int, output_dim: int) -> None:
    if input_dim != output_dim:
        raise r.fail(f"bad {cls.marker}", f"input dim {input_dim} != output dim {output_dim}")


class ParametricRelu(Component):
    """y = x > 0 ? alpha * x : beta * x per column; <AlphaLearnRateCoef>, <BetaLearnRateCoef>."""

    marker = "<ParametricRelu>"
    updatable = True
    #: prototype options (nnet-initialize), Kaldi's InitData
    PROTO_OPTIONS = {"<Alpha>": "f", "<Beta>": "f", "<AlphaLearnRateCoef>": "f",
                     "<BetaLearnRateCoef>": "f"}

    def __init__(self, input_dim: int, output_dim: int | None = None, alpha=None, beta=None,
                 alpha_learn_rate_coef: float = 0.0, beta_learn_rate_coef: float = 0.0):
        super().__init__(input_dim, input_dim if output_dim is None else output_dim)
        if self.input_dim != self.output_dim:
            raise NnetError(f"<ParametricRelu> {self.output_dim} {self.input_dim}: input and "
                            "output dims differ")
        d = self.output_dim
        self.alpha_learn_rate_coef = np.float32(alpha_learn_rate_coef)
        self.beta_learn_rate_coef = np.float32(beta_learn_rate_coef)
        self._set_host({"alpha": np.ones(d, np.float32) if alpha is None else alpha,
                        "beta": np.zeros(d, np.float32) if beta is None else beta})

    @classmethod
    def from_proto(cls, op: dict, input_dim: int, output_dim: int, rng) -> "ParametricRelu":
        """Kaldi's InitData: <Alpha> 1 <Beta> 0 for every neuron, coefficients 0."""
        d = output_dim
        return cls(input_dim, output_dim, np.full(d, op.get("<Alpha>", 1.0), np.float32),
                   np.full(d, op.get("<Beta>", 0.0), np.float32),
                   op.get("<AlphaLearnRateCoef>", 0.0), op.get("<BetaLearnRateCoef>", 0.0))

    def param_specs(self):
        return [("alpha", (self.output_dim,)), ("beta", (self.output_dim,))]

    def propagate(self, be, x, y):
        prelu_dropout_ops(be).prelu(x, self.params["alpha"], self.params["beta"], y)

    def backpropagate(self, be, x, y, dy, dx):
        if dx is not None:
            prelu_dropout_ops(be).prelu_backward(x, dy, self.params["alpha"],
                                                 self.params["beta"], dx)

    def accumulate_gradient(self, be, x, dy):
        # Kaldi computes them only for a coefficient > 0: a plain ReLU layer costs nothing here
        if self.alpha_learn_rate_coef > 0.0 or self.beta_learn_rate_coef > 0.0:
            prelu_dropout_ops(be).prelu_grad(x, dy, self.grads["alpha"], self.grads["beta"])

    def update(self, be, opts: NnetTrainOptions, num_frames: int) -> None:
        # ParametricRelu::Update: corr = momentum * corr + grad; p -= lr * coef * corr
        for name, coef in (("alpha", self.alpha_learn_rate_coef),
                           ("beta", self.beta_learn_rate_coef)):
            if coef > 0.0:
                be.sgd_update(self.params[name], self.grads[name], self.velocity[name],
                              opts.learn_rate * float(coef), opts.momentum)

    def write_data(self, w: TokenWriter, host):
        w.token("<AlphaLearnRateCoef>")
        w.float32(self.alpha_learn_rate_coef)
        w.token("<BetaLearnRateCoef>")
        w.float32(self.beta_learn_rate_coef)
        w.newline()
        w.vector(host["alpha"])
        w.vector(host["beta"])

    @classmethod
    def read_data(cls, r: TokenReader, input_dim: int, output_dim: int) -> "ParametricRelu":
        _square(r, cls, input_dim, output_dim)
        names = {"<AlphaLearnRateCoef>": "alpha_learn_rate_coef",
                 "<BetaLearnRateCoef>": "beta_learn_rate_coef"}
        kw = {}
        while r.peek_char() == "<":
            tok = r.token("<AlphaLearnRateCoef> or <BetaLearnRateCoef>")
            if tok not in names:
                raise r.fail("unknown token", f"'{tok[:40]}' (expected <AlphaLearnRateCoef>, "
                             "<BetaLearnRateCoef> or the alpha vector)")
            kw[names[tok]] = r.float32(tok)
        alpha = r.vector("alpha vector")
        beta = r.vector("beta vector")
        for what, v in (("alpha vector", alpha), ("beta vector", beta)):
            if v.shape != (output_dim,):
                raise r.fail(f"bad {what}", f"expected shape ({output_dim},) (from the "
                             f"component's dims), got {v.shape}")
        return cls(input_dim, output_dim, alpha, beta, **kw)

    def info(self, host):
        return (f"\n  alpha{moment_statistics(host['alpha'])}, alpha-lr-coef "
                f"{_g(self.alpha_learn_rate_coef)}\n  beta{moment_statistics(host['beta'])}, "
                f"beta-lr-coef {_g(self.beta_learn_rate_coef)}")


class Dropout(Component):
    """Training: y = x * mask / (1 - rate), mask ~ Bernoulli(1 - rate); test: y = x."""

    marker = "<Dropout>"
    PROTO_OPTIONS = {"<DropoutRate>": "f"}

    def __init__(self, input_dim: int, output_dim: int | None = None, dropout_rate: float = 0.5):
        super().__init__(input_dim, input_dim if output_dim is None else output_dim)
        if self.input_dim != self.output_dim:
            raise NnetError(f"<Dropout> {self.output_dim} {self.input_dim}: input and output "
                            "dims differ")
        self.dropout_rate = self._checked(dropout_rate)
        self.training = False
        self._seed = 0
        self._state = None          # the (seed, step) mask stream on _state_be
        self._state_be = None

    @staticmethod
    def _checked(rate: float) -> np.float32:
        r = np.float32(rate)
        if not 0.0 <= r < 1.0:
            raise NnetError(f"<Dropout>: <DropoutRate> {rate} is outside [0, 1)")
        return r

    @classmethod
    def from_proto(cls, op: dict, input_dim: int, output_dim: int, rng) -> "Dropout":
        return cls(input_dim, output_dim, op.get("<DropoutRate>", 0.5))

    def set_dropout_rate(self, rate: float) -> None:
        """Kaldi's Dropout::SetDropoutRate (nnet-copy --dropout-rate)."""
        self.dropout_rate = self._checked(rate)

    def set_training(self, training: bool, seed: int = 0) -> None:
        """Training mode draws masks from a stream seeded with ``seed`` (restarted here)."""
        self.training = bool(training)
        self._seed = int(seed)
        self._state = self._state_be = None

    def detached(self, host):
        c = super().detached(host)
        c.set_training(False)
        return c

    def _dropping(self) -> bool:
        return self.training and float(self.dropout_rate) > 0.0

    def _stream(self, be, ops):
        if self._state is None or self._state_be is not be:
            self._state, self._state_be = ops.state(self._seed), be
        return self._state

    def propagate(self, be, x, y):
        if not self._dropping():
            be.copy(y, x)
            return
        ops = prelu_dropout_ops(be)
        state = self._stream(be, ops)
        ops.advance(state)
        ops.dropout(state, float(self.dropout_rate), x, y)

    def backpropagate(self, be, x, y, dy, dx):
        if dx is None:
            return
        if not self._dropping():
            be.copy(dx, dy)
            return
        ops = prelu_dropout_ops(be)
        ops.dropout(self._stream(be, ops), float(self.dropout_rate), dy, dx)

    def write_data(self, w: TokenWriter, host):
        w.token("<DropoutRate>")
        w.float32(self.dropout_rate)

    @classmethod
    def read_data(cls, r: TokenReader, input_dim: int, output_dim: int) -> "Dropout":
        _square(r, cls, input_dim, output_dim)
        rate = 0.5
        # its tokens end at <!EndOfComponent>, or at </Nnet> or the next component (the end
        # marker is optional)
        while r.peek_char() == "<":
            nxt = r.peek_token()
            if nxt in ("<!EndOfComponent>", "</Nnet>") or component_type(nxt) is not None:
                break
            tok = r.token("<DropoutRate>")
            if tok == "<DropoutRate>":
                rate = float(r.float32(tok))
            elif tok == "<DropoutRetention>":   # Kaldi reads the older token too
                rate = 1.0 - float(r.float32(tok))
            else:
                raise r.fail("unknown token", f"'{tok[:40]}' (expected <DropoutRate>)")
        if not 0.0 <= rate < 1.0:
            raise r.fail("bad <DropoutRate>", f"{rate} is outside [0, 1)")
        return cls(input_dim, output_dim, rate)

    def info(self, host):
        return f"<DropoutRate> {_g(self.dropout_rate)}"


register_component(ParametricRelu)
register_component(Dropout)
