#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""analyze-counts.py: Kaldi's analyze-counts (src/bin/analyze-counts.cc).

As Kaldi, writes each count plus 0.5 (a "half-frame", so no pdf has a zero prior) as a double
vector: text `` [ c1 c2 ... ]`` by default (ali_train_pdf.counts), ``DV`` with --binary=true.
--frame-weights, --utt-weights and --symbol-table are not implemented."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Computes element counts from integer vector table.
(e.g. get pdf-counts to estimate DNN-output priors for data analysis)
Verbosity : level 1 => print frequencies and histogram

Usage: analyze-counts.py [options] <alignments-rspecifier> <counts-wxfilname>
e.g.: 
 analyze-counts.py ark:1.ali prior.counts
 Show phone counts by:
 ali-to-phones.py --per-frame=true ark:1.ali ark:- | analyze-counts.py --verbose=1 ark:- - >/dev/null"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="analyze-counts.py")
    p.register("binary", False, "write in binary mode")
    p.register("counts-dim", 0, "Output dimension of the counts, a hint for dimension "
               "auto-detection.")
    return p


def body(opts, args) -> int:
    import logging
    from nnetmix.errors import FormatError
    from nnetmix.kaldi import write_object
    from nnetmix.kaldi.transition_model import analyze_counts
    log = logging.getLogger("analyze-counts")
    counts, done = analyze_counts(args[0], opts.counts_dim)
    if not done:  # counts of nothing would be a prior of zeros (nnet-forward --class-frame-counts)
        raise FormatError(f"{args[0]}: no alignment to count, so {args[1]} is not written")
    for i in (counts == 0).nonzero()[0].tolist():
        log.warning("Zero count for label %d, this is suspicious.", i)
    write_object(args[1], counts + 0.5, "vec", binary=opts.binary)
    if opts.verbose >= 1:
        total = counts.sum()
        rows = "".join(f"{c:g}\t({c / total:g}),\t{i}\t\n" for c, i in
                       sorted(zip(counts.tolist(), range(counts.size))))
        log.info("Printing...\n### The sorted count table,\ncount\t(norm),\tid\t(symbol):\n%s"
                 "\n#total %g (%gh)\n", rows, total, total / 100 / 3600)
    log.info("Summed %d int32 vectors to counts, skipped 0 vectors.", done)
    log.info("Counts written to %s", args[1])
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
