#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""lattice-copy.py: Kaldi's lattice-copy (src/latbin/lattice-copy.cc) on CompactLattice archives."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Copy lattices (e.g. useful for changing to text mode or changing
format to standard from compact lattice.)
Usage: lattice-copy.py [options] <lattice-rspecifier> <lattice-wspecifier>
 e.g.: lattice-copy.py "ark:gunzip -c lat.1.gz|" ark,t:-
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="lattice-copy.py")

    def body(opts, args):
        from nnetmix.decode.lattools import lattice_copy
        lattice_copy(args[0], args[1])
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
