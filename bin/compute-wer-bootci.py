#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compute-wer-bootci.py: Kaldi's compute-wer-bootci (src/bin/compute-wer-bootci.cc): bootstrap interval of a WER, and the probability that a second system improves on the first (compare-wer.py's draws, nnetmix/score/bootci.py)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Compute a bootstrapping of WER to extract the 95% confidence interval.
Take a reference and a transcription file, in integer or text format,
and outputs overall WER statistics to standard output along with its
confidence interval using the bootstrap method of Bisani and Ney.
If a second transcription file corresponding to the same reference is
provided, a bootstrap comparison of the two transcription is performed
to estimate the probability of improvement.
(The draws come from a numpy generator with seed 0, those of compare-wer.py, not from the C
library's rand() as Kaldi's: the same figures in distribution, not digit for digit.)

Usage: compute-wer-bootci.py [options] <ref-rspecifier> <hyp-rspecifier> [<hyp2-rspecifier>]
E.g.: compute-wer-bootci.py --mode=present ark:data/train/text ark:hyp_text
or compute-wer-bootci.py ark:data/train/text ark:hyp_text ark:hyp_text2
See also: compute-wer.py, compare-wer.py"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="compute-wer-bootci.py")
    p.register("mode", "strict", 'Scoring mode: "present"|"all"|"strict": "present" means score '
               'those we have transcriptions for; "all" means treat absent transcriptions as '
               'empty; "strict" means die if all in ref not also in hyp')
    p.register("replications", 10000, "Number of replications to compute the intervals")
    return p


def body(opts, args) -> int:
    from nnetmix.score.bootci import compute_wer_bootci, format_boot_ci
    ci = compute_wer_bootci(args[0], args[1:], opts.mode, opts.replications)
    sys.stdout.write("".join(line + "\n" for line in format_boot_ci(ci)))
    sys.stdout.flush()
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
