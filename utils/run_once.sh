#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Runs a command unless <dir>/.done says it already ran to the end with these inputs and this
# command line; a recipe stage restarted after an interruption then redoes only what changed.
# Used by egs/harbour/s5's decoding stages (a decode is the long part of a GMM stage, and
# Kaldi's steps/decode.sh always decodes again).

echo "$0 $@"
set -euo pipefail

if [ $# -lt 4 ] || ! printf '%s\n' "$@" | grep -qx -- --; then
  cat >&2 <<EOF
Usage: $0 <dir> <input-file> [<input-file> ...] -- <command> [<args> ...]
 e.g.: $0 exp/tri1/decode_test exp/tri1/graph/HCLG.fst exp/tri1/final.mdl data/test/feats.scp -- \\
         steps/decode.sh exp/tri1/graph data/test exp/tri1/decode_test
Runs <command> unless <dir>/.done holds this command line and the md5 of every <input-file>;
writes <dir>/.done after the command succeeds (removes it before the command starts).
EOF
  exit 1
fi

dir=$1; shift
inputs=()
while [ "$1" != "--" ]; do inputs+=("$1"); shift; done
shift
for f in "${inputs[@]}"; do
  [ -f "$f" ] || { echo "$0: no such file $f" >&2; exit 1; }
done

key=$( { printf 'command:'; printf ' %q' "$@"; echo; md5sum "${inputs[@]}"; } )
if [ -f "$dir/.done" ] && [ "$(cat "$dir/.done")" == "$key" ]; then
  echo "$0: $dir: done with these inputs and this command already ($dir/.done), skipping"
  exit 0
fi
rm -f "$dir/.done"
"$@"
mkdir -p "$dir"
echo "$key" > "$dir/.done.tmp"
mv "$dir/.done.tmp" "$dir/.done"
