#!/usr/bin/env bash
# Copyright 2025 nnetmix authors. Apache 2.0.
# Checks a Kaldi data directory: every file sorted in C locale with unique keys, utt2spk and
# spk2utt agreeing, text, wav.scp or segments, feats.scp and the per-utterance files covering the
# same utterances and cmvn.scp the speakers. The checks live in nnetmix/data/validate.py.
# Usage: utils/validate_data_dir.sh [--no-feats] [--no-text] [--no-wav] [--no-spk-sort] [--non-print] <data-dir>
# Options are parsed by bin/validate-data-dir.py, as Kaldi's version parses its own;
# run without arguments for the usage.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/validate-data-dir.py" --prog="$0" "$@"
