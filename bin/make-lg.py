#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""make-lg.py: the LG step of Kaldi's utils/mkgraph.sh in one tool."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Composes the lexicon with the grammar and optimizes the result, as Kaldi's mkgraph.sh pipe
  fsttablecompose L_disambig.fst G.fst | fstdeterminizestar --use-log=true |
  fstminimizeencoded | fstpushspecial > LG.fst

Usage: make-lg.py [options] <L_disambig.fst> <G.fst> <LG.fst-out>
 e.g.: make-lg.py data/lang_test/L_disambig.fst data/lang_test/G.fst data/lang_test/tmp/LG.fst
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="make-lg.py")
    parser.register("push-special", True, "If true, push weights as fstpushspecial does")

    def body(opts, args):
        import logging
        from nnetmix.decode.mkgraph import compile_lg
        n, a = compile_lg(args[0], args[1], args[2], opts.push_special)
        logging.getLogger("make-lg").info("Wrote %s: %d states, %d arcs", args[2], n, a)
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
