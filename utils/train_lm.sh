#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Estimates an n-gram LM from a Kaldi text file over a lang directory's words: interpolated
# modified Kneser-Ney, as Kaldi recipes get it from SRILM's ngram-count -kndiscount -interpolate
# (bin/ngram-count.py). Writes <out-dir>/lm.arpa.gz; prints the held-out perplexity with
# --heldout. Run from the recipe directory.

# Begin configuration section.
order=3               # n-gram order (1-4)
oov_word=             # unknown-word token; default: <lang-dir>/oov.txt if there is one, else <unk>
heldout=              # Kaldi text file whose perplexity is printed (kept in <out-dir>/heldout.ppl)
discount=kn           # kn: modified Kneser-Ney (-kndiscount); ukn: original (-ukndiscount)
ngram_count_opts=     # more ngram-count.py options, SRILM's syntax, e.g. "-gt3min 1 -gt4min 1"
# End configuration section.

echo "$0 $@"  # Print the command line for logging.
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <text> <lang-dir|words.txt> <out-dir>
 e.g.: $0 --order 3 --heldout data/local/lm/heldout.txt data/train/text data/lang data/local/lm
<text> is a Kaldi text file (utterance id, then the words); the LM's vocabulary is the first
column of words.txt less <eps> and the #N disambiguation symbols, text words outside it become
the unknown-word token, which stays in the LM (ngram-count -vocab V -unk -map-unk OOV).
Options:
  --order <n>               # n-gram order, 1-4 (default: $order)
  --oov-word <word>         # unknown-word token (default: <lang-dir>/oov.txt, else <unk>)
  --heldout <text>          # Kaldi text file to compute the perplexity of
  --discount kn|ukn         # modified or original Kneser-Ney (default: $discount)
  --ngram-count-opts <opts> # more options for ngram-count.py (default: '$ngram_count_opts')
EOT
  exit 1
fi
text=$1
lang=$2
dir=$3

if [ -d $lang ]; then
  words=$lang/words.txt
  if [ -z "$oov_word" ] && [ -f $lang/oov.txt ]; then
    oov_word=$(head -n 1 $lang/oov.txt | awk '{print $1}')
  fi
else
  words=$lang
fi
[ -n "$oov_word" ] || oov_word="<unk>"
case $discount in
  kn) method=-kndiscount ;;
  ukn) method=-ukndiscount ;;
  *) echo "$0: --discount must be kn or ukn, got '$discount'" >&2; exit 1 ;;
esac

for f in $text $words $heldout; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

mkdir -p $dir
lm=$dir/lm.arpa.gz
settings="order=$order oov_word=$oov_word discount=$discount ngram_count_opts=$ngram_count_opts"
if [ -f $lm ] && [ $lm -nt $text ] && [ $lm -nt $words ] && [ -f $dir/.settings ] \
    && [ "$(cat $dir/.settings)" == "$settings" ]; then
  echo "$0: $lm exists (same settings, newer than $text and $words), skipping estimation"
else
  rm -f $dir/.settings
  # The text without its utterance ids; a transcript with no words becomes a blank line, which
  # ngram-count skips.
  LC_ALL=C awk '{sub(/^[^ \t]+[ \t]*/, ""); print}' $text > $dir/train.txt
  LC_ALL=C awk '$1 != "<eps>" && $1 !~ /^#[0-9]+$/ && $1 != "<s>" && $1 != "</s>" {print $1}' \
    $words > $dir/vocab
  if ! grep -qxF -- "$oov_word" $dir/vocab; then
    echo "$0: the unknown-word token '$oov_word' is not in $words (use --oov-word)" >&2
    exit 1
  fi
  ngram-count.py -order $order $method -interpolate -text $dir/train.txt -vocab $dir/vocab \
    -unk -map-unk "$oov_word" $ngram_count_opts -lm $lm
  echo "$settings" > $dir/.settings
fi

if [ -n "$heldout" ]; then
  LC_ALL=C awk '{sub(/^[^ \t]+[ \t]*/, ""); print}' $heldout > $dir/heldout.txt
  ngram.py -order $order -lm $lm -ppl $dir/heldout.txt -unk -map-unk "$oov_word" \
    | tee $dir/heldout.ppl
fi

echo "$0: done, $lm (order $order, $discount discounting)"
