#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""rbm-convert-to-nnet.py: Kaldi's rbm-convert-to-nnet (src/nnetbin/rbm-convert-to-nnet.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Convert RBM to <affinetransform> and <sigmoid>
(every <Rbm> of the input; other components are copied as they are)
Usage:  rbm-convert-to-nnet.py [options] <rbm-in> <nnet-out>
e.g.: rbm-convert-to-nnet.py --binary=false rbm.mdl nnet.mdl"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="rbm-convert-to-nnet.py")
    p.register("binary", True, "Write output in binary mode")
    return p


def body(opts, args) -> int:
    import logging

    from nnetmix.nnet import read_nnet
    from nnetmix.rbm import rbm_to_nnet

    rbm_to_nnet(read_nnet(args[0])).write(args[1], binary=opts.binary)
    logging.getLogger("rbm-convert-to-nnet").info("Written model to %s", args[1])
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
