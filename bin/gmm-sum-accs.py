#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-sum-accs.py: Kaldi's gmm-sum-accs (src/gmmbin/gmm-sum-accs.cc), on nnetmix stats files."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Sum multiple accumulated stats files for GMM training.
Usage: gmm-sum-accs.py [options] <stats-out> <stats-in1> <stats-in2> ...
E.g.: gmm-sum-accs.py 1.acc 1.1.acc 1.2.acc
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-sum-accs.py")
    parser.register("binary", True, "Write output in binary mode (stats are always npz)")

    def body(opts, args):
        from nnetmix.hmm.gmm_tools import sum_accs

        sum_accs(args[0], args[1:])
        return 0

    return run_tool(parser, (2, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
