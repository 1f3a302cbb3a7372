#!/usr/bin/env bash
# Copyright 2025 nnetmix authors. Apache 2.0.
# Sorts every file of a data directory and keeps only the utterances present in all of them
# (and whose speaker and recording survive); the originals go to <data-dir>/.backup.
# The work is in nnetmix/data/fix.py.
# Usage: utils/fix_data_dir.sh [--utt-extra-files "<files>"] [--spk-extra-files "<files>"] <data-dir>
# Options are parsed by the Python side (nnetmix/data/cli.py), as Kaldi's version parses its own;
# run without arguments for the usage.

# Resolve symlinks (recipes reach utils/ through egs/<corpus>/s5/utils) to find the nnetmix tree.
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m nnetmix.data.cli fix_data_dir "$0" "$@"
