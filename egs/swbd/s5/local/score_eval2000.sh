#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Scores eval2000 lattices hub5-style with compute-wer, for the whole set and its Switchboard
# (sw_*) and CallHome (en_*) parts, as Kaldi's egs/swbd/s5c/local/score_sclite.sh does with sclite:
# best paths over a grid of LM weights and insertion penalties, then reference (the stm's words)
# and hypotheses both through the GLM mappings with hesitations, noise words, <unk> and partial
# words removed (local/hub5_filter.py: close to, not equal to, hubscr.pl's numbers).
# Writes <decode-dir>/wer_LMWT_WIP (all), score_swbd/wer_LMWT_WIP, score_callhm/wer_LMWT_WIP.
# Run from egs/swbd/s5.

# Begin configuration section.
cmd=utils/run.py                # how to run jobs (run.pl convention; see cmd.sh)
min_lmwt=5                      # smallest language-model weight tried (Kaldi's score_sclite.sh)
max_lmwt=20                     # largest language-model weight tried
word_ins_penalty=0.0,0.5,1.0    # comma-separated word insertion penalties tried
stage=0                         # 0: best paths, 1: hub5 filtering, 2: WER per subset
# End configuration section.

echo "$0 $@"  # Print the command line for logging.
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <data-dir> <lang-or-graph-dir> <decode-dir>
 e.g.: $0 data/eval2000 exp/mono/graph_nosp_sw1_tg exp/mono/decode_eval2000_sw1_tg
Options:
  --cmd <utils/run.py|queue cmd>     # how to run jobs (default: $cmd)
  --min-lmwt <int>                   # minimum LM weight (default: $min_lmwt)
  --max-lmwt <int>                   # maximum LM weight (default: $max_lmwt)
  --word-ins-penalty <list>          # word insertion penalties (default: $word_ins_penalty)
  --stage <n>                        # 0: best paths, 1: filtering, 2: WER (default: $stage)
EOT
  exit 1
fi
data=$1
lang_or_graph=$2
dir=$3
symtab=$lang_or_graph/words.txt
shared=$(dirname "$(readlink -f "$0")")/../../../../local   # the recipes' shared local/ scripts

for f in $data/text $data/glm $data/stm $symtab; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

mkdir -p $dir/scoring/log $dir/scoring_hub5
wips=${word_ins_penalty//,/ }

if [ $stage -le 0 ]; then
  ls $dir/lat.*.gz > /dev/null 2>&1 || { echo "$0: no lattices $dir/lat.*.gz" >&2; exit 1; }
  $shared/score_best_paths.sh --cmd "$cmd" --min-lmwt $min_lmwt --max-lmwt $max_lmwt \
    --word-ins-penalty $word_ins_penalty $lang_or_graph $dir
fi

if [ $stage -le 1 ]; then
  # one process filters the reference and every hypothesis file
  pairs=("$data/text" "$dir/scoring_hub5/ref.txt")
  for wip in $wips; do
    for lmwt in $(seq $min_lmwt $max_lmwt); do
      [ -f $dir/scoring/$lmwt.$wip.tra ] || { echo "$0: no such file $dir/scoring/$lmwt.$wip.tra" >&2; exit 1; }
      pairs+=("$dir/scoring/$lmwt.$wip.tra" "$dir/scoring_hub5/$lmwt.$wip.txt")
    done
  done
  local/hub5_filter.py --prog "$0" $data/glm "${pairs[@]}"
fi

if [ $stage -le 2 ]; then
  # subsets by utterance-id prefix, as Kaldi's grep ^sw_ / ^en_ (local/hub5_filter.py's SUBSETS)
  for subset in all swbd callhm; do
    case $subset in all) prefix= ;; swbd) prefix=sw_ ;; callhm) prefix=en_ ;; esac
    out=$dir; [ $subset = all ] || out=$dir/score_$subset
    mkdir -p $out
    awk -v p="$prefix" 'p == "" || index($1, p) == 1' $dir/scoring_hub5/ref.txt > $dir/scoring_hub5/ref.$subset.txt
    if [ ! -s $dir/scoring_hub5/ref.$subset.txt ]; then
      echo "$0: no $subset utterances in $data, not scoring that subset"
      continue
    fi
    for wip in $wips; do
      for lmwt in $(seq $min_lmwt $max_lmwt); do
        awk -v p="$prefix" 'p == "" || index($1, p) == 1' $dir/scoring_hub5/$lmwt.$wip.txt \
          > $dir/scoring_hub5/$lmwt.$wip.$subset.txt
      done
      $cmd LMWT=$min_lmwt:$max_lmwt $dir/scoring/log/score.$subset.LMWT.$wip.log \
        compute-wer.py --text --mode=present ark:$dir/scoring_hub5/ref.$subset.txt \
          ark,p:$dir/scoring_hub5/LMWT.$wip.$subset.txt '>' $out/wer_LMWT_$wip
    done
    echo "$0: $subset: $(grep -H WER $out/wer_* | utils/best_wer.sh)"
  done
fi
echo "$0: done"
