#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""subset-data-dir.py: utils/subset_data_dir.sh: a data directory of chosen utterances or speakers."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import ScriptUsage, parse_int, parse_script_options, say, script_main
from nnetmix.data.subset import subset_data_dir

USAGE = """\
Usage: {prog} [--speakers|--shortest|--first|--last|--per-spk] <srcdir> <num-utt> <destdir>
   or: {prog} [--spk-list <speaker-list-file>|--utt-list <utterance-list-file>] <srcdir> <destdir>
By default selects <num-utt> utterances spread evenly through the data (deterministic).
  --speakers   # whole speakers, shuffled with --seed, until there are <num-utt> utterances
  --per-spk    # <num-utt> utterances per speaker, where available
  --first      # the first <num-utt> utterances
  --last       # the last <num-utt> utterances
  --shortest   # the <num-utt> shortest utterances (utt2num_frames, utt2dur, segments or feats)
  --spk-list   # the speakers listed in the file
  --utt-list   # the utterances listed in the file
  --seed <n>   # seed of the --speakers shuffle (default 777)
 e.g.: {prog} --first data/train 1000 data/train_1k"""


def subset(prog: str, argv) -> int:
    modes = ["speakers", "shortest", "first", "last", "per-spk"]
    opts, args = parse_script_options(argv, modes,
                                      {"spk-list": None, "utt-list": None, "seed": "777"}, (2, 3))
    chosen = [m for m in modes if opts[m]]
    lists = [k for k in ("spk-list", "utt-list") if opts[k] is not None]
    if len(chosen) + len(lists) > 1:
        raise ScriptUsage("the subset options exclude each other; give one")
    seed = parse_int(str(opts["seed"]), "--seed")
    if lists:
        if len(args) != 2:
            raise ScriptUsage("")
        src, dest = args
        kept, total = subset_data_dir(src, dest, spk_list=opts["spk-list"],
                                      utt_list=opts["utt-list"], seed=seed)
    else:
        if len(args) != 3:
            raise ScriptUsage("")
        # Kaldi's order is <srcdir> <num-utt> <destdir>; "--first N <src> <dest>" also works
        if not args[1].lstrip("-").isdigit() and args[0].isdigit():
            args = [args[1], args[0], args[2]]
        src, num, dest = args[0], parse_int(args[1], "<num-utt>"), args[2]
        kept, total = subset_data_dir(src, dest, num, mode=chosen[0] if chosen else "spread",
                                      seed=seed)
    say(prog, f"reducing #utt from {total} to {kept}")
    return 0


def main(argv=None) -> int:
    return script_main(subset, USAGE, "subset-data-dir.py", argv)


if __name__ == "__main__":
    sys.exit(main())
