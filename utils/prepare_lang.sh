#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Makes a lang directory (data/lang: phones.txt, words.txt, phones/, topo, L.fst, L_disambig.fst)
# from a dictionary directory (data/local/dict), as Kaldi's utils/prepare_lang.sh. Run from the
# recipe directory. The work is bin/prepare-lang.py (nnetmix/lang/prepare.py); FSTs are written
# with kaldifst.

# Begin configuration section.
num_sil_states=5                 # HMM states of silence phones (1, or 3 and more)
num_nonsil_states=3              # HMM states of the other phones
position_dependent_phones=true   # mark phones _B _E _I _S by their position in the word
share_silence_phones=false       # if true, all silence phones share one tree root (pdfs)
share_state_roots=true           # if true, one tree root for all the states of a phone
sil_prob=0.5                     # probability of optional silence between words, 0 <= p < 1
num_extra_phone_disambig_syms=1  # phone disambiguation symbols beyond the lexicon's
lexicon_fst_style=py             # py: Kaldi's make_lexicon_fst.py layout; pl: the older .pl one
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 4 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <dict-src-dir> <oov-dict-entry> <tmp-dir> <lang-dir>
 e.g.: $0 data/local/dict "<UNK>" data/local/lang data/lang
<dict-src-dir> holds lexicon.txt (or lexiconp.txt), silence_phones.txt, nonsilence_phones.txt,
optional_silence.txt and (maybe empty) extra_questions.txt.
Options:
  --num-sil-states <n>                   # HMM states of silence phones (default: $num_sil_states)
  --num-nonsil-states <n>                # HMM states of other phones (default: $num_nonsil_states)
  --position-dependent-phones <true|false>  # _B _E _I _S phones (default: $position_dependent_phones)
  --share-silence-phones <true|false>    # one tree root for all silence phones (default: $share_silence_phones)
  --sil-prob <p>                         # optional silence probability (default: $sil_prob)
  --lexicon-fst-style <py|pl>            # layout of the optional silence in L.fst (default: $lexicon_fst_style)
EOT
  exit 1
fi

srcdir=$1
oov_word=$2
tmpdir=$3
dir=$4

for f in $srcdir/silence_phones.txt $srcdir/nonsilence_phones.txt $srcdir/optional_silence.txt; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
if [ ! -f $srcdir/lexicon.txt ] && [ ! -f $srcdir/lexiconp.txt ]; then
  echo "$0: no such file $srcdir/lexicon.txt (nor $srcdir/lexiconp.txt)" >&2; exit 1
fi

# Idempotence: the same options over an unchanged dictionary give the same directory.
stamp="srcdir=$srcdir oov=$oov_word pd=$position_dependent_phones sil_prob=$sil_prob"
stamp+=" sil_states=$num_sil_states nonsil_states=$num_nonsil_states"
stamp+=" share_sil=$share_silence_phones share_roots=$share_state_roots"
stamp+=" extra_disambig=$num_extra_phone_disambig_syms style=$lexicon_fst_style"
if [ -f $dir/.done ] && [ "$(cat $dir/.done)" == "$stamp" ]; then
  fresh=true
  for f in $srcdir/*.txt; do
    [ $dir/.done -nt $f ] || fresh=false
  done
  if $fresh; then
    echo "$0: $dir exists and is newer than $srcdir, skipping"
    exit 0
  fi
fi
rm -f $dir/.done

bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
"$bin/prepare-lang.py" --prog="$0" \
  --num-sil-states=$num_sil_states --num-nonsil-states=$num_nonsil_states \
  --position-dependent-phones=$position_dependent_phones \
  --share-silence-phones=$share_silence_phones --share-state-roots=$share_state_roots \
  --sil-prob=$sil_prob --num-extra-phone-disambig-syms=$num_extra_phone_disambig_syms \
  --lexicon-fst-style=$lexicon_fst_style \
  "$srcdir" "$oov_word" "$tmpdir" "$dir"

echo "$stamp" > $dir/.done
echo "$0: done, $dir"
