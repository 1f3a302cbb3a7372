#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-est.py: Kaldi's gmm-est (src/gmmbin/gmm-est.cc): ML re-estimation and mixing up."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys

# One BLAS thread per job, as Kaldi's jobs run (parallelism comes from the $nj jobs): OpenBLAS's
# threads on the many small per-utterance GEMMs made 1000 utterances' likelihoods take 6.4 s
# against 0.18 s single-threaded on 2 cores. Set before numpy loads; a user's value wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Do Maximum Likelihood re-estimation of GMM-based acoustic model
Usage:  gmm-est.py [options] <model-in> <stats-in> <model-out>
e.g.: gmm-est.py --mix-up=200 --power=0.25 --write-occs=2.occs 1.mdl "gmm-sum-accs.py - 1.*.acc|" 2.mdl
"""


def main(argv=None) -> int:
    from nnetmix.hmm.gmm_tools import EstOptions
    from nnetmix.hmm.gmm_update import MleGmmOptions, MleTransitionOptions

    parser = OptionParser(USAGE, prog="gmm-est.py")
    parser.register("binary", True, "Write output in binary mode")
    parser.register("update-flags", "mvwt", "Which GMM parameters to update: subset of mvwt "
                    "(only mvwt is supported)")
    parser.register_group(EstOptions)
    parser.register_group(MleGmmOptions)
    parser.register("transition-floor", 0.01, "Floor for transition probabilities")
    parser.register("transition-min-count", 5.0, "Minimum count required to update "
                    "transitions from a state")

    def body(opts, args):
        from nnetmix.errors import UsageError
        from nnetmix.hmm.gmm_tools import gmm_est

        if sorted(opts.update_flags) != sorted("mvwt"):
            raise UsageError(f"--update-flags={opts.update_flags}: only mvwt is supported")
        gmm_est(args[0], args[1], args[2], parser.group(EstOptions, opts),
                parser.group(MleGmmOptions, opts),
                MleTransitionOptions(opts.transition_floor, opts.transition_min_count),
                opts.binary)
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
