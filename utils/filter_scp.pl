#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# filter_scp.pl: keep the lines whose field is (or is not) in a list, as Kaldi's utils/filter_scp.pl.
# Kaldi recipes call this tool by its Perl name; the work is bin/filter-scp.py, which it runs.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/filter-scp.py" --prog="$0" "$@"
