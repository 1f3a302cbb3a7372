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
        from nnetmix.decode.latgen import mapped_latgen_files
        summ = mapped_latgen_files(*args[:4], args[4] if len(args) > 4 else "",
                                   args[5] if len(args) > 5 else "",
                                   parser.group(LatticeDecoderConfig, opts),
                                   opts.word_symbol_table)
        return 0 if summ.num_done else 1

    return run_tool(parser, (4, 6), body, argv)


if __name__ == "__main__":
    sys.exit(main())
