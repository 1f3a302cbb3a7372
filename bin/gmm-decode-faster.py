#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-decode-faster.py: Kaldi's gmm-decode-faster (src/gmmbin/gmm-decode-faster.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Decode features using GMM-based model.
Usage:  gmm-decode-faster.py [options] model-in fst-in features-rspecifier words-wspecifier [alignments-wspecifier [lattice-wspecifier]]
Note: lattices, if output, will just be linear sequences; use gmm-latgen-faster.py
  if you want "real" lattices.
 e.g.: gmm-decode-faster.py --beam=13 --acoustic-scale=0.083333 exp/mono/final.mdl \\
   exp/mono/graph/HCLG.fst ark:feats.ark ark,t:words.txt
"""


def main(argv=None) -> int:
    from nnetmix.decode.decoder import FasterDecoderConfig
    from nnetmix.decode.gmmframes import GmmLikelihoodOptions
    parser = OptionParser(USAGE, prog="gmm-decode-faster.py")
    parser.register_group(FasterDecoderConfig)
    parser.register_group(GmmLikelihoodOptions)
    parser.register("word-symbol-table", "", "Symbol table for words [for debug output]")

    def body(opts, args):
        from nnetmix.decode.decoder import LatticeDecoder
        from nnetmix.decode.latgen import decode_faster, gmm_loglikes_table, read_graph_and_words
        from nnetmix.kaldi import read_gmm_model

        tm, am = read_gmm_model(args[0])
        hclg, syms = read_graph_and_words(args[1], tm, opts.word_symbol_table)
        config = parser.group(FasterDecoderConfig, opts).lattice_config()
        decoder = LatticeDecoder(hclg, tm, config)
        summ = decode_faster(decoder, gmm_loglikes_table(am, args[0], args[2], parser.group(
                                 GmmLikelihoodOptions, opts)), args[3],
                             args[4] if len(args) > 4 else "", args[5] if len(args) > 5 else "",
                             syms)
        return 0 if summ.num_done else 1

    return run_tool(parser, (4, 6), body, argv)


if __name__ == "__main__":
    sys.exit(main())
