#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-acc-stats-ali.py: Kaldi's gmm-acc-stats-ali (src/gmmbin/gmm-acc-stats-ali.cc).

The stats file is nnetmix's GmmAccs .npz (nnetmix/hmm/gmm_stats.py), read by gmm-sum-accs.py
and gmm-est.py; not Kaldi's AccumAmDiagGmm format.
"""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys

# One BLAS thread per job, as Kaldi's jobs run (parallelism comes from the $nj jobs): OpenBLAS's
# threads on the many small per-utterance GEMMs made 1000 utterances' likelihoods take 6.4 s
# against 0.18 s single-threaded on 2 cores. Set before numpy loads; a user's value wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nnetmix.cli import OptionParser, run_tool
from nnetmix.errors import FormatError

USAGE = """
Accumulate stats for GMM training.
Usage:  gmm-acc-stats-ali.py [options] <model-in> <feature-rspecifier> <alignments-rspecifier> <stats-out>
e.g.:
 gmm-acc-stats-ali.py 1.mdl scp:train.scp 'ark:gunzip -c ali.1.gz|' 1.1.acc
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-acc-stats-ali.py")
    parser.register("binary", True, "Write output in binary mode (stats are always npz)")
    parser.register("utt2spk", "", "nnetmix: rspecifier of utterance-to-speaker map; the stats "
                    "are summed exactly per speaker, so --nj does not change them (default: the "
                    "pipeline: features' utt2spk; otherwise per utterance)")

    def body(opts, args):
        from nnetmix.hmm.gmm_tools import acc_stats_ali_tables, read_model, write_accs

        model = read_model(args[0])
        accs, counts = acc_stats_ali_tables(model, args[1], args[2], opts.utt2spk)
        if not counts.done:
            raise FormatError(f"no utterance of {args[1]} had an alignment in {args[2]}, so "
                              f"{args[3]} is not written")
        write_accs(args[3], accs)
        import logging
        logging.getLogger("nnetmix.hmm.gmm_tools").info("Written accs.")
        return 0 if counts.done else 1

    return run_tool(parser, (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
