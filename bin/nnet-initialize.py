#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-initialize.py: Kaldi's nnet-initialize (src/nnetbin/nnet-initialize.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Initialize Neural Network parameters according to a prototype (nnet1).

Usage: nnet-initialize.py [options] <nnet-prototype-in> <nnet-out>
 e.g.: nnet-initialize.py --binary=false nnet.proto nnet.init"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="nnet-initialize.py")
    p.register("binary", True, "Write output in binary mode")
    p.register("seed", 777, "Seed for random number generator")
    return p


def body(opts, args) -> int:
    import logging

    from nnetmix.nnet import init_nnet

    init_nnet(args[0], seed=opts.seed).write(args[1], binary=opts.binary)
    logging.getLogger("nnet-initialize").info("Written initialized model to %s", args[1])
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
