#!/usr/bin/env bash
# Copyright 2025 nnetmix authors. Apache 2.0.
# Splits a data directory into <data-dir>/split<N>/{1..N} for N parallel jobs, speakers kept whole
# and assigned to parts as Kaldi's split_scp.pl assigns them (--balanced: the largest part made as
# small as it can be; --per-utt: split<N>utt, speakers ignored); skips the work when the split is
# newer than the data. The work is in nnetmix/data/split.py.
# Usage: utils/split_data.sh [--per-utt|--balanced] <data-dir> <num-to-split>
# Options are parsed by bin/split-data.py, as Kaldi's version parses its own;
# run without arguments for the usage.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/split-data.py" --prog="$0" "$@"
