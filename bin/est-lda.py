#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""est-lda.py: Kaldi's est-lda (src/bin/est-lda.cc), LdaEstimate::Estimate's options."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Estimate LDA transform using stats obtained with acc-lda.
Usage:  est-lda.py [options] <lda-matrix-out> <lda-acc-1> <lda-acc-2> ...
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="est-lda.py")
    parser.register("binary", True, "Write matrix in binary mode.")
    parser.register("write-full-matrix", "", "Write full LDA matrix to this location.")
    parser.register("dim", 40, "Dimension to project to with LDA")
    parser.register("allow-large-dim", False, "If true, allow an LDA dimension larger than the "
                    "number of classes.")
    parser.register("remove-offset", False, "If true, output an affine transform that makes "
                    "the projected data mean equal to zero.")
    parser.register("within-class-factor", 1.0, "If 1.0, do conventional LDA where the "
                    "within-class variance will be unit in the projected space.  May be set to "
                    "less than 1.0, which scales the features to have less variance, "
                    "particularly for dimensions where between-class variance is small; this "
                    "is a feature for neural net input.")

    def body(opts, args):
        from nnetmix.feat.lda import LdaOptions, est_lda

        est_lda(args[0], args[1:], LdaOptions(opts.dim, opts.allow_large_dim,
                                              opts.remove_offset, opts.within_class_factor),
                opts.binary, opts.write_full_matrix)
        return 0

    return run_tool(parser, (2, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
