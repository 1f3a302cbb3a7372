"""The command line shared by gmm-latgen-faster.py, latgen-faster-mapped.py and their -parallel
forms (Kaldi's gmm-latgen-faster-parallel, latgen-faster-mapped-parallel).

The four binaries differ only in where the log-likelihoods come from (a GMM model and features,
or matrices read with a transition model) and in --num-threads (Kaldi's TaskSequencerConfig), so
one function builds the parser and runs the decoding for each; each bin/ file keeps its own
usage text.
"""
from __future__ import annotations

from typing import Sequence

from nnetmix.cli.binary import OptionParser, run_tool
from nnetmix.decode.decoder import LatticeDecoderConfig
from nnetmix.decode.gmmframes import GmmLikelihoodOptions
from nnetmix.decode.latgen import gmm_latgen_files, mapped_latgen_files
from nnetmix.decode.sequencer import TaskSequencerConfig

__all__ = ["latgen_main"]


def latgen_main(usage: str, prog: str, gmm: bool, parallel: bool,
                argv: Sequence[str] | None = None) -> int:
    """``[options] <model> <fst> <rspecifier> <lattice-wspecifier> [<words> [<ali>]]``: a GMM
    model and features (``gmm``) or a transition model and log-likelihood matrices;
    ``parallel`` adds --num-threads / --num-threads-total and Kaldi's -parallel log lines."""
    parser = OptionParser(usage, prog=prog)
    parser.register_group(LatticeDecoderConfig)
    if parallel:
        parser.register_group(TaskSequencerConfig)
    if gmm:
        parser.register_group(GmmLikelihoodOptions)
    parser.register("word-symbol-table", "", "Symbol table for words [for debug output]")

    def body(opts, args):
        outs = (args[4] if len(args) > 4 else "", args[5] if len(args) > 5 else "")
        config = parser.group(LatticeDecoderConfig, opts)
        sequencer = parser.group(TaskSequencerConfig, opts) if parallel else None
        if gmm:
            summ = gmm_latgen_files(*args[:4], *outs, config, opts.word_symbol_table,
                                    parser.group(GmmLikelihoodOptions, opts), sequencer)
        else:
            summ = mapped_latgen_files(*args[:4], *outs, config, opts.word_symbol_table,
                                       sequencer)
        return 0 if summ.num_done else 1

    return run_tool(parser, (4, 6), body, argv)
