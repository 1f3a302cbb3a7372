#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-info.py: Kaldi's nnet-info (src/nnetbin/nnet-info.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Print human-readable information about the neural network.
(topology, various weight statistics, etc.) It prints to stdout.

Usage: nnet-info.py [options] <nnet-in>
 e.g.: nnet-info.py 1.nnet"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="nnet-info.py")


def body(opts, args) -> int:
    import logging

    from nnetmix.nnet import read_nnet

    sys.stdout.write(read_nnet(args[0]).info())
    sys.stdout.flush()
    logging.getLogger("nnet-info").info("Printed info about %s", args[0])
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (1, 1), body, argv)


if __name__ == "__main__":
    sys.exit(main())
