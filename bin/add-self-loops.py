#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""add-self-loops.py: Kaldi's add-self-loops (src/bin/add-self-loops.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Add self-loops and transition probabilities to transducer.  Input transducer
has transition-ids on the input side, but only the forward transitions, not the
self-loops.  Output transducer has transition-ids on the input side, but with
self-loops added.  The --reorder option controls whether the loop is added before
the forward transition (if false), or afterward (if true).  The default (true)
is recommended as the decoding will in that case be faster.

Usage:   add-self-loops.py [options] <transition-gmm/acoustic-model> <fst-in> <fst-out>
 e.g.: add-self-loops.py --self-loop-scale=0.1 1.mdl HCLGa.fst HCLG.fst
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="add-self-loops.py")
    parser.register("self-loop-scale", 1.0, "Scale for self-loop probabilities relative to LM.")
    parser.register("reorder", True, "If true, reorder symbols for more decoding efficiency")
    parser.register("tree", "", "The tree the model was built with (kaldi-hmm-gmm needs a "
                    "monophone tree to rebuild the transition model; other trees use nnetmix's "
                    "own AddSelfLoops); default: 'tree' beside the model")

    def body(opts, args):
        import logging
        from nnetmix.decode.mkgraph import add_self_loops_file
        n = add_self_loops_file(args[0], args[1], args[2], opts.self_loop_scale, opts.reorder,
                                opts.tree)
        logging.getLogger("add-self-loops").info("Wrote %s (%d states)", args[2], n)
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
