#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""align-compiled-mapped.py: Kaldi's align-compiled-mapped (src/bin/align-compiled-mapped.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per job (gmm-align-compiled.py)

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Generate alignments, reading log-likelihoods as matrices.
 (model is needed only for the integer mappings in its transition-model)
Usage:   align-compiled-mapped.py [options] <trans-model-in> <graphs-rspecifier> <loglikes-rspecifier> <alignments-wspecifier> [scores-wspecifier]
e.g.:
 align-compiled-mapped.py final.mdl ark:graphs.fsts scp:loglikes.scp ark:nnet.ali
or, a DNN's realignment (as Kaldi's steps/nnet/align.sh):
 nnet-forward.py --no-softmax=true --class-frame-counts=ali_train_pdf.counts final.nnet \
   scp:feats.scp ark:loglikes.ark
 align-compiled-mapped.py final.mdl ark:graphs.fsts ark:loglikes.ark 'ark:| gzip -c > ali.1.gz'
Defaults are the values Kaldi's alignment scripts pass (Kaldi's binary defaults the scales to 1.0
and the beams to 200/0).
"""


def main(argv=None) -> int:
    from nnetmix.hmm.gmm_align import AlignOptions

    parser = OptionParser(USAGE, prog="align-compiled-mapped.py")
    parser.register_group(AlignOptions)

    def body(opts, args):
        from nnetmix.hmm.align_tools import align_compiled_mapped

        counts = align_compiled_mapped(*args[:4],
                                       scores_wspecifier=args[4] if len(args) > 4 else "",
                                       opts=parser.group(AlignOptions, opts))
        return 0 if counts.done else 1

    return run_tool(parser, (4, 5), body, argv)


if __name__ == "__main__":
    sys.exit(main())
