#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-copy.py: Kaldi's nnet-copy (src/nnetbin/nnet-copy.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copy Neural Network model (and possibly change binary/text format)

Usage: nnet-copy.py [options] <model-in> <model-out>
 e.g.: nnet-copy.py --binary=false nnet.mdl nnet_txt.mdl"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="nnet-copy.py")
    p.register("binary", True, "Write output in binary mode")
    p.register("remove-first-layers", 0, "Deprecated, please use --remove-first-components")
    p.register("remove-last-layers", 0, "Deprecated, please use --remove-last-components")
    p.register("remove-first-components", 0, "Remove N first Components from the Nnet")
    p.register("remove-last-components", 0, "Remove N last layers Components from the Nnet")
    p.register("rbm-to-affine", False, "Replace each <Rbm> by <AffineTransform> (+ <Sigmoid>)")
    p.register("dropout-rate", -1.0, "Probability that neuron is dropped(-1.0 keeps original "
               "value).")
    return p


def body(opts, args) -> int:
    import logging

    from nnetmix.errors import UsageError
    from nnetmix.nnet import read_nnet

    first = max(opts.remove_first_layers, opts.remove_first_components)
    last = max(opts.remove_last_layers, opts.remove_last_components)
    nnet = read_nnet(args[0], rbm_to_affine=opts.rbm_to_affine)
    if first < 0 or last < 0 or first + last > len(nnet):
        raise UsageError(f"cannot remove {first} first and {last} last components of a network "
                         f"of {len(nnet)} components ({args[0]})")
    if first or last:
        nnet = nnet.sub(first, len(nnet) - last)
    log = logging.getLogger("nnet-copy")
    if opts.dropout_rate != -1.0:
        if not 0.0 <= opts.dropout_rate < 1.0:
            raise UsageError(f"--dropout-rate={opts.dropout_rate} is outside [0, 1) (or -1 to "
                             "keep the rates)")
        nnet.set_dropout_rate(opts.dropout_rate, log)
    nnet.write(args[1], binary=opts.binary)
    log.info("Written 'nnet1' to %s", args[1])
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
