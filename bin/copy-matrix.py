#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""copy-matrix.py: Kaldi's copy-matrix (src/bin/copy-matrix.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copy matrices, or archives of matrices (e.g. features or transforms)
Also see copy-feats which has other format options
Matrices are read as float or double (CMVN stats) and written as float, as Kaldi's BaseFloat.

Usage: copy-matrix.py [options] <matrix-in-rspecifier> <matrix-out-wspecifier>
  or: copy-matrix.py [options] <matrix-in-rxfilename> <matrix-out-wxfilename>
 e.g.: copy-matrix.py --binary=false 1.mat -
   copy-matrix.py ark:2.trans ark,t:-
See also: copy-feats.py"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="copy-matrix.py")
    p.register("binary", True, "Write in binary mode (only relevant if output is a wxfilename)")
    p.register("scale", 1.0, "This option can be used to scale the matrices being copied.")
    p.register("apply-log", False, "This option can be used to apply log on the matrices. Must "
               "be avoided if matrix has negative quantities.")
    p.register("apply-exp", False, "This option can be used to apply exp on the matrices")
    p.register("apply-power", 1.0, "This option can be used to apply a power on the matrices")
    p.register("apply-softmax-per-row", False, "This option can be used to apply softmax per row "
               "of the matrices")
    return p


def body(opts, args) -> int:
    from nnetmix.kaldi.copy import copy_any, is_rspecifier
    from nnetmix.kaldi.vector_ops import MatrixEdits
    edits = MatrixEdits(opts.scale, opts.apply_log, opts.apply_exp, opts.apply_power,
                        opts.apply_softmax_per_row)
    done = copy_any(args[0], args[1], "mat", opts.binary, edits, what="matrices", one="matrix")
    return 0 if done or not is_rspecifier(args[0]) else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
