#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-copy.py: Kaldi's gmm-copy (src/gmmbin/gmm-copy.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copy GMM based model (and possibly change binary/text format)
Usage:  gmm-copy.py [options] <model-in> <model-out>
e.g.:
 gmm-copy.py --binary=false 1.mdl 1_txt.mdl"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="gmm-copy.py")
    p.register("binary", True, "Write output in binary mode")
    p.register("copy-am", True, "Copy the acoustic model (AmDiagGmm object)")
    p.register("copy-tm", True, "Copy the transition model")
    return p


def body(opts, args) -> int:
    import logging
    from nnetmix.kaldi.diag_gmm import copy_gmm_model
    copy_gmm_model(args[0], args[1], opts.binary, opts.copy_tm, opts.copy_am)
    logging.getLogger("gmm-copy").info("Written model to %s", args[1])
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
