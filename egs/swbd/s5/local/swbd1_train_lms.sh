#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# The Switchboard trigram (Kaldi's sw1.o3g.kn): interpolated Kneser-Ney over the lexicon's
# words, estimated by utils/train_lm.sh on the training transcripts less the first
# --heldout-sents utterances (held out for the perplexity, as Kaldi's local/swbd1_train_lms.sh
# does with 10000), then G.fst in a copy of the lang directory (utils/format_lm.sh).
# Run from egs/swbd/s5.

# Begin configuration section.
order=3                 # n-gram order (Kaldi's sw1_tg: 3)
heldout_sents=10000     # the first N transcripts are held out of the estimation
# End configuration section.

echo "$0 $@"  # Print the command line for logging.
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 5 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <train-text> <lang-dir> <lexicon> <lm-dir> <lang-test-dir>
 e.g.: $0 data/local/train/text data/lang_nosp data/local/dict_nosp/lexicon.txt data/local/lm data/lang_nosp_sw1_tg
Options:
  --order <n>             # n-gram order (default: $order)
  --heldout-sents <n>     # transcripts held out for the perplexity (default: $heldout_sents)
EOT
  exit 1
fi
text=$1
lang=$2
lexicon=$3
lmdir=$4
lang_test=$5

for f in $text $lang/words.txt $lang/L_disambig.fst $lexicon utils/train_lm.sh; do
  [ -e $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

mkdir -p $lmdir
name=sw1_o${order}g
if [ -f $lmdir/$name/lm.arpa.gz ] && [ $lmdir/$name/lm.arpa.gz -nt $text ] \
    && [ $lmdir/$name/lm.arpa.gz -nt $lang/words.txt ]; then
  echo "$0: $lmdir/$name/lm.arpa.gz is newer than $text and $lang/words.txt, skipping estimation"
else
  head -n $heldout_sents $text > $lmdir/heldout.txt
  tail -n +$((heldout_sents + 1)) $text > $lmdir/train.txt
  [ -s $lmdir/train.txt ] || { echo "$0: $text has no more than $heldout_sents transcripts, nothing" \
    "is left to train on (use --heldout-sents)" >&2; exit 1; }
  utils/train_lm.sh --order $order --heldout $lmdir/heldout.txt $lmdir/train.txt $lang $lmdir/$name
fi

utils/format_lm.sh $lang $lmdir/$name/lm.arpa.gz $lexicon $lang_test
echo "$0: done, $lmdir/$name/lm.arpa.gz and $lang_test/G.fst"
