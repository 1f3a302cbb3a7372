#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""lattice-scale.py: Kaldi's lattice-scale (src/latbin/lattice-scale.cc) on CompactLattice archives."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Apply scaling to lattice weights
Usage: lattice-scale.py [options] <lattice-rspecifier> <lattice-wspecifier>
 e.g.: lattice-scale.py --lm-scale=0.0 ark:1.lats ark:scaled.lats
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="lattice-scale.py")
    parser.register("acoustic-scale", 1.0, "Scaling factor for acoustic likelihoods")
    parser.register("inv-acoustic-scale", 1.0, "An alternative way of setting the acoustic "
                    "scale: you can set its inverse.")
    parser.register("lm-scale", 1.0, "Scaling factor for graph/lm costs")
    parser.register("acoustic2lm-scale", 0.0, "Add this times original acoustic costs to LM "
                    "costs")
    parser.register("lm2acoustic-scale", 0.0, "Add this times original LM costs to acoustic "
                    "costs")

    def body(opts, args):
        from nnetmix.decode.lattools import lattice_scale
        lattice_scale(args[0], args[1], opts.acoustic_scale, opts.inv_acoustic_scale,
                      opts.lm_scale, opts.acoustic2lm_scale, opts.lm2acoustic_scale)
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
