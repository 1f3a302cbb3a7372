#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""utt2spk-to-spk2utt.py: utils/utt2spk_to_spk2utt.pl: invert utt2spk (file or stdin), speakers in order of first appearance."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import open_input, open_stdout, parse_script_options, script_main
from nnetmix.data.io import split_fields, utt2spk_to_spk2utt
from nnetmix.errors import UsageError

USAGE = """\
Usage: {prog} [<utt2spk>] > <spk2utt>
Reads utt2spk (a file, or stdin) and writes spk2utt: speakers in order of first appearance."""


def invert(prog: str, argv) -> int:
    _, args = parse_script_options(argv, [], {}, (0, 1))
    pairs = []
    with open_input(args) as fh:
        for n, line in enumerate(fh, 1):
            f = split_fields(line.rstrip("\r\n"))
            if not f:
                continue
            if len(f) != 2:
                raise UsageError(f"{args[0] if args else 'stdin'}:{n}: expected <utterance> "
                                 f"<speaker>, got '{line.strip()}'")
            pairs.append((f[0], f[1]))
    with open_stdout() as out:
        for spk, utts in utt2spk_to_spk2utt(pairs, sort=False).items():
            out.write(f"{spk} {' '.join(utts)}\n")
    return 0


def main(argv=None) -> int:
    return script_main(invert, USAGE, "utt2spk-to-spk2utt.py", argv)


if __name__ == "__main__":
    sys.exit(main())
