#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""subset-data-dir-tr-cv.py: utils/subset_data_dir_tr_cv.sh: split a data directory into training and held-out parts."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import parse_float, parse_int, parse_script_options, say, script_main
from nnetmix.data.tr_cv import subset_tr_cv

USAGE = """\
Usage: {prog} [--cv-spk-percent P|--cv-utt-percent P] [--seed S] <srcdir> <traindir> <crossvaldir>
Splits a data directory into training and held-out (cross-validation) parts.
  --cv-spk-percent P  # P% of the speakers (at least one, shuffled with --seed) go to CV;
                      # the default, with P=10
  --cv-utt-percent P  # the last P% of the utterances go to CV, moved to a speaker boundary
  --seed S            # seed of the speaker shuffle (default 777)
 e.g.: {prog} data/train data/train_tr90 data/train_cv10"""


def tr_cv(prog: str, argv) -> int:
    opts, args = parse_script_options(argv, [], {"cv-spk-percent": None, "cv-utt-percent": None,
                                                 "seed": "777"}, (3, 3))
    spk = opts["cv-spk-percent"]
    utt = opts["cv-utt-percent"]
    src, tr, cv = args
    print(f"{prog} {' '.join(argv)}", flush=True)
    n_tr, n_cv = subset_tr_cv(
        src, tr, cv, seed=parse_int(str(opts["seed"]), "--seed"),
        cv_spk_percent=None if spk is None else parse_float(str(spk), "--cv-spk-percent"),
        cv_utt_percent=None if utt is None else parse_float(str(utt), "--cv-utt-percent"))
    say(prog, f"{n_tr} utterances for training in {tr}, {n_cv} for cross-validation in {cv}")
    return 0


def main(argv=None) -> int:
    return script_main(tr_cv, USAGE, "subset-data-dir-tr-cv.py", argv)


if __name__ == "__main__":
    sys.exit(main())
