#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""make-h-transducer.py: Kaldi's make-h-transducer (src/bin/make-h-transducer.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Make H transducer from transition-ids to context-dependent phones,
 without self-loops [use add-self-loops.py to add them]
(kaldi-hmm-gmm's get_h_transducer for monophone trees; any other tree, e.g. triphone,
through Kaldi's GetHTransducer written in nnetmix/hmm/h_transducer.py)

Usage:   make-h-transducer.py <ilabel-info-file> <tree-file> <transition-gmm/acoustic-model> <H-fst-out>
 e.g.: make-h-transducer.py --disambig-syms-out=exp/mono/graph/disambig_tid.int \\
   data/lang/tmp/ilabels_1_0 exp/mono/tree exp/mono/final.mdl exp/mono/graph/Ha.fst
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="make-h-transducer.py")
    parser.register("disambig-syms-out", "", "List of disambiguation symbols on input of "
                    "H [to be output from this program]")
    parser.register("transition-scale", 1.0, "Scale of transition probabilities (excluding "
                    "self-loops)")

    def body(opts, args):
        import logging
        from nnetmix.decode.mkgraph import make_h_transducer
        n = make_h_transducer(args[0], args[1], args[2], args[3], opts.disambig_syms_out,
                              opts.transition_scale)
        logging.getLogger("make-h-transducer").info("Wrote %s (%d states)", args[3], n)
        return 0

    return run_tool(parser, (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
