#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compare-wer.py: is system B's WER different from A's? MAPSSWE (sclite's sc_stats) and bootstrap intervals (nnetmix/score/compare.py)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool
from nnetmix.score.compare import CompareOptions

USAGE = """
Compare two systems' transcriptions of the same test set against its reference: the matched-pairs
sentence-segment word error test (MAPSSWE, as NIST sclite's sc_stats), a bootstrap confidence
interval of each WER and of the difference WER(B) - WER(A), and the probability that B is better
(Bisani and Ney 2004). A difference whose interval contains 0 is "not significant".
With --decode-dirs=true the arguments are two decode directories scored by local/score.sh: each
one's best LM weight and penalty is taken, as the scoring script chose it, and the reference is
the first directory's scoring/test_filt.txt unless given.

Usage: compare-wer.py [options] <ref-rspecifier> <hyp-rspecifier-A> <hyp-rspecifier-B>
   or: compare-wer.py --decode-dirs=true [options] [<ref-rspecifier>] <decode-dir-A> <decode-dir-B>
 e.g.: compare-wer.py --names=mono,dnn ark:data/test/text ark:exp/mono/decode_test/scoring/17.1.0.tra ark:exp/dnn/decode_test/scoring/8.0.5.tra
 e.g.: compare-wer.py --decode-dirs=true --write-json=cmp.json exp/mono/decode_test exp/dnn/decode_test
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="compare-wer.py")
    parser.register_group(CompareOptions)
    parser.register("names", "", "Names of the two systems in the report, comma-separated "
                    "(empty: A,B, or the two directories with --decode-dirs)")
    parser.register("decode-dirs", False, "Arguments are decode directories scored by "
                    "local/score.sh, not transcription tables")
    parser.register("write-json", "", "Also write the results as JSON to this file")

    def body(opts, args):
        import logging

        from nnetmix.errors import UsageError
        from nnetmix.score.compare import compare_decode_dirs, compare_tables, \
            format_comparison, write_comparison_json

        log = logging.getLogger("compare-wer")
        copts = parser.group(CompareOptions, opts)
        names = tuple(opts.names.split(",")) if opts.names else None
        if names is not None and (len(names) != 2 or not all(names)):
            raise UsageError(f"--names={opts.names}: expected two names, e.g. --names=mono,dnn")
        extra = {}
        if opts.decode_dirs:
            ref = args[0] if len(args) == 3 else None
            cmp, best_a, best_b = compare_decode_dirs(args[-2], args[-1], ref, names, copts)
            for d, best in zip(args[-2:], (best_a, best_b)):
                log.info("%s: best %s (LM weight %d, penalty %s) from %s", d, best.wer_line,
                         best.lmwt, best.wip, best.hyp)
            extra = {"decode_dirs": {"A": {"dir": args[-2], "lmwt": best_a.lmwt,
                                           "wip": best_a.wip},
                                     "B": {"dir": args[-1], "lmwt": best_b.lmwt,
                                           "wip": best_b.wip}}}
        elif len(args) != 3:
            sys.stderr.write(parser.format_usage())
            return 1
        else:
            cmp = compare_tables(args[0], args[1], args[2], names or ("A", "B"), copts)
        lines = format_comparison(cmp)
        sys.stdout.write("".join(line + "\n" for line in lines))
        if opts.write_json:
            write_comparison_json(opts.write_json, cmp, extra)
        t, b = cmp.mapsswe, cmp.bootstrap
        log.info("Compared %d utterances (%d reference words): %s %d errors, %s %d errors; "
                 "MAPSSWE p = %.4g (%s); WER difference %s - %s %+.2f%% in [%+.2f, %+.2f] "
                 "(%s)", cmp.num_utterances, cmp.ref_words, cmp.names[0], cmp.errors[0],
                 cmp.names[1], cmp.errors[1], t.p_value,
                 "significant" if t.significant else "not significant", cmp.names[1],
                 cmp.names[0], b.diff.value, b.diff.low, b.diff.high,
                 "significant" if b.significant else "not significant")
        return 0

    return run_tool(parser, (2, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
