#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Prepares the Switchboard dictionary directory from the MS-State ms98 lexicon, as Kaldi's
# egs/swbd/s5c/local/swbd1_prepare_dict.sh (see local/swbd1_prepare_dict.py for what is kept
# and what is left out). Run from egs/swbd/s5.

# Begin configuration section.
# End configuration section.

echo "$0 $@"  # Print the command line for logging.
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 2 ]; then
  cat >&2 <<EOT
Usage: $0 <ms98-transcript-dir> <dict-dir>
 e.g.: $0 /export/corpora3/LDC/LDC97S62/transcriptions/swb_ms98_transcriptions data/local/dict_nosp
<ms98-transcript-dir> holds sw-ms98-dict.text (LDC97S62 transcriptions/swb_ms98_transcriptions,
or switchboard_word_alignments.tar.gz from openslr.org/resources/5).
EOT
  exit 1
fi
ms98=$1
dir=$2

srcdict=$ms98/sw-ms98-dict.text
[ -f $srcdict ] || { echo "$0: no such file $srcdict (the ms98 dictionary of Switchboard-1," \
  "LDC97S62 transcriptions/swb_ms98_transcriptions or openslr.org/resources/5)" >&2; exit 1; }

if [ -f $dir/lexicon.txt ] && [ $dir/lexicon.txt -nt $srcdict ]; then
  echo "$0: $dir/lexicon.txt is newer than $srcdict, skipping"
  exit 0
fi

local/swbd1_prepare_dict.py --prog "$0" $srcdict $dir
