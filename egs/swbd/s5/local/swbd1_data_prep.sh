#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Switchboard-1 Release 2 (LDC97S62) training data as a Kaldi data directory, as Kaldi's
# egs/swbd/s5c/local/swbd1_data_prep.sh: segments and words from the MS-State ms98 transcripts,
# both sides of every SPHERE file through sph2pipe. The work is in local/swbd1_data_prep.py.
# Run from egs/swbd/s5.

# Begin configuration section.
sph2pipe=sph2pipe           # the sph2pipe command written into wav.scp
local_dir=data/local/train  # where every transcribed utterance's text goes (the LM's input)
# End configuration section.

echo "$0 $@"  # Print the command line for logging.
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <swbd-dir> <ms98-transcript-dir> <data-dir>
 e.g.: $0 /export/corpora3/LDC/LDC97S62 /export/corpora3/LDC/LDC97S62/transcriptions/swb_ms98_transcriptions data/train
<swbd-dir> is LDC97S62 (the .sph files are found anywhere below it); <ms98-transcript-dir> holds
NN/NNNN/swNNNNA-ms98-a-trans.text (LDC97S62 transcriptions/, or openslr.org/resources/5).
Options:
  --sph2pipe <cmd>      # sph2pipe command for wav.scp (default: $sph2pipe)
  --local-dir <dir>     # text of all transcribed utterances goes here (default: $local_dir)
EOT
  exit 1
fi
swbd=$1
ms98=$2
data=$3

[ -d $swbd ] || { echo "$0: no such directory $swbd (Switchboard-1 Release 2, LDC97S62)" >&2; exit 1; }
[ -d $ms98 ] || { echo "$0: no such directory $ms98 (the ms98 transcripts of LDC97S62, or" \
  "openslr.org/resources/5)" >&2; exit 1; }

if [ -f $data/segments ] && [ -f $data/text ] && [ -f $local_dir/text ] \
    && [ -z "$(find $ms98 -newer $data/text -name '*-trans.text' -print -quit)" ]; then
  echo "$0: $data exists and is newer than the transcripts in $ms98, skipping"
  exit 0
fi

local/swbd1_data_prep.py --prog "$0" --sph2pipe "$sph2pipe" $swbd $ms98 $data $local_dir
utils/validate_data_dir.sh --no-feats $data
