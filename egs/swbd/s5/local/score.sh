#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Scoring entry point of the Switchboard recipe (steps/decode.sh and steps/nnet/decode.sh call
# local/score.sh), as Kaldi's egs/swbd/s5c/local/score.sh: a data directory with an stm (eval2000)
# is scored hub5-style per subset by local/score_eval2000.sh; any other (train_dev) by the shared
# local/score.sh with the noise words, <unk> and %hesitation left out, as Kaldi's score_basic.sh.
# Options are passed on unchanged. Run from egs/swbd/s5.

if [ $# -lt 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <data-dir> <lang-or-graph-dir> <decode-dir>
 e.g.: $0 data/eval2000 exp/mono/graph_nosp_sw1_tg exp/mono/decode_eval2000_sw1_tg
Options (passed to local/score_eval2000.sh or the shared local/score.sh):
  --cmd <cmd> --min-lmwt <int> --max-lmwt <int> --word-ins-penalty <list> --stage <n>
EOT
  exit 1
fi
data=${@: -3:1}
here=$(dirname "$(readlink -f "$0")")
if [ -f $data/stm ]; then
  echo "$0: $data/stm exists: using local/score_eval2000.sh"
  exec local/score_eval2000.sh "$@"
fi
echo "$0: $data/stm does not exist: using the shared local/score.sh"
exec $here/../../../../local/score.sh --ignore-words "[noise],[laughter],[vocalized-noise],<unk>,%hesitation" "$@"
