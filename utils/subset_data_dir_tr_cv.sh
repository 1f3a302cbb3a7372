#!/usr/bin/env bash
# Copyright 2025 nnetmix authors. Apache 2.0.
# Splits a data directory into a training part and a cross-validation part for nnet training:
# 10% of the speakers (at least one, seeded shuffle) by default, or the last P% of utterances.
# The work is in nnetmix/data/tr_cv.py.
# Usage: utils/subset_data_dir_tr_cv.sh [--cv-spk-percent P|--cv-utt-percent P] [--seed S] <srcdir> <traindir> <cvdir>
# Options are parsed by the Python side (nnetmix/data/cli.py), as Kaldi's version parses its own;
# run without arguments for the usage.

# Resolve symlinks (recipes reach utils/ through egs/<corpus>/s5/utils) to find the nnetmix tree.
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m nnetmix.data.cli subset_data_dir_tr_cv "$0" "$@"
