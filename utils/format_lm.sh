#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Converts an ARPA language model into G.fst and puts it in a copy of a lang directory
# (data/lang_test), as Kaldi's utils/format_lm.sh: arpa2fst with #0 on the backoff arcs and
# <s>, </s> removed, words mapped through words.txt, then the checks on G. Run from the recipe
# directory.

# Begin configuration section.
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 4 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <lang-dir> <arpa-LM> <lexicon> <out-dir>
 e.g.: $0 data/lang data/local/lm/lm.arpa.gz data/local/dict/lexicon.txt data/lang_test
Converts an ARPA language model (plain or gzipped) to <out-dir>/G.fst; <out-dir> gets a copy of
<lang-dir>. <lexicon> is read to find words with empty pronunciations for the checks.
EOT
  exit 1
fi

lang_dir=$1
lm=$2
lexicon=$3
out_dir=$4

for f in $lang_dir/words.txt $lang_dir/phones.txt $lang_dir/L.fst $lang_dir/L_disambig.fst $lm $lexicon; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

if [ -f $out_dir/G.fst ] && [ $out_dir/G.fst -nt $lm ] && [ $out_dir/G.fst -nt $lang_dir/words.txt ] \
    && cmp -s $lang_dir/words.txt $out_dir/words.txt && cmp -s $lang_dir/L_disambig.fst $out_dir/L_disambig.fst; then
  echo "$0: $out_dir/G.fst is newer than $lm and $lang_dir, skipping"
  exit 0
fi

mkdir -p $out_dir
echo "$0: converting '$lm' to FST"
# -ef: the two are the same directory; skip the copy then.
if [ ! $out_dir -ef $lang_dir ]; then
  rm -rf $out_dir/phones
  for f in phones.txt words.txt topo L.fst L_disambig.fst phones oov.int oov.txt; do
    cp -r $lang_dir/$f $out_dir
  done
fi

rm -f $out_dir/G.fst
arpa2fst.py --disambig-symbol='#0' --read-symbol-table=$out_dir/words.txt $lm $out_dir/G.fst

# fstisstochastic's view of G and the check that G has no cycle of empty words (#0 or words with
# no phones), which would make LG non-determinizable.
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
if ! "$bin/check-g-properties.py" --prog="$0" \
    $out_dir/G.fst $lexicon $out_dir/words.txt; then
  rm -f $out_dir/G.fst
  exit 1
fi

echo "$0: done, succeeded in formatting LM '$lm' into $out_dir/G.fst"
