#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-transform-means.py: Kaldi's gmm-transform-means (src/gmmbin/gmm-transform-means.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Transform GMM means with linear or affine transform
Usage:  gmm-transform-means.py <transform-matrix> <model-in> <model-out>
e.g.: gmm-transform-means.py 2.mat 2.mdl 3.mdl
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-transform-means.py")
    parser.register("binary", True, "Write output in binary mode")

    def body(opts, args):
        from nnetmix.hmm.gmm_tools import read_model, transform_means, write_model
        from nnetmix.kaldi import read_object

        model = read_model(args[1])
        transform_means(model, read_object(args[0], "mat"))
        write_model(args[2], model.tm, list(model.am), opts.binary)
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
