#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# The yesno dictionary directory, as Kaldi's egs/yesno/s5/local/prepare_dict.sh makes it from its
# input/ files: words YES (phone Y) and NO (phone N), and <SIL> (phone SIL, the silence and
# optional-silence phone; the OOV word run.sh gives utils/prepare_lang.sh). Run from egs/yesno/s5.

# Begin configuration section.
# End configuration section.

echo "$0 $@"
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 1 ]; then
  cat >&2 <<EOT
Usage: $0 <dict-dir>
 e.g.: $0 data/local/dict
Writes lexicon.txt, lexicon_words.txt, nonsilence_phones.txt, silence_phones.txt and
optional_silence.txt.
EOT
  exit 1
fi
dir=$1

# Written under a temporary name and renamed: an interrupted run leaves no half dictionary.
rm -rf $dir.tmp
mkdir -p $dir.tmp
printf '%s\n' "<SIL> SIL" "YES Y" "NO N" > $dir.tmp/lexicon.txt
printf '%s\n' "YES Y" "NO N" > $dir.tmp/lexicon_words.txt
printf '%s\n' Y N > $dir.tmp/nonsilence_phones.txt
echo SIL > $dir.tmp/silence_phones.txt
echo SIL > $dir.tmp/optional_silence.txt
rm -rf $dir
mv $dir.tmp $dir

echo "$0: done, $dir (words YES NO <SIL>, phones Y N SIL)"
