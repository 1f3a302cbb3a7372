#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""spk2utt-to-utt2spk.py: utils/spk2utt_to_utt2spk.pl: expand spk2utt (file or stdin) into utt2spk, same order."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import open_input, open_stdout, parse_script_options, script_main
from nnetmix.data.io import split_fields
from nnetmix.errors import UsageError

USAGE = """\
Usage: {prog} [<spk2utt>] > <utt2spk>
Reads spk2utt (a file, or stdin) and writes utt2spk in the same order."""


def expand(prog: str, argv) -> int:
    _, args = parse_script_options(argv, [], {}, (0, 1))
    with open_input(args) as fh, open_stdout() as out:
        for n, line in enumerate(fh, 1):
            f = split_fields(line.rstrip("\r\n"))
            if not f:
                continue
            if len(f) < 2:
                raise UsageError(f"{args[0] if args else 'stdin'}:{n}: speaker {f[0]} has no "
                                 f"utterances")
            for utt in f[1:]:
                out.write(f"{utt} {f[0]}\n")
    return 0


def main(argv=None) -> int:
    return script_main(expand, USAGE, "spk2utt-to-utt2spk.py", argv)


if __name__ == "__main__":
    sys.exit(main())
