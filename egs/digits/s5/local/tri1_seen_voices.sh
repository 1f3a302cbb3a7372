#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Issue 17's check of the digits tri1 loss on the clean corpus (run.sh --clean-share 1): does
# tri1 lose to the monophone on held-out utterances of the TRAINING voices too? Every 7th
# training utterance is held out (data/heldout), the monophone and a tri1 are retrained on the
# rest (data/train_a) with stage 3's and stage 5's scripts, and both are decoded on data/heldout
# and data/test and compared (compare-wer.py), with local/insertions.py's count of inserted words.
# Run from egs/digits/s5 after stages 0-2: local/tri1_seen_voices.sh [--leaves 300 --gauss 2000]
leaves=300
gauss=2000
nj=2
echo "$0 $@"
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail
[ -f data/train/feats.scp ] || { echo "$0: no data/train/feats.scp (run stages 0-2)" >&2; exit 1; }
awk 'NR % 7 != 0 {print $1}' data/train/text > data/train_a.list
awk 'NR % 7 == 0 {print $1}' data/train/text > data/heldout.list
utils/subset_data_dir.sh --utt-list data/train_a.list data/train data/train_a
utils/subset_data_dir.sh --utt-list data/heldout.list data/train data/heldout
steps/train_mono.sh --nj $nj data/train_a data/lang exp/mono_a
steps/align_si.sh --nj $nj data/train_a data/lang exp/mono_a exp/mono_a_ali
steps/train_deltas.sh $leaves $gauss data/train_a data/lang exp/mono_a_ali exp/tri1_a
for m in mono_a tri1_a; do
  utils/mkgraph.sh data/lang_test exp/$m exp/$m/graph
  for x in heldout test; do
    steps/decode.sh --nj $nj exp/$m/graph data/$x exp/$m/decode_$x
  done
done
for x in heldout test; do
  compare-wer.py --decode-dirs=true exp/mono_a/decode_$x exp/tri1_a/decode_$x
  for m in mono_a tri1_a; do local/insertions.py data/$x/text exp/$m/decode_$x; done
done
