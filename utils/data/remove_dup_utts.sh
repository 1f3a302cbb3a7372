#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Keeps at most about <max-count> utterances of any one transcript (e.g. thins out "uh-huh" in
# Switchboard), choosing the same utterances as Kaldi's utils/data/remove_dup_utts.sh.
# The work is in nnetmix/data/dedup.py (bin/remove-dup-utts.py).
# Usage: utils/data/remove_dup_utts.sh <max-count> <src-data-dir> <dest-data-dir>
# run without arguments for the usage.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../../bin" && pwd)
exec "$bin/remove-dup-utts.py" --prog="$0" "$@"
