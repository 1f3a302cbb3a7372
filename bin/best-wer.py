#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""best-wer.py: utils/best_wer.sh: the WER line on stdin with the lowest rate (nnetmix/score/best.py)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import ScriptUsage, script_main
from nnetmix.score.best import best_wer_line

USAGE = """Usage: {prog} < <wer-lines>
 e.g.: grep WER exp/tri1/decode/wer_* | {prog}
Prints the line with the lowest %WER, the file name moved to the end."""


def best(prog: str, argv) -> int:
    if argv:
        raise ScriptUsage("")
    line = best_wer_line(sys.stdin)
    if line is not None:
        print(line)
    return 0


def main(argv=None) -> int:
    return script_main(best, USAGE, "best-wer.py", argv)


if __name__ == "__main__":
    sys.exit(main())
