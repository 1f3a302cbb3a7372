#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""copy-transition-model.py: Kaldi's copy-transition-model (src/bin/copy-transition-model.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copies a transition model (this can be used to separate transition 
 models from the acoustic models they are written with.
Usage:  copy-transition-model.py [options] <transition-model or model file> <transition-model-out>
e.g.: 
 copy-transition-model.py --binary=false 1.mdl 1.txt"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="copy-transition-model.py")
    p.register("binary", True, "Write output in binary mode.")
    return p


def body(opts, args) -> int:
    import logging
    from nnetmix.kaldi.transition_model import read_transition_model, write_transition_model
    write_transition_model(args[1], read_transition_model(args[0]), opts.binary)
    logging.getLogger("copy-transition-model").info("Copied transition model.")
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
