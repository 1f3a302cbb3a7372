#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""fix-data-dir.py: utils/fix_data_dir.sh: sort a data directory, keep the utterances all its files have."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import parse_script_options, say, script_main
from nnetmix.data.fix import fix_data_dir

USAGE = """\
Usage: {prog} [--utt-extra-files "<f1> <f2>"] [--spk-extra-files "<f1>"] <data-dir>
Sorts every file of a data directory and keeps only the utterances present in all of them
(those missing features, text, audio or a speaker's cmvn are dropped); originals go to
<data-dir>/.backup.
 e.g.: {prog} data/train"""


def fix(prog: str, argv) -> int:
    opts, args = parse_script_options(argv, [], {"utt-extra-files": "", "spk-extra-files": ""},
                                      (1, 1))
    data = args[0]
    report = fix_data_dir(data, extra_utt_files=str(opts["utt-extra-files"]).split(),
                          extra_spk_files=str(opts["spk-extra-files"]).split())
    for m in report.messages:
        say(prog, m)
    if report.kept != report.total:
        say(prog, f"kept {report.kept} utterances out of {report.total}")
    else:
        say(prog, f"kept all {report.total} utterances.")
    say(prog, f"old files are kept in {data}/.backup")
    return 0


def main(argv=None) -> int:
    return script_main(fix, USAGE, "fix-data-dir.py", argv)


if __name__ == "__main__":
    sys.exit(main())
