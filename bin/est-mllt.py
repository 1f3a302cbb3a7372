#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""est-mllt.py: Kaldi's est-mllt (src/bin/est-mllt.cc); text output by default, as Kaldi's."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Do MLLT update
Usage:  est-mllt.py [options] <mllt-mat-out> <stats-in1> <stats-in2> ...
e.g.: est-mllt.py 2.mat 1a.macc 1b.macc ...
Note: use compose-transforms <mllt-mat-out> <prev-mllt-mat> to combine with previous
  MLLT or LDA transform, if any, and
  gmm-transform-means to apply <mllt-mat-out> to GMM means.
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="est-mllt.py")
    parser.register("binary", False, "Write output in binary mode")

    def body(opts, args):
        from nnetmix.hmm.mllt import est_mllt

        est_mllt(args[0], args[1:], opts.binary)
        return 0

    return run_tool(parser, (2, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
