"""Network prototypes as Kaldi's utils/nnet/make_nnet_proto.py writes them, line for line.

The numbers and their rationale are Kaldi's:

* Glorot scaling: stddev = factor * 35 * sqrt(2 / (dim_in + dim_out)) (35 gives ~1.0 in the inner
  layers of a 1024-wide net), off with ``with_glorot=False``.
* The first layer's stddev is multiplied by sqrt(1/12) (the stddev of U[0,1]): input features
  are ~N(0,1), sigmoid outputs ~U[0,1] (``smaller_input_weights``).
* Hidden biases U(mean - range/2, mean + range/2), by default [-4, 0]; max-norm on hidden
  layers only.
* The output layer: bias 0 (mean 0, range 0), <LearnRateCoef> 1, <BiasLearnRateCoef> 0.1.
* A bottleneck (``bottleneck_dim``) is a <LinearTransform> with 0.75x stddev and, with the
  bottleneck trick, learning-rate coefficients 0.1.

* ``with_dropout``: a <Dropout> line (with ``dropout_opts``, e.g. ``<DropoutRate>_0.2``) after
  every hidden non-linearity, not on the no-hidden-layer bottleneck path (as Kaldi).
* ``activation_type="<ParametricRelu>"`` with ``hid_bias_mean=0 hid_bias_range=0``,
  ``with_glorot=False``, ``smaller_input_weights=False`` is Kaldi's ReLU DNN recipe
  (egs/rm/s5/local/nnet/run_dnn_fbank_relu.sh); alpha and beta stay fixed unless
  ``activation_opts`` gives learn-rate coefficients.

BlockSoftmax is not a component here, so its option is not offered.
"""
from __future__ import annotations

import dataclasses
import math

from nnetmix.errors import UsageError

__all__ = ["ProtoOptions", "make_nnet_proto"]


@dataclasses.dataclass
class ProtoOptions:
    """Options of make_nnet_proto.py (booleans named as the positive property)."""

    with_softmax: bool = True
    activation_type: str = "<Sigmoid>"
    activation_opts: str = ""
    hid_bias_mean: float = -2.0
    hid_bias_range: float = 4.0
    param_stddev_factor: float = 0.1
    with_glorot: bool = True
    smaller_input_weights: bool = True
    bottleneck_trick: bool = True
    max_norm: float = 0.0
    affine_opts: str = ""
    bottleneck_dim: int = 0
    with_dropout: bool = False
    dropout_opts: str = ""


def make_nnet_proto(feat_dim: int, num_leaves: int, num_hid_layers: int, num_hid_neurons: int,
                    o: ProtoOptions | None = None) -> str:
    """The prototype text (lines ending in newlines), exactly as make_nnet_proto.py prints it."""
    o = o or ProtoOptions()
    if feat_dim <= 0 or num_leaves <= 0 or num_hid_layers < 0 or num_hid_neurons <= 0:
        raise UsageError(f"make_nnet_proto: expected feat-dim > 0, num-leaves > 0, "
                         f"num-hid-layers >= 0, num-hid-neurons > 0, got {feat_dim} {num_leaves} "
                         f"{num_hid_layers} {num_hid_neurons}")
    if o.bottleneck_dim < 0:
        raise UsageError(f"make_nnet_proto: bottleneck dim {o.bottleneck_dim} < 0")
    # make_nnet_proto.py's hack: multi-word options have their words joined by '_'
    act_opts = o.activation_opts.replace("_", " ")
    aff_opts = o.affine_opts.replace("_", " ")
    drop_opts = o.dropout_opts.replace("_", " ")
    f = o.param_stddev_factor
    lines: list[str] = []
    p = lines.append

    def glorot(d1: int, d2: int) -> float:
        return 35.0 * math.sqrt(2.0 / (d1 + d2)) if o.with_glorot else 1.0

    def activation(dim: int, dropout: bool = True) -> None:
        p("%s <InputDim> %d <OutputDim> %d %s" % (o.activation_type, dim, dim, act_opts))
        if dropout and o.with_dropout:
            p("<Dropout> <InputDim> %d <OutputDim> %d %s" % (dim, dim, drop_opts))

    def bottleneck(d_in: int, bn: int, hid: int, extra: str, dropout: bool) -> None:
        if o.bottleneck_trick:
            p("<LinearTransform> <InputDim> %d <OutputDim> %d <ParamStddev> %f <LearnRateCoef> %f"
              % (d_in, bn, f * glorot(d_in, bn) * 0.75, 0.1))
            p("<AffineTransform> <InputDim> %d <OutputDim> %d <BiasMean> %f <BiasRange> %f "
              "<ParamStddev> %f <LearnRateCoef> %f <BiasLearnRateCoef> %f <MaxNorm> %f%s"
              % (bn, hid, o.hid_bias_mean, o.hid_bias_range, f * glorot(bn, hid) * 0.75, 0.1,
                 0.1, o.max_norm, extra))
        else:
            p("<LinearTransform> <InputDim> %d <OutputDim> %d <ParamStddev> %f"
              % (d_in, bn, f * glorot(d_in, bn)))
            p("<AffineTransform> <InputDim> %d <OutputDim> %d <BiasMean> %f <BiasRange> %f "
              "<ParamStddev> %f <MaxNorm> %f%s"
              % (bn, hid, o.hid_bias_mean, o.hid_bias_range, f * glorot(bn, hid), o.max_norm,
                 extra))
        activation(hid, dropout)

    def softmax() -> None:
        if o.with_softmax:
            p("<Softmax> <InputDim> %d <OutputDim> %d" % (num_leaves, num_leaves))

    def output_layer(d_in: int) -> None:
        p("<AffineTransform> <InputDim> %d <OutputDim> %d <BiasMean> %f <BiasRange> %f "
          "<ParamStddev> %f <LearnRateCoef> %f <BiasLearnRateCoef> %f"
          % (d_in, num_leaves, 0.0, 0.0, f * glorot(d_in, num_leaves), 1.0, 0.1))

    if num_hid_layers == 0 and o.bottleneck_dim != 0:
        # (no affine_opts on this path in make_nnet_proto.py)
        bottleneck(feat_dim, o.bottleneck_dim, num_hid_neurons, "", False)
        output_layer(num_hid_neurons)
        softmax()
        p("</NnetProto>")
    elif num_hid_layers == 0:
        p("<AffineTransform> <InputDim> %d <OutputDim> %d <BiasMean> %f <BiasRange> %f "
          "<ParamStddev> %f" % (feat_dim, num_leaves, 0.0, 0.0, f * glorot(feat_dim, num_leaves)))
        softmax()
        p("</NnetProto>")
    else:
        scale = math.sqrt(1.0 / 12.0) if o.smaller_input_weights else 1.0
        p("<AffineTransform> <InputDim> %d <OutputDim> %d <BiasMean> %f <BiasRange> %f "
          "<ParamStddev> %f <MaxNorm> %f %s"
          % (feat_dim, num_hid_neurons, o.hid_bias_mean, o.hid_bias_range,
             f * glorot(feat_dim, num_hid_neurons) * scale, o.max_norm, aff_opts))
        activation(num_hid_neurons)
        for _ in range(num_hid_layers - 1):
            p("<AffineTransform> <InputDim> %d <OutputDim> %d <BiasMean> %f <BiasRange> %f "
              "<ParamStddev> %f <MaxNorm> %f %s"
              % (num_hid_neurons, num_hid_neurons, o.hid_bias_mean, o.hid_bias_range,
                 f * glorot(num_hid_neurons, num_hid_neurons), o.max_norm, aff_opts))
            activation(num_hid_neurons)
        if o.bottleneck_dim != 0:
            bottleneck(num_hid_neurons, o.bottleneck_dim, num_hid_neurons, " " + aff_opts, True)
        output_layer(num_hid_neurons)
        softmax()
    return "".join(line + "\n" for line in lines)
