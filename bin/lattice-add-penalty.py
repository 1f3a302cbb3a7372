#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""lattice-add-penalty.py: Kaldi's lattice-add-penalty (src/latbin/lattice-add-penalty.cc) on CompactLattice archives."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Add word insertion penalty to the lattice.
Note: penalties are negative log-probs, base e, and are added to the
'language model' part of the cost.
Usage: lattice-add-penalty.py [options] <lattice-rspecifier> <lattice-wspecifier>
 e.g.: lattice-add-penalty.py --word-ins-penalty=1.0 "ark:gunzip -c lat.1.gz|" ark:-
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="lattice-add-penalty.py")
    parser.register("word-ins-penalty", 0.0, "Word insertion penalty")

    def body(opts, args):
        from nnetmix.decode.lattools import lattice_add_penalty
        lattice_add_penalty(args[0], args[1], opts.word_ins_penalty)
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
