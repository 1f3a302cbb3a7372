#!/usr/bin/env bash
# Copyright 2025 nnetmix authors. Apache 2.0.
# Checks a Kaldi data directory: every file sorted in C locale with unique keys, utt2spk and
# spk2utt agreeing, text, wav.scp or segments, feats.scp and the per-utterance files covering the
# same utterances and cmvn.scp the speakers. The checks live in nnetmix/data/validate.py.
# Usage: utils/validate_data_dir.sh [--no-feats] [--no-text] [--no-wav] [--no-spk-sort] [--non-print] <data-dir>
# Options are parsed by the Python side (nnetmix/data/cli.py), as Kaldi's version parses its own;
# run without arguments for the usage.

# Resolve symlinks (recipes reach utils/ through egs/<corpus>/s5/utils) to find the nnetmix tree.
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m nnetmix.data.cli validate_data_dir "$0" "$@"
