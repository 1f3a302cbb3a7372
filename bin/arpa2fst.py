#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""arpa2fst.py: Kaldi's arpa2fst (an ARPA language model to an OpenFst G), through kaldilm."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool
from nnetmix.lang.grammar import Arpa2FstOptions

USAGE = """
Convert an ARPA format language model into an FST (plain or gzipped ARPA).
Usage: arpa2fst.py [opts] <input-arpa> <output-fst>
 e.g.: arpa2fst.py --disambig-symbol=#0 --read-symbol-table=data/lang/words.txt lm/input.arpa G.fst
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="arpa2fst.py")
    parser.register_group(Arpa2FstOptions)

    def body(opts, args):
        import logging

        from nnetmix.lang.grammar import arpa2fst

        n = arpa2fst(args[0], args[1], parser.group(Arpa2FstOptions, opts))
        logging.getLogger("arpa2fst").info("Wrote %s (%d states) from %s", args[1], n, args[0])
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
