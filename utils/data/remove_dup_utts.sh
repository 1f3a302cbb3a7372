#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Keeps at most about <max-count> utterances of any one transcript (e.g. thins out "uh-huh" in
# Switchboard), choosing the same utterances as Kaldi's utils/data/remove_dup_utts.sh.
# The work is in nnetmix/recipes/dedup.py.
# Usage: utils/data/remove_dup_utts.sh <max-count> <src-data-dir> <dest-data-dir>
# run without arguments for the usage.

# Resolve symlinks (recipes reach utils/ through egs/<corpus>/s5/utils) to find the nnetmix tree.
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m nnetmix.recipes.cli remove_dup_utts "$0" "$@"
