#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""make-hclga.py: the HCLGa step of Kaldi's utils/mkgraph.sh in one tool."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Composes H (without self-loops) with CLG and optimizes the result, as Kaldi's mkgraph.sh pipe
  fsttablecompose Ha.fst CLG.fst | fstdeterminizestar --use-log=true |
  fstrmsymbols disambig_tid.int | fstrmepslocal | fstminimizeencoded > HCLGa.fst
(epsilons are removed with the full rmepsilon, which keeps the language and weights).

Usage: make-hclga.py [options] <Ha.fst> <CLG.fst> <disambig-tid.int> <HCLGa.fst-out>
 e.g.: make-hclga.py exp/mono/graph/Ha.fst data/lang/tmp/CLG_1_0.fst \\
   exp/mono/graph/disambig_tid.int exp/mono/graph/HCLGa.fst
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="make-hclga.py")

    def body(opts, args):
        import logging
        from nnetmix.decode.mkgraph import compile_hclga
        n = compile_hclga(args[0], args[1], args[2], args[3])
        logging.getLogger("make-hclga").info("Wrote %s (%d states)", args[3], n)
        return 0

    return run_tool(parser, (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
