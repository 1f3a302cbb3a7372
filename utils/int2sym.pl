#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# int2sym.pl: map integer fields of text lines back to symbols, as Kaldi's utils/int2sym.pl.
# Kaldi recipes call this tool by its Perl name; the work is bin/int2sym.py, which it runs.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/int2sym.py" --prog="$0" "$@"
