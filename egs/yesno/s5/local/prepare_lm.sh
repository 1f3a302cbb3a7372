#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# The yesno task grammar, as Kaldi's egs/yesno/s5/local/prepare_lm.sh makes it: the unigram ARPA
# file of Kaldi's input/task.arpabo (YES, NO and </s> at log10 probability -1, <s> at -99), written
# to <lm-dir>/lm_tg.arpa, then G.fst in a copy of <lang-dir> (utils/format_lm.sh: arpa2fst with #0
# on the backoff arcs, and the checks Kaldi's prepare_lm.sh runs: stochasticity, no cycle of
# empty words). Run from egs/yesno/s5 after utils/prepare_lang.sh.

# Begin configuration section.
lexicon=data/local/dict/lexicon.txt   # the lexicon <lang-dir> was made from (format_lm.sh's checks)
# End configuration section.

echo "$0 $@"
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <lang-dir> <lm-dir> <lang-test-dir>
 e.g.: $0 data/lang data/local data/lang_test_tg
Options:
  --lexicon <file>     # the lexicon <lang-dir> was made from (default: $lexicon)
EOT
  exit 1
fi
lang=$1
lmdir=$2
lang_test=$3

for f in $lang/words.txt $lang/L_disambig.fst $lexicon; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

mkdir -p $lmdir
arpa=$lmdir/lm_tg.arpa
# Kaldi's name for it (lang_test_tg, "tg") although it is a unigram.
printf '%s\n' "" '\data\' "ngram 1=4" "" '\1-grams:' "-1	NO" "-1	YES" "-99	<s>" "-1	</s>" "" \
  '\end\' > $arpa.tmp
if cmp -s $arpa.tmp $arpa; then rm $arpa.tmp; else mv $arpa.tmp $arpa; fi

utils/format_lm.sh $lang $arpa $lexicon $lang_test

echo "$0: done, $arpa and $lang_test/G.fst"
