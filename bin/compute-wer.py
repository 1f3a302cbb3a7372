#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compute-wer.py: Kaldi's compute-wer (WER and SER of hypotheses against references)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Compute WER by comparing different transcriptions
Takes two transcription files, in integer or text format,
and outputs overall WER statistics to standard output.

Usage: compute-wer.py [options] <ref-rspecifier> <hyp-rspecifier>
 e.g.: compute-wer.py --text --mode=present ark:data/train/text ark:hyp_text
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="compute-wer.py")
    parser.register("mode", "strict", 'Scoring mode: "present"|"all"|"strict": "present" means '
                    'score those we have transcriptions for; "all" means treat absent '
                    'transcriptions as empty; "strict" means die if all in ref not also in hyp')
    parser.register("text", False, "Deprecated option! Keeping for compatibility reasons.")

    def body(opts, args):
        from nnetmix.score import compute_wer, format_wer, iter_token_table, read_token_table
        from nnetmix.score.wer import MODES, ScoreError

        if opts.mode not in MODES:
            raise ScoreError(f"--mode={opts.mode}: expected strict, present or all")
        hyps = read_token_table(args[1])
        stats = compute_wer(iter_token_table(args[0]), hyps, opts.mode)
        sys.stdout.write("".join(line + "\n" for line in format_wer(stats)))
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
