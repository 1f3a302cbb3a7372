#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# sym2int.pl: map fields of text lines through a symbol table, as Kaldi's utils/sym2int.pl.
# Kaldi recipes call this tool by its Perl name; the work is bin/sym2int.py, which it runs.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/sym2int.py" --prog="$0" "$@"
