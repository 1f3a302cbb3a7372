#!/usr/bin/env bash
# Copyright 2025 nnetmix authors. Apache 2.0.
# Sorts every file of a data directory and keeps only the utterances present in all of them
# (and whose speaker and recording survive); the originals go to <data-dir>/.backup.
# The work is in nnetmix/data/fix.py.
# Usage: utils/fix_data_dir.sh [--utt-extra-files "<files>"] [--spk-extra-files "<files>"] <data-dir>
# Options are parsed by bin/fix-data-dir.py, as Kaldi's version parses its own;
# run without arguments for the usage.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/fix-data-dir.py" --prog="$0" "$@"
