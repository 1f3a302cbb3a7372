#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""lattice-to-post.py: Kaldi's lattice-to-post (src/latbin/lattice-to-post.cc) on CompactLattice
archives (the optional loglikes table is not written)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Do forward-backward and collect posteriors over lattices.
Usage: lattice-to-post.py [options] lats-rspecifier posts-wspecifier
 e.g.: lattice-to-post.py --acoustic-scale=0.1 ark:1.lats ark:1.post
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="lattice-to-post.py")
    parser.register("acoustic-scale", 1.0, "Scaling factor for acoustic likelihoods")
    parser.register("lm-scale", 1.0, 'Scaling factor for "graph costs" (including LM costs)')

    def body(opts, args):
        from nnetmix.decode.latpost import lattice_to_post

        done = lattice_to_post(args[0], args[1], opts.acoustic_scale, opts.lm_scale)
        return 0 if done else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
