#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Hub5'00 (eval2000) as a Kaldi data directory, as Kaldi's egs/swbd/s5c/local/eval2000_data_prep.sh:
# segments from the pem file, words from the stm, and the stm and GLM kept for scoring
# (local/score_eval2000.sh). The work is in local/eval2000_data_prep.py. Run from egs/swbd/s5.

# Begin configuration section.
sph2pipe=sph2pipe   # the sph2pipe command written into wav.scp
# End configuration section.

echo "$0 $@"  # Print the command line for logging.
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <speech-dir> <transcript-dir> <data-dir>
 e.g.: $0 /export/corpora2/LDC/LDC2002S09/hub5e_00 /export/corpora2/LDC/LDC2002T43 data/eval2000
<speech-dir> (LDC2002S09) holds english/*.sph and english/hub5e_00.pem; <transcript-dir>
(LDC2002T43, or its 2000_hub5_eng_eval_tr) holds reference/hub5e00.english.000405.stm and
reference/en20000405_hub5.glm.
Options:
  --sph2pipe <cmd>      # sph2pipe command for wav.scp (default: $sph2pipe)
EOT
  exit 1
fi
sdir=$1
tdir=$2
data=$3

[ -d $sdir/english ] || { echo "$0: no such directory $sdir/english (the Hub5'00 audio," \
  "LDC2002S09 hub5e_00)" >&2; exit 1; }
[ -d $tdir ] || { echo "$0: no such directory $tdir (the Hub5'00 transcripts, LDC2002T43)" >&2; exit 1; }

if [ -f $data/segments ] && [ -f $data/stm ] && [ -f $data/glm ] && [ $data/segments -nt $sdir/english/hub5e_00.pem ]; then
  echo "$0: $data exists and is newer than $sdir/english/hub5e_00.pem, skipping"
  exit 0
fi

local/eval2000_data_prep.py --prog "$0" --sph2pipe "$sph2pipe" $sdir $tdir $data
utils/validate_data_dir.sh --no-feats $data
