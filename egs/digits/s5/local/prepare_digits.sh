#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Synthesises the connected-digits corpus (local/synth_digits.py) into <corpus-dir>, then writes the
# Kaldi data directories <data-dir>/{train,test} and the dictionary <data-dir>/local/dict.
# Run from egs/digits/s5. Both parts skip work that is already done.

# Begin configuration section.
cmd=utils/run.py     # job wrapper for the synthesis (cmd.sh's $train_cmd)
nj=2                 # espeak-ng | sox pipelines run at once
seed=777             # random seed of the whole corpus (texts, speakers, pitch and speed)
num_train=2000       # training utterances
num_test=1000        # test utterances
num_train_spk=200    # training speakers (espeak-ng voice + variant pairs)
num_test_spk=20      # test speakers, none of them a training speaker
max_words=7          # longest digit string
snr=5:20             # SNR range (dB) of the noisy utterances
clean_share=0.2      # share of utterances without noise (1: the clean corpus)
glottal_onset=true   # a glottal stop before the vowel-initial words (OH, EIGHT); false: none
synth_only=false     # true: make the corpus and stop (no data directories)
# End configuration section.

echo "$0 $*"
[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 2 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <corpus-dir> <data-dir>
 e.g.: $0 --nj 2 corpus data
Options:
  --nj <n>                 # synthesis pipelines run at once (default: $nj)
  --cmd <cmd>              # job wrapper (default: $cmd)
  --seed <n>               # random seed (default: $seed)
  --num-train <n>          # training utterances (default: $num_train)
  --num-test <n>           # test utterances (default: $num_test)
  --num-train-spk <n>      # training speakers (default: $num_train_spk)
  --num-test-spk <n>       # test speakers (default: $num_test_spk)
  --snr <low:high>         # SNR range of the noisy utterances, dB (default: $snr)
  --clean-share <x>        # share of utterances without noise (default: $clean_share)
  --glottal-onset <bool>   # a glottal stop before OH and EIGHT (default: $glottal_onset)
  --synth-only <bool>      # only make the corpus (default: $synth_only)
EOF
  exit 1
fi
corpus=$1
data=$2

for tool in espeak-ng sox; do
  command -v $tool >/dev/null || { echo "$0: $tool not found (install it: utils/install_debian_deps.sh espeak-ng sox)" >&2; exit 1; }
done

# 1. The corpus: wavs plus Kaldi lists per split. synth_digits.py checks a finished corpus
# against the options (other options are refused) and skips it.
echo "$0: synthesising $num_train + $num_test utterances into $corpus with $nj jobs (log: $corpus/log/synth_digits.log)"
mkdir -p $corpus/log
$cmd $corpus/log/synth_digits.log \
  local/synth_digits.py --seed $seed --num-train $num_train --num-test $num_test \
    --num-train-spk $num_train_spk --num-test-spk $num_test_spk --max-words $max_words \
    --snr $snr --clean-share $clean_share --glottal-onset $glottal_onset --nj $nj $corpus
grep -h -o -e "exists - skipping" -e "done: .*" $corpus/log/synth_digits.log | sed "s|^|$0: |" || true
$synth_only && exit 0

# 2. Data directories: the corpus lists, as they are (C-sorted, speaker-prefixed utterance ids).
for x in train test; do
  for f in wav.scp text utt2spk spk2utt; do
    [ -f $corpus/$x/$f ] || { echo "$0: no such file $corpus/$x/$f" >&2; exit 1; }
  done
  if [ -f $data/$x/wav.scp ] && cmp -s $corpus/$x/wav.scp $data/$x/wav.scp \
      && cmp -s $corpus/$x/text $data/$x/text; then
    echo "$0: $data/$x exists and matches $corpus/$x, skipping"
    continue
  fi
  rm -rf $data/$x   # a stale directory (other counts) would keep stale feats.scp/cmvn.scp
  mkdir -p $data/$x
  cp $corpus/$x/{wav.scp,text,utt2spk,spk2utt} $data/$x/
  echo "$0: wrote $data/$x ($(wc -l < $data/$x/text) utterances, $(wc -l < $data/$x/spk2utt) speakers)"
done

# 3. Dictionary: CMU/ARPAbet pronunciations (no stress marks) of the eleven words.
dict=$data/local/dict
mkdir -p $dict
{
  echo "!SIL sil"
  echo "<UNK> spn"
  cat <<EOF
ZERO z ih r ow
ONE w ah n
TWO t uw
THREE th r iy
FOUR f ao r
FIVE f ay v
SIX s ih k s
SEVEN s eh v ah n
EIGHT ey t
NINE n ay n
OH ow
EOF
} | LC_ALL=C sort > $dict/lexicon.txt
printf '%s\n' sil spn > $dict/silence_phones.txt
echo sil > $dict/optional_silence.txt
cut -d' ' -f2- $dict/lexicon.txt | tr ' ' '\n' | grep -v -x -e sil -e spn | LC_ALL=C sort -u \
  > $dict/nonsilence_phones.txt
# One question for the silence phones, as Kaldi's prepare_dict scripts write (no stress variants).
tr '\n' ' ' < $dict/silence_phones.txt | sed 's/ $//' > $dict/extra_questions.txt
echo >> $dict/extra_questions.txt

echo "$0: done, $data/train, $data/test and $dict"
