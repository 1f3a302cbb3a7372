#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""remove-dup-utts.py: utils/data/remove_dup_utts.sh: keep at most about N utterances of any one transcript."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import parse_script_options, say, script_main
from nnetmix.data.dedup import select_dup_limited
from nnetmix.data.filter import filter_data_dir
from nnetmix.data.io import read_entries
from nnetmix.errors import UsageError

USAGE = """\
Usage: {prog} <max-count> <src-data-dir> <dest-data-dir>
Keeps at most about <max-count> utterances of any one transcript (Kaldi's deterministic rule,
see nnetmix/data/dedup.py), e.g. to thin out "uh-huh" in Switchboard.
 e.g.: {prog} 300 data/train_nodev data/train_nodup"""


def remove_dups(prog: str, argv) -> int:
    _, args = parse_script_options(argv, [], {}, (3, 3))
    try:
        max_count = int(args[0])
    except ValueError:
        raise UsageError(f"invalid max-count '{args[0]}' (an integer > 1)") from None
    src, dest = args[1], args[2]
    entries = read_entries(f"{src}/text")
    keep = select_dup_limited(((e.key, e.value) for e in entries), max_count)
    kept = filter_data_dir(src, dest, keep)
    say(prog, f"Reduced number of utterances from {len(entries)} to {kept}")
    return 0


def main(argv=None) -> int:
    return script_main(remove_dups, USAGE, "remove-dup-utts.py", argv)


if __name__ == "__main__":
    sys.exit(main())
