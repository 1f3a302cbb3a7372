#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""validate-data-dir.py: utils/validate_data_dir.sh, Kaldi's data-directory checks (nnetmix/data/validate.py)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import parse_script_options, say, script_main
from nnetmix.data.validate import ValidateOptions, validate_data_dir

USAGE = """\
Usage: {prog} [--no-feats] [--no-text] [--no-wav] [--no-spk-sort] [--non-print] <data-dir>
Checks that a data directory is sorted and consistent (see nnetmix/data/validate.py).
The --no-xxx options mean that xxx need not be present; it is still checked if it is.
 e.g.: {prog} --no-feats data/train
  --no-feats     # feats.scp may be absent
  --no-text      # text may be absent (e.g. test data without transcripts)
  --no-wav       # wav.scp may be absent
  --no-spk-sort  # utt2spk need not also be sorted by speaker (speaker-ids prefixes of utt-ids)
  --non-print    # allow non-printable characters and invalid UTF-8 in text"""


def validate(prog: str, argv) -> int:
    opts, args = parse_script_options(
        argv, ["no-feats", "no-text", "no-wav", "no-spk-sort", "non-print"], {}, (1, 1))
    vopts = ValidateOptions(**{k.replace("-", "_"): v for k, v in opts.items()})
    for w in validate_data_dir(args[0], vopts):
        print(f"{prog}: {w}", file=sys.stderr)
    say(prog, f"Successfully validated data-directory {args[0]}")
    return 0


def main(argv=None) -> int:
    return script_main(validate, USAGE, "validate-data-dir.py", argv)


if __name__ == "__main__":
    sys.exit(main())
