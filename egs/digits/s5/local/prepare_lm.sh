#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# The digits recipe's language model: a Kneser-Ney bigram estimated on the training transcripts
# (local/train_lm.py; words not in the lexicon become the OOV word), then G.fst in a copy of the
# lang directory (utils/format_lm.sh). Run from egs/digits/s5 after utils/prepare_lang.sh.

# Begin configuration section.
order=2                               # n-gram order (1 or 2)
lexicon=data/local/dict/lexicon.txt   # the lexicon <lang-dir> was made from (format_lm.sh's checks)
# End configuration section.

echo "$0 $@"
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 4 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <train-text> <lang-dir> <lm-dir> <lang-test-dir>
 e.g.: $0 data/train/text data/lang data/local/lm data/lang_test
Options:
  --order <n>          # n-gram order, 1 or 2 (default: $order)
  --lexicon <file>     # the lexicon <lang-dir> was made from (default: $lexicon)
EOT
  exit 1
fi
text=$1
lang=$2
lmdir=$3
lang_test=$4

for f in $text $lang/words.txt $lang/oov.txt $lang/L_disambig.fst $lexicon; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

mkdir -p $lmdir
arpa=$lmdir/lm.arpa
if [ -f $arpa ] && [ $arpa -nt $text ] && [ $arpa -nt $lang/words.txt ]; then
  echo "$0: $arpa is newer than $text and $lang/words.txt, skipping estimation"
else
  local/train_lm.py --order $order --lang $lang $text $arpa
fi

utils/format_lm.sh $lang $arpa $lexicon $lang_test

echo "$0: done, $arpa and $lang_test/G.fst"
