#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""split-data.py: utils/split_data.sh: split a data directory into N parts, speakers kept whole."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import parse_int, parse_script_options, say, script_main
from nnetmix.data.io import read_entries
from nnetmix.data.split import split_data

USAGE = """\
Usage: {prog} [--per-utt|--balanced] <data-dir> <num-to-split>
Writes <data-dir>/split<N>/{{1..N}} (split<N>utt with --per-utt), each a complete data directory.
By default each speaker goes to exactly one part, the same part as with Kaldi's split_data.sh;
--balanced keeps speakers whole but makes the largest part as small as it can be;
--per-utt ignores speakers. utt2spk must be sorted (utils/fix_data_dir.sh sorts it).
Nothing is done when the split is newer than the data directory.
 e.g.: {prog} data/train 4"""


def split(prog: str, argv) -> int:
    opts, args = parse_script_options(argv, ["per-utt", "balanced"], {}, (2, 2))
    n = parse_int(args[1], "<num-to-split>")
    out, written = split_data(args[0], n, per_utt=bool(opts["per-utt"]),
                              balanced=bool(opts["balanced"]))
    if written:
        sizes = [len(read_entries(out / str(k) / "utt2spk")) for k in range(1, n + 1)]
        say(prog, f"split {args[0]} into {n} parts in {out} "
                  f"(utterances per part: min {min(sizes)}, max {max(sizes)})")
    else:
        say(prog, f"{out} is up to date, skipping")
    return 0


def main(argv=None) -> int:
    return script_main(split, USAGE, "split-data.py", argv)


if __name__ == "__main__":
    sys.exit(main())
