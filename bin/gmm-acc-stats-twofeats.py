#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-acc-stats-twofeats.py: Kaldi's gmm-acc-stats-twofeats (src/gmmbin/gmm-acc-stats-twofeats.cc).

The stats file is nnetmix's GmmAccs .npz (nnetmix/hmm/gmm_stats.py), as gmm-acc-stats-ali.py's.
"""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per job (gmm-acc-stats-ali.py)

from nnetmix.cli import OptionParser, run_tool
from nnetmix.errors import FormatError

USAGE = """
Accumulate stats for GMM training, computing the Gaussian-level posteriors
on the first feature stream, and accumulating statistics on the second
(e.g. speaker-adapted and speaker-independent features: train_sat.sh's final.alimdl).
Usage:  gmm-acc-stats-twofeats.py [options] <model-in> <feature1-rspecifier> <feature2-rspecifier> <posteriors-rspecifier> <stats-out>
e.g.:
 gmm-acc-stats-twofeats.py 1.mdl 1.ali scp:train.scp scp:train_new.scp ark:1.post 1.acc
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-acc-stats-twofeats.py")
    parser.register("binary", True, "Write output in binary mode (stats are always npz)")

    def body(opts, args):
        import logging

        from nnetmix.hmm.gmm_tools import acc_stats_twofeats_tables, read_model, write_accs

        model = read_model(args[0])
        accs, counts = acc_stats_twofeats_tables(model, args[1], args[2], args[3])
        if not counts.done:
            raise FormatError(f"no utterance of {args[1]} had features in {args[2]} and "
                              f"posteriors in {args[3]}, so {args[4]} is not written")
        write_accs(args[4], accs)
        logging.getLogger("nnetmix.hmm.gmm_tools").info("Written accs.")
        return 0 if counts.done else 1

    return run_tool(parser, (5, 5), body, argv)


if __name__ == "__main__":
    sys.exit(main())
