#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""latgen-faster-mapped.py: Kaldi's latgen-faster-mapped (src/bin/latgen-faster-mapped.cc)."""
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Generate lattices, reading log-likelihoods as matrices
 (model is needed only for the integer mappings in its transition-model)
Usage: latgen-faster-mapped.py [options] <trans-model-in> <fst-in> <loglikes-rspecifier> <lattice-wspecifier> [ <words-wspecifier> [<alignments-wspecifier>] ]
 e.g.: nnet-forward.py --class-frame-counts=ali_train_pdf.counts final.nnet scp:feats.scp ark:- | \\
   latgen-faster-mapped.py --beam=13 --lattice-beam=8 --acoustic-scale=0.1 \\
   --word-symbol-table=words.txt final.mdl HCLG.fst ark:- "ark:|gzip -c > lat.1.gz"
"""


def main(argv=None) -> int:
    from nnetmix.decode.decoder import LatticeDecoderConfig
    parser = OptionParser(USAGE, prog="latgen-faster-mapped.py")
    parser.register_group(LatticeDecoderConfig)
    parser.register("word-symbol-table", "", "Symbol table for words [for debug output]")

    def body(opts, args):
        from nnetmix.decode.decoder import LatticeDecoder, read_decoding_graph
        from nnetmix.decode.latgen import latgen, read_word_symbols
        from nnetmix.kaldi import SequentialReader, read_transition_model

        tm = read_transition_model(args[0])
        hclg = read_decoding_graph(args[1])
        syms = read_word_symbols(opts.word_symbol_table) if opts.word_symbol_table else None
        decoder = LatticeDecoder(hclg, tm, parser.group(LatticeDecoderConfig, opts))

        def items():
            with SequentialReader(args[2], "mat") as reader:
                yield from reader

        summ = latgen(decoder, items(), args[3], args[4] if len(args) > 4 else "",
                      args[5] if len(args) > 5 else "", syms)
        return 0 if summ.num_done else 1

    return run_tool(parser, (4, 6), body, argv)


if __name__ == "__main__":
    sys.exit(main())
