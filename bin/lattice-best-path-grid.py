#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""lattice-best-path-grid.py: nnetmix's own (Kaldi has none): the transcripts of
lattice-scale | lattice-add-penalty | lattice-best-path | int2sym.pl over a grid of LM weights
and word insertion penalties, reading the lattices once (local/score.sh)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Generate 1-best transcriptions of lattices for every language-model weight LMWT in
[min-lmwt, max-lmwt] and word insertion penalty WIP in a list, as the pipeline
  lattice-scale.py --inv-acoustic-scale=LMWT <lattice-rspecifier> ark:- |
  lattice-add-penalty.py --word-ins-penalty=WIP ark:- ark:- |
  lattice-best-path.py ark:- ark,t:- | utils/int2sym.pl -f 2- <word-symbol-table>
writes them (the same bytes), but reading the lattices once. One text file per
(LMWT, WIP): the output pattern with LMWT and WIP replaced in its file name.
nnetmix's own tool (Kaldi has none); local/score.sh uses it.
Usage: lattice-best-path-grid.py [options] <lattice-rspecifier> <transcriptions-pattern>
 e.g.: lattice-best-path-grid.py --min-lmwt=7 --max-lmwt=17 --word-ins-penalty=0.0,0.5,1.0 \\
         --word-symbol-table=exp/mono/graph/words.txt "ark:gunzip -c exp/mono/decode/lat.*.gz|" \\
         exp/mono/decode/scoring/LMWT.WIP.tra
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="lattice-best-path-grid.py")
    parser.register("min-lmwt", 7, "Smallest language-model weight (inverse acoustic scale)")
    parser.register("max-lmwt", 17, "Largest language-model weight")
    parser.register("word-ins-penalty", "0.0,0.5,1.0", "Comma-separated word insertion "
                    "penalties (each file name keeps the spelling given)")
    parser.register("word-symbol-table", "", "Symbol table for words (required)")

    def body(opts, args):
        from nnetmix.decode.bestpathgrid import ScoringGrid, lattice_best_path_grid
        from nnetmix.errors import UsageError
        if not opts.word_symbol_table:
            raise UsageError("--word-symbol-table is required (e.g. exp/mono/graph/words.txt)")
        grid = ScoringGrid.parse(opts.min_lmwt, opts.max_lmwt, opts.word_ins_penalty)
        summary = lattice_best_path_grid(args[0], grid, opts.word_symbol_table, args[1])
        worst = max(summary.failed.values())
        return 0 if summary.lattices and worst < summary.lattices else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
