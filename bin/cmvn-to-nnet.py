#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""cmvn-to-nnet.py: Kaldi's cmvn-to-nnet (src/nnetbin/cmvn-to-nnet.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Convert cmvn-stats into <AddShift> and <Rescale> components.

Usage: cmvn-to-nnet.py [options] <transf-in> <nnet-out>
 e.g.: cmvn-to-nnet.py --binary=false transf.mat nnet.mdl"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="cmvn-to-nnet.py")
    p.register("binary", False, "Write output in binary mode")
    p.register("std-dev", 1.0, "Standard deviation of the output.")
    p.register("var-floor", 1e-10, "Floor the variance, so the factors in <Rescale> are bounded.")
    p.register("learn-rate-coef", 0.0, "Initialize learning-rate coefficient to a value.")
    return p


def body(opts, args) -> int:
    import logging

    from nnetmix.kaldi import read_object
    from nnetmix.nnet import cmvn_to_nnet

    stats = read_object(args[0], "mat")
    cmvn_to_nnet(stats, opts.std_dev, opts.var_floor, opts.learn_rate_coef,
                 name=args[0]).write(args[1], binary=opts.binary)
    logging.getLogger("cmvn-to-nnet").info("Written cmvn in 'nnet1' model to: %s", args[1])
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
