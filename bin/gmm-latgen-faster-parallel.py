#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-latgen-faster-parallel.py: Kaldi's gmm-latgen-faster-parallel
(src/gmmbin/gmm-latgen-faster-parallel.cc): gmm-latgen-faster with --num-threads decoding
threads, outputs written in input order (identical archives with any number of threads)."""
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Decode features using GMM-based model.  Uses multiple decoding threads,
but interface and behavior is otherwise the same as gmm-latgen-faster
Usage: gmm-latgen-faster-parallel.py [options] <model-in> <fst-in> <features-rspecifier> <lattice-wspecifier> [ <words-wspecifier> [<alignments-wspecifier>] ]
 e.g.: gmm-latgen-faster-parallel.py --num-threads=2 --decoder=faster --beam=13 \\
   --lattice-beam=8 --acoustic-scale=0.083333 exp/tri1/final.mdl exp/tri1/graph/HCLG.fst \\
   ark:feats.ark "ark:|gzip -c > lat.1.gz"
"""


def main(argv=None) -> int:
    from nnetmix.decode.decoder import LatticeDecoderConfig
    from nnetmix.decode.gmmframes import GmmLikelihoodOptions
    from nnetmix.decode.sequencer import TaskSequencerConfig
    parser = OptionParser(USAGE, prog="gmm-latgen-faster-parallel.py")
    parser.register_group(LatticeDecoderConfig)
    parser.register_group(TaskSequencerConfig)
    parser.register_group(GmmLikelihoodOptions)
    parser.register("word-symbol-table", "", "Symbol table for words [for debug output]")

    def body(opts, args):
        from nnetmix.decode.latgen import gmm_latgen_files
        summ = gmm_latgen_files(*args[:4], args[4] if len(args) > 4 else "",
                                args[5] if len(args) > 5 else "",
                                parser.group(LatticeDecoderConfig, opts), opts.word_symbol_table,
                                parser.group(GmmLikelihoodOptions, opts),
                                parser.group(TaskSequencerConfig, opts))
        return 0 if summ.num_done else 1

    return run_tool(parser, (4, 6), body, argv)


if __name__ == "__main__":
    sys.exit(main())
