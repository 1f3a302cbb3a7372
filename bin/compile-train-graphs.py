#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compile-train-graphs.py: Kaldi's compile-train-graphs (src/bin/compile-train-graphs.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Creates training graphs (without transition-probabilities, by default)

Usage:   compile-train-graphs.py [options] <tree-in> <model-in> <lexicon-fst-in> <transcriptions-rspecifier> <graphs-wspecifier>
e.g.:
 compile-train-graphs.py --read-disambig-syms=data/lang/phones/disambig.int tree 1.mdl \\
   data/lang/L.fst 'ark:sym2int.pl --map-oov 2 -f 2- words.txt text|' 'ark:|gzip -c >fsts.1.gz'
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="compile-train-graphs.py")
    from nnetmix.hmm.graphs import GraphCompilerOptions
    parser.register_group(GraphCompilerOptions)
    parser.register("batch-size", 250, "Number of FSTs to compile at a time (accepted for "
                    "Kaldi compatibility; graphs are compiled one by one)")
    parser.register("read-disambig-syms", "", "File containing list of disambiguation "
                    "symbols in phone symbol table")

    def body(opts, args):
        from nnetmix.hmm.graphs import compile_train_graphs

        counts = compile_train_graphs(*args, disambig_rx=opts.read_disambig_syms,
                                      opts=parser.group(GraphCompilerOptions, opts))
        return 0 if counts.succeeded else 1

    return run_tool(parser, (5, 5), body, argv)


if __name__ == "__main__":
    sys.exit(main())
