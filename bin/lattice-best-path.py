#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""lattice-best-path.py: Kaldi's lattice-best-path (src/latbin/lattice-best-path.cc) on CompactLattice archives."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Generate 1-best path through lattices; output as transcriptions and alignments
Note: if you want output as FSTs, use lattice-1best; if you want output
with acoustic and LM scores, use lattice-1best | nbest-to-linear
Usage: lattice-best-path.py [options] <lattice-rspecifier> [ <transcriptions-wspecifier> [ <alignments-wspecifier>] ]
 e.g.: lattice-best-path.py --acoustic-scale=0.1 "ark:gunzip -c lat.1.gz|" ark,t:1.tra ark:1.ali
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="lattice-best-path.py")
    parser.register("acoustic-scale", 1.0, "Scaling factor for acoustic likelihoods")
    parser.register("lm-scale", 1.0, "Scaling factor for LM probabilities. Note: the ratio "
                    "acoustic-scale/lm-scale is all that matters.")
    parser.register("word-symbol-table", "", "Symbol table for words [for debug output]")

    def body(opts, args):
        from nnetmix.decode.latgen import read_word_symbols
        from nnetmix.decode.lattools import lattice_best_path
        syms = read_word_symbols(opts.word_symbol_table) if opts.word_symbol_table else None
        done, _fail = lattice_best_path(args[0], args[1] if len(args) > 1 else "",
                                        args[2] if len(args) > 2 else "", opts.acoustic_scale,
                                        opts.lm_scale, syms)
        return 0 if done else 1

    return run_tool(parser, (1, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
