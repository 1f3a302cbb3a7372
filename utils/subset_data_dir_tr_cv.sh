#!/usr/bin/env bash
# Copyright 2025 nnetmix authors. Apache 2.0.
# Splits a data directory into a training part and a cross-validation part for nnet training:
# 10% of the speakers (at least one, seeded shuffle) by default, or the last P% of utterances.
# The work is in nnetmix/data/tr_cv.py.
# Usage: utils/subset_data_dir_tr_cv.sh [--cv-spk-percent P|--cv-utt-percent P] [--seed S] <srcdir> <traindir> <cvdir>
# Options are parsed by bin/subset-data-dir-tr-cv.py, as Kaldi's version parses its own;
# run without arguments for the usage.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/subset-data-dir-tr-cv.py" --prog="$0" "$@"
