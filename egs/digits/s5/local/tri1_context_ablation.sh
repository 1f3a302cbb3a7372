#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Issue 17's ablation of the digits tri1 tree on the clean corpus (run.sh --clean-share 1): which
# context positions cost tri1 its words? After local/tri1_seen_voices.sh (data/train_a, data/heldout, exp/mono_a,
# exp/mono_a_ali and its decodes), trains the same tri1 with the tree allowed to ask about the
# central phone only ("none"), the left context and the central phone ("left"), or the central
# phone and the right context ("right") (compile-questions.py --context-positions), decodes
# data/heldout and data/test, and compares each with the monophone (compare-wer.py) and counts its
# inserted words (local/insertions.py).
# Run from egs/digits/s5: local/tri1_context_ablation.sh [--leaves 300 --gauss 2000]
leaves=300
gauss=2000
nj=2
variants="none:1 left:0,1 right:1,2"   # name:positions
echo "$0 $@"
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail
for f in exp/mono_a_ali/ali.1.gz exp/mono_a/decode_heldout/lat.1.gz exp/mono_a/decode_test/lat.1.gz; do
  [ -f $f ] || { echo "$0: no $f (run local/tri1_seen_voices.sh first)" >&2; exit 1; }
done
for v in $variants; do
  name=${v%%:*} positions=${v#*:}
  dir=exp/tri1_a_$name
  steps/train_deltas.sh --questions-opts "--context-positions=$positions" $leaves $gauss \
    data/train_a data/lang exp/mono_a_ali $dir
  utils/mkgraph.sh data/lang_test $dir $dir/graph
  for x in heldout test; do
    steps/decode.sh --nj $nj $dir/graph data/$x $dir/decode_$x
  done
done
for x in heldout test; do
  for v in $variants; do
    compare-wer.py --decode-dirs=true exp/mono_a/decode_$x exp/tri1_a_${v%%:*}/decode_$x
    local/insertions.py data/$x/text exp/tri1_a_${v%%:*}/decode_$x
  done
done
