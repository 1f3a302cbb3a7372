#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-align-compiled.py: Kaldi's gmm-align-compiled (src/gmmbin/gmm-align-compiled.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys

# One BLAS thread per job, as Kaldi's jobs run (parallelism comes from the $nj jobs): OpenBLAS's
# threads on the many small per-utterance GEMMs made 1000 utterances' likelihoods take 6.4 s
# against 0.18 s single-threaded on 2 cores. Set before numpy loads; a user's value wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Align features given [GMM-based] models.
Usage:   gmm-align-compiled.py [options] <model-in> <graphs-rspecifier> <feature-rspecifier> <alignments-wspecifier> [scores-wspecifier]
e.g.:
 gmm-align-compiled.py 1.mdl ark:graphs.fsts scp:train.scp ark:1.ali
or:
 compile-train-graphs.py tree 1.mdl lex.fst 'ark:sym2int.pl -f 2- words.txt text|' \\
   ark:- | gmm-align-compiled.py 1.mdl ark:- scp:train.scp ark:1.ali
"""


def main(argv=None) -> int:
    from nnetmix.hmm.gmm_align import AlignOptions

    parser = OptionParser(USAGE, prog="gmm-align-compiled.py")
    parser.register_group(AlignOptions)
    # Defaults are train_mono.sh's scale_opts (Kaldi's binary defaults the scales to 1.0 and
    # the beams to 200/0; its scripts always pass these values).

    def body(opts, args):
        from nnetmix.hmm.align_tools import align_compiled

        counts = align_compiled(*args[:4], scores_wspecifier=args[4] if len(args) > 4 else "",
                                opts=parser.group(AlignOptions, opts))
        return 0 if counts.done else 1

    return run_tool(parser, (4, 5), body, argv)


if __name__ == "__main__":
    sys.exit(main())
