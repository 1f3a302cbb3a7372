#!/usr/bin/env bash
# Copyright 2025 nnetmix authors. Apache 2.0.
# Writes a subset of a data directory: N utterances spread evenly (default), the first, last or
# shortest N, whole speakers up to N utterances, N per speaker, or a speaker/utterance list.
# The work is in nnetmix/data/subset.py.
# Usage: utils/subset_data_dir.sh [--speakers|--shortest|--first|--last|--per-spk] <srcdir> <num-utt> <destdir>
#    or: utils/subset_data_dir.sh [--spk-list <file>|--utt-list <file>] <srcdir> <destdir>
# Options are parsed by bin/subset-data-dir.py, as Kaldi's version parses its own;
# run without arguments for the usage.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/subset-data-dir.py" --prog="$0" "$@"
