#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-concat.py: Kaldi's nnet-concat (src/nnetbin/nnet-concat.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Concatenate Neural Networks (and possibly change binary/text format)

Usage: nnet-concat.py [options] <nnet-in1> <...> <nnet-inN> <nnet-out>
 e.g.: nnet-concat.py --binary=false nnet.1 nnet.2 nnet.1.2"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="nnet-concat.py")
    p.register("binary", True, "Write output in binary mode")
    return p


def body(opts, args) -> int:
    import logging

    from nnetmix.nnet import read_nnet

    log = logging.getLogger("nnet-concat")
    log.info("Reading %s", args[0])
    nnet = read_nnet(args[0])
    others = []
    for name in args[1:-1]:
        log.info("Concatenating %s", name)
        others.append(read_nnet(name))
    nnet.concat(*others).write(args[-1], binary=opts.binary)
    log.info("Written model to %s", args[-1])
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
