#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""decode-faster-mapped.py: Kaldi's decode-faster-mapped (src/bin/decode-faster-mapped.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Decode, reading log-likelihoods as matrices
 (model is needed only for the integer mappings in its transition-model)
Usage:   decode-faster-mapped.py [options] model-in fst-in loglikes-rspecifier words-wspecifier [alignments-wspecifier]
 e.g.: nnet-forward.py --class-frame-counts=ali_train_pdf.counts final.nnet scp:feats.scp ark:- | \\
   decode-faster-mapped.py --acoustic-scale=0.1 final.mdl HCLG.fst ark:- ark,t:words.txt
"""


def main(argv=None) -> int:
    from nnetmix.decode.decoder import FasterDecoderConfig
    parser = OptionParser(USAGE, prog="decode-faster-mapped.py")
    parser.register_group(FasterDecoderConfig)
    parser.register("binary", True, "Write output in binary mode (as Kaldi's, the "
                    "wspecifiers' ,t decides)")
    parser.register("word-symbol-table", "", "Symbol table for words [for debug output]")

    def body(opts, args):
        from nnetmix.decode.decoder import LatticeDecoder
        from nnetmix.decode.latgen import decode_faster, read_graph_and_words
        from nnetmix.kaldi import SequentialReader, read_transition_model

        tm = read_transition_model(args[0])
        hclg, syms = read_graph_and_words(args[1], tm, opts.word_symbol_table)
        decoder = LatticeDecoder(hclg, tm, parser.group(FasterDecoderConfig, opts).lattice_config())

        def items():
            with SequentialReader(args[2], "mat") as reader:
                yield from reader

        summ = decode_faster(decoder, items(), args[3], args[4] if len(args) > 4 else "",
                             word_syms=syms)
        return 0 if summ.num_done else 1

    return run_tool(parser, (4, 5), body, argv)


if __name__ == "__main__":
    sys.exit(main())
