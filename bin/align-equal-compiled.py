#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""align-equal-compiled.py: Kaldi's align-equal-compiled (src/bin/align-equal-compiled.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys

# One BLAS thread per job, as Kaldi's jobs run (parallelism comes from the $nj jobs): OpenBLAS's
# threads on the many small per-utterance GEMMs made 1000 utterances' likelihoods take 6.4 s
# against 0.18 s single-threaded on 2 cores. Set before numpy loads; a user's value wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Write an equally spaced alignment (for getting training started)
Usage:  align-equal-compiled.py <graphs-rspecifier> <features-rspecifier> <alignments-wspecifier>
e.g.:
 align-equal-compiled.py 'ark:gunzip -c fsts.1.gz|' scp:train.scp ark:equal.ali
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="align-equal-compiled.py")
    parser.register("binary", True, "Write output in binary mode (alignments follow the "
                    "wspecifier's ,t flag)")

    def body(opts, args):
        from nnetmix.hmm.align_tools import align_equal_compiled

        counts = align_equal_compiled(*args)
        return 0 if counts.done else 1

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
