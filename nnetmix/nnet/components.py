"""nnet1 components: their parameters, forward and backward passes, update and file data.

Each class matches a Kaldi nnet1 component (src/nnet/nnet-affine-transform.h,
nnet-linear-transform.h, nnet-activation.h, nnet-various.h, nnet-rbm.h): the same marker, the
same tokens in the same order in ``write_data``, the same update. All arithmetic goes through a
:class:`~nnetmix.kernels.backend.Backend` (``be``). A component owns no storage of its own once
it is in a :class:`~nnetmix.nnet.network.Nnet`: ``params``, ``grads`` and ``velocity`` are dicts of
views into the network's flat buffers. Outside a network (just read or built) ``params`` holds
host float32 arrays.
"""
from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np

import nnetmix.nnet.hostops as hostops
from nnetmix.nnet.options import NnetError, NnetTrainOptions
from nnetmix.kaldi.tokens import TokenReader, TokenWriter

__all__ = ["Component", "AffineTransform", "LinearTransform", "Sigmoid", "Tanh", "Softmax",
           "Splice", "AddShift", "Rescale", "Rbm", "COMPONENT_TYPES", "component_type",
           "register_component", "moment_statistics"]


def moment_statistics(a: np.ndarray) -> str:
    """Kaldi's MomentStatistics (nnet-utils.h) as nnet-info prints it (precision 6)."""
    v = np.asarray(a, dtype=np.float64).ravel()
    g = "{:.6g}".format
    if v.size == 0:
        return " ( empty ) "
    mean = v.mean()
    c = v - mean
    var = (c * c).mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        skew = (c ** 3).mean() / var ** 1.5
        kurt = (c ** 4).mean() / (var * var) - 3.0
    return (f" ( min {g(v.min())}, max {g(v.max())}, mean {g(mean)}, stddev {g(np.sqrt(var))}, "
            f"skewness {g(skew)}, kurtosis {g(kurt)} ) ")


class Component:
    """Base class: a layer with ``input_dim``/``output_dim`` and named parameter blocks."""

    marker: ClassVar[str] = ""
    updatable: ClassVar[bool] = False

    def __init__(self, input_dim: int, output_dim: int):
        self.input_dim = int(input_dim)
        self.output_dim = int(output_dim)
        self.params: dict[str, Any] = {}
        self.grads: dict[str, Any] = {}
        self.velocity: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.input_dim} -> {self.output_dim})"

    # -- parameters -------------------------------------------------------------------------
    def param_specs(self) -> list[tuple[str, tuple[int, ...]]]:
        """(name, shape) of each parameter block, in the order they lie in the flat buffer."""
        return []

    @property
    def num_params(self) -> int:
        return int(sum(int(np.prod(s)) for _, s in self.param_specs()))

    def _set_host(self, values: dict[str, Any]) -> None:
        """Store host float32 copies of ``values`` (missing blocks: zeros)."""
        self.params = {}
        for name, shape in self.param_specs():
            v = values.get(name)
            arr = np.zeros(shape, np.float32) if v is None else np.array(v, dtype=np.float32)
            if arr.shape != tuple(shape):
                raise NnetError(f"{self.marker} {self.output_dim} {self.input_dim}: parameter "
                                f"{name} has shape {arr.shape}, expected {tuple(shape)}")
            self.params[name] = arr
        self.grads, self.velocity = {}, {}

    def detached(self, host: dict[str, np.ndarray]) -> "Component":
        """A copy of this component (same hyper-parameters) holding host copies of ``host``."""
        c = copy.copy(self)
        c._set_host(host)
        return c

    # -- computation ------------------------------------------------------------------------
    def propagate(self, be, x, y) -> None:
        raise NotImplementedError

    def backpropagate(self, be, x, y, dy, dx) -> None:
        """dx = dL/dx given dy = dL/dy (x, y from the forward pass); dx None: not needed."""
        raise NotImplementedError

    def accumulate_gradient(self, be, x, dy) -> None:
        """Write the parameter gradients (SUM over the frames) into ``self.grads``."""

    def update(self, be, opts: NnetTrainOptions, num_frames: int) -> None:
        """Apply one nnet1 update from ``self.grads`` (momentum in ``self.velocity``)."""

    # -- files ------------------------------------------------------------------------------
    def write_data(self, w: TokenWriter, host: dict[str, np.ndarray]) -> None:
        """Kaldi's WriteData: what follows ``<Marker> out in``."""

    @classmethod
    def read_data(cls, r: TokenReader, input_dim: int, output_dim: int) -> "Component":
        return cls(input_dim, output_dim)

    def info(self, host: dict[str, np.ndarray]) -> str:
        """Kaldi's Component::Info (what nnet-info prints after the dims)."""
        return ""

    def info_gradient(self, grads: dict[str, np.ndarray]) -> str:
        """Kaldi's InfoGradient, roughly: statistics of each gradient block."""
        return ", ".join(f"\n  {n}_grad{moment_statistics(v)}" for n, v in grads.items())


def _check_shape(r: TokenReader, what: str, arr: np.ndarray, shape: tuple) -> None:
    if arr.shape != shape:
        raise r.fail(f"bad {what}", f"expected shape {shape} (from the component's dims), "
                     f"got {arr.shape}")


class AffineTransform(Component):
    """Y = X W^T + b; <LearnRateCoef>, <BiasLearnRateCoef>, <MaxNorm>."""

    marker = "<AffineTransform>"
    updatable = True

    def __init__(self, input_dim: int, output_dim: int, W=None, b=None,
                 learn_rate_coef: float = 1.0, bias_learn_rate_coef: float = 1.0,
                 max_norm: float = 0.0):
        super().__init__(input_dim, output_dim)
        self.learn_rate_coef = np.float32(learn_rate_coef)
        self.bias_learn_rate_coef = np.float32(bias_learn_rate_coef)
        self.max_norm = np.float32(max_norm)
        self._set_host({"W": W, "b": b})

    def param_specs(self):
        return [("W", (self.output_dim, self.input_dim)), ("b", (self.output_dim,))]

    def propagate(self, be, x, y):
        be.gemm(x, self.params["W"], y, trans_b=True)
        be.add_bias(y, self.params["b"])

    def backpropagate(self, be, x, y, dy, dx):
        if dx is not None:
            be.gemm(dy, self.params["W"], dx)

    def accumulate_gradient(self, be, x, dy):
        be.gemm(dy, x, self.grads["W"], trans_a=True)
        be.sum_rows(dy, self.grads["b"])

    def update(self, be, opts, num_frames):
        # AffineTransform::Update: momentum, L2, L1, update, then max-norm; no L1/L2 on bias.
        lr = opts.learn_rate * float(self.learn_rate_coef)
        lr_bias = opts.learn_rate * float(self.bias_learn_rate_coef)
        be.sgd_update(self.params["W"], self.grads["W"], self.velocity["W"], lr, opts.momentum,
                      l2=opts.l2_penalty, l1=opts.l1_penalty, num_frames=num_frames)
        be.sgd_update(self.params["b"], self.grads["b"], self.velocity["b"], lr_bias,
                      opts.momentum)
        if self.max_norm > 0.0:
            be.max_norm(self.params["W"], float(self.max_norm))

    def write_data(self, w, host):
        w.token("<LearnRateCoef>")
        w.float32(self.learn_rate_coef)
        w.token("<BiasLearnRateCoef>")
        w.float32(self.bias_learn_rate_coef)
        w.token("<MaxNorm>")
        w.float32(self.max_norm)
        w.newline()
        w.matrix(host["W"])
        w.vector(host["b"])

    @classmethod
    def read_data(cls, r, input_dim, output_dim):
        kw = {}
        names = {"<LearnRateCoef>": "learn_rate_coef",
                 "<BiasLearnRateCoef>": "bias_learn_rate_coef", "<MaxNorm>": "max_norm"}
        while r.peek_char() == "<":
            tok = r.token("<LearnRateCoef>, <BiasLearnRateCoef> or <MaxNorm>")
            if tok not in names:
                raise r.fail("unknown token", f"'{tok[:40]}' (expected <LearnRateCoef>, "
                             "<BiasLearnRateCoef>, <MaxNorm> or the weight matrix)")
            kw[names[tok]] = r.float32(tok)
        W = r.matrix("weight matrix")
        _check_shape(r, "weight matrix", W, (output_dim, input_dim))
        b = r.vector("bias vector")
        _check_shape(r, "bias vector", b, (output_dim,))
        return cls(input_dim, output_dim, W, b, **kw)

    def info(self, host):
        g = "{:.6g}".format
        return (f"\n  linearity{moment_statistics(host['W'])}, lr-coef {g(self.learn_rate_coef)}, "
                f"max-norm {g(self.max_norm)}\n  bias{moment_statistics(host['b'])}, "
                f"lr-coef {g(self.bias_learn_rate_coef)}")


class LinearTransform(Component):
    """Y = X W^T; <LearnRateCoef>."""

    marker = "<LinearTransform>"
    updatable = True

    def __init__(self, input_dim: int, output_dim: int, W=None, learn_rate_coef: float = 1.0):
        super().__init__(input_dim, output_dim)
        self.learn_rate_coef = np.float32(learn_rate_coef)
        self._set_host({"W": W})

    def param_specs(self):
        return [("W", (self.output_dim, self.input_dim))]

    def propagate(self, be, x, y):
        be.gemm(x, self.params["W"], y, trans_b=True)

    def backpropagate(self, be, x, y, dy, dx):
        if dx is not None:
            be.gemm(dy, self.params["W"], dx)

    def accumulate_gradient(self, be, x, dy):
        be.gemm(dy, x, self.grads["W"], trans_a=True)

    def update(self, be, opts, num_frames):
        # LinearTransform::Update applies L2 and the L1 threshold with the plain learning rate
        # and only the step with lr * coef: pass l2/coef and l1/coef so lr_eff*l2_eff = lr*l2.
        lr = float(opts.learn_rate)
        coef = float(self.learn_rate_coef)
        W, g, v = self.params["W"], self.grads["W"], self.velocity["W"]
        if coef != 0.0:
            be.sgd_update(W, g, v, lr * coef, opts.momentum, l2=opts.l2_penalty / coef,
                          l1=opts.l1_penalty / coef, num_frames=num_frames)
            return
        be.scale(v, opts.momentum)  # frozen weights: momentum and weight decay only
        be.axpy(1.0, g, v)
        if opts.l2_penalty != 0.0:
            be.scale(W, 1.0 - lr * opts.l2_penalty * num_frames)

    def write_data(self, w, host):
        w.token("<LearnRateCoef>")
        w.float32(self.learn_rate_coef)
        w.newline()
        w.matrix(host["W"])

    @classmethod
    def read_data(cls, r, input_dim, output_dim):
        kw = {}
        while r.peek_char() == "<":
            tok = r.token("<LearnRateCoef>")
            if tok != "<LearnRateCoef>":
                raise r.fail("unknown token", f"'{tok[:40]}' (expected <LearnRateCoef> or the "
                             "weight matrix)")
            kw["learn_rate_coef"] = r.float32(tok)
        W = r.matrix("weight matrix")
        _check_shape(r, "weight matrix", W, (output_dim, input_dim))
        return cls(input_dim, output_dim, W, **kw)

    def info(self, host):
        return (f"\n  linearity{moment_statistics(host['W'])}, "
                f"lr-coef {'{:.6g}'.format(self.learn_rate_coef)}")


class _Activation(Component):
    @classmethod
    def read_data(cls, r, input_dim, output_dim):
        if input_dim != output_dim:
            raise r.fail(f"bad {cls.marker}", f"input dim {input_dim} != output dim {output_dim}")
        return cls(input_dim, output_dim)


class Sigmoid(_Activation):
    marker = "<Sigmoid>"

    def propagate(self, be, x, y):
        be.sigmoid(x, y)

    def backpropagate(self, be, x, y, dy, dx):
        if dx is not None:
            be.sigmoid_backward(y, dy, dx)


class Tanh(_Activation):
    marker = "<Tanh>"

    def propagate(self, be, x, y):
        be.tanh(x, y)

    def backpropagate(self, be, x, y, dy, dx):
        if dx is not None:
            be.tanh_backward(y, dy, dx)


class Softmax(_Activation):
    """Row softmax. Backward is the true Jacobian; nnet1 instead passes the diff through,
    because its loss hands over the derivative w.r.t. the logits. Training here does the same
    by stopping the forward pass before the final Softmax (``through_softmax=False``) and
    using ``Backend.softmax_xent``."""

    marker = "<Softmax>"

    def propagate(self, be, x, y):
        be.softmax(x, y)

    def backpropagate(self, be, x, y, dy, dx):
        if dx is not None:
            hostops.softmax_backward(be, y, dy, dx)


class Splice(Component):
    """Frames of ONE utterance spliced with ``offsets`` (edge frames replicated, cu::Splice)."""

    marker = "<Splice>"

    def __init__(self, input_dim: int, output_dim: int, offsets=None):
        super().__init__(input_dim, output_dim)
        off = np.array([0] if offsets is None else offsets, dtype=np.int32).ravel()
        if off.size * self.input_dim != self.output_dim:
            raise NnetError(f"<Splice> {output_dim} {input_dim}: {off.size} frame offsets times "
                            f"input dim {input_dim} != output dim {output_dim}")
        self.offsets = off

    def propagate(self, be, x, y):
        hostops.splice(be, x, self.offsets, y)

    def backpropagate(self, be, x, y, dy, dx):
        if dx is not None:
            hostops.splice_backward(be, dy, self.offsets, dx)

    def write_data(self, w, host):
        w.int_vector(self.offsets)

    @classmethod
    def read_data(cls, r, input_dim, output_dim):
        off = r.int_vector("frame offsets")
        if off.size * input_dim != output_dim:
            raise r.fail("bad frame offsets", f"{off.size} offsets times input dim {input_dim} "
                         f"!= output dim {output_dim}")
        return cls(input_dim, output_dim, off)

    def info(self, host):
        return "\n  frame_offsets [ " + " ".join(str(int(o)) for o in self.offsets) + " ]"


class _Shift(Component):
    """AddShift/Rescale: one vector of input dim and an optional <LearnRateCoef>."""

    updatable = True
    _name: ClassVar[str] = ""

    def __init__(self, input_dim: int, output_dim: int | None = None, data=None,
                 learn_rate_coef: float = 1.0):
        super().__init__(input_dim, input_dim if output_dim is None else output_dim)
        if self.output_dim != self.input_dim:
            raise NnetError(f"{self.marker} {self.output_dim} {self.input_dim}: input and output "
                            "dims differ")
        self.learn_rate_coef = np.float32(learn_rate_coef)
        self._set_host({self._name: data})

    def param_specs(self):
        return [(self._name, (self.input_dim,))]

    def update(self, be, opts, num_frames):
        # AddShift/Rescale::Update: plain gradient step, no momentum, no L1/L2.
        n = self._name
        be.sgd_update(self.params[n], self.grads[n], self.velocity[n],
                      opts.learn_rate * float(self.learn_rate_coef), 0.0)

    def write_data(self, w, host):
        w.token("<LearnRateCoef>")
        w.float32(self.learn_rate_coef)
        w.vector(host[self._name])

    @classmethod
    def read_data(cls, r, input_dim, output_dim):
        kw = {}
        if r.peek_char() == "<":
            r.expect("<LearnRateCoef>")
            kw["learn_rate_coef"] = r.float32("<LearnRateCoef>")
        v = r.vector(f"{cls._name} vector")
        _check_shape(r, f"{cls._name} vector", v, (input_dim,))
        if input_dim != output_dim:
            raise r.fail(f"bad {cls.marker}", f"input dim {input_dim} != output dim {output_dim}")
        return cls(input_dim, output_dim, v, **kw)

    def info(self, host):
        return (f"\n  {self._name}_data{moment_statistics(host[self._name])}, "
                f"lr-coef {'{:.6g}'.format(self.learn_rate_coef)}")


class AddShift(_Shift):
    """Y = X + shift (row-broadcast); global mean normalisation in the feature transform."""

    marker = "<AddShift>"
    _name = "shift"

    def propagate(self, be, x, y):
        be.copy(y, x)
        be.add_bias(y, self.params["shift"])

    def backpropagate(self, be, x, y, dy, dx):
        if dx is not None:
            be.copy(dx, dy)

    def accumulate_gradient(self, be, x, dy):
        be.sum_rows(dy, self.grads["shift"])


class Rescale(_Shift):
    """Y = X * scale (per column); global variance normalisation in the feature transform."""

    marker = "<Rescale>"
    _name = "scale"

    def propagate(self, be, x, y):
        hostops.mul_cols(be, x, self.params["scale"], y)

    def backpropagate(self, be, x, y, dy, dx):
        if dx is not None:
            hostops.mul_cols(be, dy, self.params["scale"], dx)

    def accumulate_gradient(self, be, x, dy):
        hostops.rescale_grad(be, dy, x, self.grads["scale"])


class Rbm(Component):
    """An RBM (nnet-rbm.h): forward is the hidden probabilities (affine, + sigmoid when the
    hidden units are Bernoulli). It is trained by CD-1 (nnetmix.rbm), not backprop; for a DNN,
    :meth:`to_feedforward` gives Kaldi's WriteAsNnet: AffineTransform (+ Sigmoid)."""

    marker = "<Rbm>"
    TYPES = ("bern", "gauss")

    def __init__(self, input_dim: int, output_dim: int, W=None, vis_bias=None, hid_bias=None,
                 vis_type: str = "bern", hid_type: str = "bern"):
        super().__init__(input_dim, output_dim)
        for t in (vis_type, hid_type):
            if t not in self.TYPES:
                raise NnetError(f"<Rbm>: unit type '{t}', expected bern or gauss")
        self.vis_type, self.hid_type = vis_type, hid_type
        self._set_host({"W": W, "hid_bias": hid_bias, "vis_bias": vis_bias})

    def param_specs(self):
        return [("W", (self.output_dim, self.input_dim)), ("hid_bias", (self.output_dim,)),
                ("vis_bias", (self.input_dim,))]

    def propagate(self, be, x, y):
        be.gemm(x, self.params["W"], y, trans_b=True)
        if self.hid_type == "bern":
            be.bias_sigmoid(y, self.params["hid_bias"], y)
        else:
            be.add_bias(y, self.params["hid_bias"])

    def backpropagate(self, be, x, y, dy, dx):
        raise NnetError("<Rbm> cannot be trained by backpropagation (read the network with "
                        "rbm_to_affine=True, or convert it with nnet-copy)")

    def to_feedforward(self, host: dict[str, np.ndarray]) -> list[Component]:
        comps: list[Component] = [AffineTransform(self.input_dim, self.output_dim, host["W"],
                                                  host["hid_bias"])]
        if self.hid_type == "bern":
            comps.append(Sigmoid(self.output_dim, self.output_dim))
        return comps

    def write_data(self, w, host):
        w.token(self.vis_type)
        w.token(self.hid_type)
        w.matrix(host["W"])
        w.vector(host["vis_bias"])
        w.vector(host["hid_bias"])

    @classmethod
    def read_data(cls, r, input_dim, output_dim):
        vis = r.token("visible unit type (bern or gauss)")
        hid = r.token("hidden unit type (bern or gauss)")
        for t in (vis, hid):
            if t not in cls.TYPES:
                raise r.fail("bad <Rbm> unit type", f"expected bern or gauss, got '{t[:40]}'")
        W = r.matrix("weight matrix")
        _check_shape(r, "weight matrix", W, (output_dim, input_dim))
        vb = r.vector("visible bias")
        _check_shape(r, "visible bias", vb, (input_dim,))
        hb = r.vector("hidden bias")
        _check_shape(r, "hidden bias", hb, (output_dim,))
        return cls(input_dim, output_dim, W, vb, hb, vis, hid)

    def info(self, host):
        return (f"\n  vis_type {self.vis_type}, hid_type {self.hid_type}"
                f"\n  vis_hid{moment_statistics(host['W'])}"
                f"\n  vis_bias{moment_statistics(host['vis_bias'])}"
                f"\n  hid_bias{moment_statistics(host['hid_bias'])}")


COMPONENT_TYPES: dict[str, type[Component]] = {
    c.marker.lower(): c for c in (AffineTransform, LinearTransform, Sigmoid, Tanh, Softmax,
                                  Splice, AddShift, Rescale, Rbm)}


def component_type(marker: str) -> type[Component] | None:
    """The class for a marker; case-insensitive as Component::MarkerToType."""
    return COMPONENT_TYPES.get(marker.lower())


def register_component(cls: type[Component], *aliases: str) -> type[Component]:
    """Add a component class defined in another module (prelu_dropout.py, recurrent.py) and the
    older markers it is read under; its module registers it at import, and the package imports
    every such module."""
    for m in (cls.marker, *aliases):
        COMPONENT_TYPES[m.lower()] = cls
    return cls
