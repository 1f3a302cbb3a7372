#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""make-nnet-proto.py: Kaldi's utils/nnet/make_nnet_proto.py, printing the same prototype."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Generate an nnet1 prototype (to be initialized by nnet-initialize.py) on stdout.

Usage: make-nnet-proto.py [options] <feat-dim> <num-leaves> <num-hid-layers> <num-hid-neurons> >nnet-proto-file
 e.g.: make-nnet-proto.py 440 1502 6 1024 >nnet.proto"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="make-nnet-proto.py")
    p.register("no-softmax", False, "Do not put <Softmax> in the prototype")
    p.register("activation-type", "<Sigmoid>",
               "Select type of activation function : (<Sigmoid>|<Tanh>|<ParametricRelu>)")
    p.register("activation-opts", "", "Additional options for protoype of activation function "
               "(words joined by '_')")
    p.register("hid-bias-mean", -2.0, "Set bias for hidden activations")
    p.register("hid-bias-range", 4.0,
               "Set bias range for hidden activations (+/- 1/2 range around mean)")
    p.register("param-stddev-factor", 0.1,
               "Factor to rescale Normal distriburtion for initalizing weight matrices")
    p.register("no-glorot-scaled-stddev", False, "Do not scale the stddev by X.Glorot's "
               "factor sqrt(x/(dim_in+dim_out))")
    p.register("no-smaller-input-weights", False,
               "Disable 1/12 reduction of stddef in input layer")
    p.register("no-bottleneck-trick", False,
               "Disable smaller initial weights and learning rate around bottleneck")
    p.register("max-norm", 0.0, "Max radius of neuron-weights in L2 space (if longer weights get "
               "shrinked, not applied to last layer, 0.0 = disable)")
    p.register("affine-opts", "", "Additional options for protoype of affine tranform "
               "(words joined by '_')")
    p.register("bottleneck-dim", 0, "Make bottleneck network with desired bn-dim (0 = no bottleneck)")
    p.register("with-dropout", False, "Add <Dropout> after the non-linearity of hidden layer.")
    p.register("dropout-opts", "", "Extra options for dropout (words joined by '_', e.g. "
               "<DropoutRate>_0.2)")
    return p


def body(opts, args) -> int:
    from nnetmix.errors import UsageError
    from nnetmix.nnet import ProtoOptions, make_nnet_proto

    try:
        dims = [int(a) for a in args]
    except ValueError:
        raise UsageError(f"expected four integers, got {' '.join(args)}") from None
    o = ProtoOptions(with_softmax=not opts.no_softmax, activation_type=opts.activation_type,
                     activation_opts=opts.activation_opts, hid_bias_mean=opts.hid_bias_mean,
                     hid_bias_range=opts.hid_bias_range,
                     param_stddev_factor=opts.param_stddev_factor,
                     with_glorot=not opts.no_glorot_scaled_stddev,
                     smaller_input_weights=not opts.no_smaller_input_weights,
                     bottleneck_trick=not opts.no_bottleneck_trick, max_norm=opts.max_norm,
                     affine_opts=opts.affine_opts, bottleneck_dim=opts.bottleneck_dim,
                     with_dropout=opts.with_dropout, dropout_opts=opts.dropout_opts)
    sys.stdout.write(make_nnet_proto(*dims, o))
    sys.stdout.flush()
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
