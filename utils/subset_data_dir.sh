#!/usr/bin/env bash
# Copyright 2025 nnetmix authors. Apache 2.0.
# Writes a subset of a data directory: N utterances spread evenly (default), the first, last or
# shortest N, whole speakers up to N utterances, N per speaker, or a speaker/utterance list.
# The work is in nnetmix/data/subset.py.
# Usage: utils/subset_data_dir.sh [--speakers|--shortest|--first|--last|--per-spk] <srcdir> <num-utt> <destdir>
#    or: utils/subset_data_dir.sh [--spk-list <file>|--utt-list <file>] <srcdir> <destdir>
# Options are parsed by the Python side (nnetmix/data/cli.py), as Kaldi's version parses its own;
# run without arguments for the usage.

# Resolve symlinks (recipes reach utils/ through egs/<corpus>/s5/utils) to find the nnetmix tree.
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m nnetmix.data.cli subset_data_dir "$0" "$@"
