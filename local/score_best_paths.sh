#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# The best-path stage of local/score.sh and egs/swbd/s5/local/score_eval2000.sh: writes
# <decode-dir>/scoring/LMWT.WIP.tra for each LM weight and word insertion penalty with
# lattice-best-path-grid.py, one job per penalty, run side by side, each reading the lattices
# once. Run from the recipe directory.

# Begin configuration section.
cmd=utils/run.py                # how to run jobs (run.pl convention; see cmd.sh)
min_lmwt=7                      # smallest language-model weight (inverse acoustic scale)
max_lmwt=17                     # largest language-model weight
word_ins_penalty=0.0,0.5,1.0    # comma-separated word insertion penalties, one job each
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 2 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <lang-or-graph-dir> <decode-dir>
 e.g.: $0 exp/mono/graph exp/mono/decode_test
Options:
  --cmd <utils/run.py|queue cmd>     # how to run jobs (default: $cmd)
  --min-lmwt <int>                   # minimum LM weight (default: $min_lmwt)
  --max-lmwt <int>                   # maximum LM weight (default: $max_lmwt)
  --word-ins-penalty <list>          # word insertion penalties (default: $word_ins_penalty)
EOT
  exit 1
fi

symtab=$1/words.txt
dir=$2
[ -f $symtab ] || { echo "$0: no such file $symtab" >&2; exit 1; }
ls $dir/lat.*.gz > /dev/null 2>&1 || { echo "$0: no lattices $dir/lat.*.gz" >&2; exit 1; }
mkdir -p $dir/scoring/log

pids=()
for wip in ${word_ins_penalty//,/ }; do
  $cmd $dir/scoring/log/best_path.$wip.log \
    lattice-best-path-grid.py --min-lmwt=$min_lmwt --max-lmwt=$max_lmwt \
      --word-ins-penalty=$wip --word-symbol-table=$symtab \
      "ark:gunzip -c $dir/lat.*.gz|" $dir/scoring/LMWT.WIP.tra &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait $pid || failed=$((failed + 1)); done
if [ $failed -gt 0 ]; then
  echo "$0: $failed of ${#pids[@]} best-path jobs failed, logs in $dir/scoring/log/best_path.*.log" >&2
  exit 1
fi
echo "$0: done, $dir/scoring/LMWT.WIP.tra for LMWT $min_lmwt..$max_lmwt, WIP $word_ins_penalty"
