#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""lattice-determinize-pruned.py: Kaldi's lattice-determinize-pruned
(src/latbin/lattice-determinize-pruned.cc) on our lattice archives."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Determinize lattices, keeping only the best path (sequence of acoustic states)
for each input-symbol sequence.  This version does pruning as part of the
determinization algorithm, which is more efficient and prevents blowup.
See http://kaldi.sourceforge.net/lattices.html for more information on lattices.

Usage: lattice-determinize-pruned.py [options] lattice-rspecifier lattice-wspecifier
 e.g.: lattice-determinize-pruned.py --acoustic-scale=0.1 --beam=6.0 ark:in.lats ark:det.lats
"""


def main(argv=None) -> int:
    from nnetmix.decode.latrescore import DeterminizeToolOptions
    parser = OptionParser(USAGE, prog="lattice-determinize-pruned.py")
    parser.register_group(DeterminizeToolOptions)
    parser.register("minimize", False, "If true, push and minimize after determinization")
    parser.register("max-arcs", -1, "Maximum number of arcs in output FST (total, not per "
                    "state")
    parser.register("max-states", -1, "Maximum number of states in output FST (total, not per "
                    "state)")
    parser.register("max-loop", 500000, "Option used to detect a particular type of "
                    "determinization failure, typically due to invalid input (e.g., negative-"
                    "cost loops) (accepted; cycles are refused outright)")

    def body(opts, args):
        from nnetmix.decode.latrescore import determinize_lattices
        done, _ = determinize_lattices(args[0], args[1], opts.acoustic_scale, opts.beam,
                                       opts.max_states, opts.max_mem, opts.determinize_impl,
                                       opts.max_arcs, minimize=opts.minimize)
        return 0 if done else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
