#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-latgen-faster.py: Kaldi's gmm-latgen-faster (src/gmmbin/gmm-latgen-faster.cc)."""
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Generate lattices using GMM-based model.
Usage: gmm-latgen-faster.py [options] <model-in> <fst-in> <features-rspecifier> <lattice-wspecifier> [ <words-wspecifier> [<alignments-wspecifier>] ]
 e.g.: gmm-latgen-faster.py --beam=13 --lattice-beam=8 --acoustic-scale=0.083333 \\
   --word-symbol-table=exp/mono/graph/words.txt exp/mono/final.mdl exp/mono/graph/HCLG.fst \\
   ark:feats.ark "ark:|gzip -c > lat.1.gz"
"""


def main(argv=None) -> int:
    from nnetmix.decode.decoder import LatticeDecoderConfig
    from nnetmix.decode.gmmframes import GmmLikelihoodOptions
    parser = OptionParser(USAGE, prog="gmm-latgen-faster.py")
    parser.register_group(LatticeDecoderConfig)
    parser.register_group(GmmLikelihoodOptions)
    parser.register("word-symbol-table", "", "Symbol table for words [for debug output]")

    def body(opts, args):
        from nnetmix.decode.latgen import gmm_latgen_files
        summ = gmm_latgen_files(*args[:4], args[4] if len(args) > 4 else "",
                                args[5] if len(args) > 5 else "",
                                parser.group(LatticeDecoderConfig, opts), opts.word_symbol_table,
                                parser.group(GmmLikelihoodOptions, opts))
        return 0 if summ.num_done else 1

    return run_tool(parser, (4, 6), body, argv)


if __name__ == "__main__":
    sys.exit(main())
