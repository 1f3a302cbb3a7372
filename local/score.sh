#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Scores the lattices of a decode directory against <data-dir>/text over a grid of language-model
# weights and word insertion penalties, as Kaldi's steps/score_kaldi.sh: for each LMWT and WIP,
# what lattice-scale --inv-acoustic-scale=LMWT | lattice-add-penalty | lattice-best-path | int2sym
# gives goes to scoring/LMWT.WIP.tra (local/score_best_paths.sh: one read of the lattices per
# WIP), and compute-wer --mode=present writes wer_LMWT_WIP.
# Shared by every recipe (egs/*/s5/local links here). Run from the recipe directory.

# Begin configuration section.
cmd=utils/run.py                # how to run jobs (run.pl convention; see cmd.sh)
min_lmwt=7                      # smallest language-model weight (inverse acoustic scale) tried
max_lmwt=17                     # largest language-model weight tried
word_ins_penalty=0.0,0.5,1.0    # comma-separated word insertion penalties tried
ignore_words=                   # comma-separated words removed from references and hypotheses
stage=0                         # 0: best paths, 1: WER
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <data-dir> <lang-or-graph-dir> <decode-dir>
 e.g.: $0 data/test exp/mono/graph exp/mono/decode_test
Options:
  --cmd <utils/run.py|queue cmd>     # how to run jobs (default: $cmd)
  --min-lmwt <int>                   # minimum LM weight (default: $min_lmwt)
  --max-lmwt <int>                   # maximum LM weight (default: $max_lmwt)
  --word-ins-penalty <list>          # word insertion penalties (default: $word_ins_penalty)
  --ignore-words <list>              # words not scored, e.g. "<SIL>,<UNK>" (default: none)
EOT
  exit 1
fi

data=$1
lang_or_graph=$2
dir=$3
symtab=$lang_or_graph/words.txt
here=$(dirname "$(readlink -f "$0")")

for f in $symtab $data/text; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
ls $dir/lat.*.gz > /dev/null 2>&1 || { echo "$0: no lattices $dir/lat.*.gz" >&2; exit 1; }

mkdir -p $dir/scoring/log
# Filter out the ignored words (both sides), keeping utterances that become empty.
filter="awk -v ign=\"$ignore_words\" 'BEGIN { n = split(ign, a, \",\"); for (i = 1; i <= n; i++) skip[a[i]] = 1 }
  { out = \$1; for (i = 2; i <= NF; i++) if (!(\$i in skip)) out = out \" \" \$i; print out }'"
eval "$filter" < $data/text > $dir/scoring/test_filt.txt

if [ $stage -le 0 ]; then
  $here/score_best_paths.sh --cmd "$cmd" --min-lmwt $min_lmwt --max-lmwt $max_lmwt \
    --word-ins-penalty $word_ins_penalty $lang_or_graph $dir
fi

if [ $stage -le 1 ]; then
  for wip in ${word_ins_penalty//,/ }; do
    for lmwt in $(seq $min_lmwt $max_lmwt); do
      eval "$filter" < $dir/scoring/$lmwt.$wip.tra > $dir/scoring/$lmwt.$wip.tra.filt
    done
    $cmd LMWT=$min_lmwt:$max_lmwt $dir/scoring/log/score.LMWT.$wip.log \
      compute-wer.py --text --mode=present ark:$dir/scoring/test_filt.txt \
        ark,p:$dir/scoring/LMWT.$wip.tra.filt '>' $dir/wer_LMWT_$wip
  done
fi

best=$(grep -H WER $dir/wer_* | utils/best_wer.sh)
echo "$0: done, best: $best"
