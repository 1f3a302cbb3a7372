#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# The harbour recipe: a 1025-word continuous-speech task in the manner of DARPA Resource
# Management (queries and commands to a naval harbour's resource-management system: ships,
# ports, cargo, numbers, units, dates, times), read by espeak-ng voices in noise and reverberation
# and synthesised on this machine (espeak-ng + sox), so anyone can regenerate it. Two decoding
# conditions, as RM had: the grammar's word-pair grammar (data/lang_wp) and a trigram estimated
# on training sentences only (data/lang_tg).
#
#   ./run.sh                                          # every stage that exists
#   ./run.sh --stage 1 --stop-stage 1                 # one stage
#   ./run.sh --num-train-utts 200 --num-test-utts 50 --corpus /tmp/harbour   # a quick run
#   ./run.sh --telephone true --corpus corpus_8k      # 300-3400 Hz at 8 kHz
#
# Stages: 0 corpus (local/synth_harbour.py), 1 data/{train,test}, data/local/dict (CMUdict),
# data/lang, data/lang_wp (word-pair G), data/lang_tg (trigram G), 2 MFCC + CMVN. Planned, with
# their numbers kept free: 3 monophone GMM and alignments, 4 monophone decoding (both G's),
# 5 tri1 (deltas), 6 tri2 (LDA+MLLT), 7 tri3 (SAT), 8 tri decoding, 9 RBM pretraining, 10 DNN
# training on tri3 alignments, 11 DNN decoding, 12 RESULTS.md from exp/.
#
# Everything is written under data/, exp/, mfcc/ and the corpus directory: deleting them and
# running again starts from scratch. Each stage skips what is already done.

# Begin configuration section.
stage=0                # first stage to run
stop_stage=100         # last stage to run
nj=2                   # parallel jobs (synthesis, features)
corpus=corpus          # where the synthesised corpus goes (wavs + lists); any path
seed=777               # random seed of the corpus (sentences, speakers, conditions)
num_train_utts=5100    # training utterances (about 5 hours: 3.5 s each)
num_test_utts=1200     # test utterances (about 11,000 words; speakers unseen in training)
num_train_spk=100      # training speakers (espeak-ng voice + variant pairs)
num_test_spk=40        # test speakers, none of them a training speaker
num_lm_text=0          # more training-side sentences (text only) for the n-gram LM
test_share=0.1         # share of the sentence space kept for test sentences
snr=5:30               # SNR range of noisy utterances, dB
clean_share=0.2        # share of utterances without noise
noise_kinds=white,pink,brown,engine,babble   # noises utterances draw from
reverb_share=0.3       # share of reverberant utterances (sox reverb)
noise_seconds=120      # length of each noise track (tests: a few seconds)
telephone=false        # true: 300-3400 Hz at 8 kHz (conf/mfcc_8k.conf)
lm_order=3             # order of the n-gram LM (data/lang_tg)
# End configuration section.

# --help: the header above and the options with their defaults
help_message="$(awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0")
Options (--name value; defaults):
$(sed -n '/^# Begin configuration section/,/^# End configuration section/p' "$0" | grep -v '^#' \
   | awk -F= '{ n = $1; gsub(/_/, "-", n); v = $0; sub(/^[^=]*=/, "", v); sub(/ +#/, "  #", v); printf "  --%-15s %s\n", n, v }')"

. ./cmd.sh
. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

log() {
  # Dated progress lines: 2024-01-01 12:00:00 (run.sh:88:main) message
  local fname=${BASH_SOURCE[1]##*/}
  echo -e "$(date '+%Y-%m-%d %H:%M:%S') (${fname}:${BASH_LINENO[0]}:${FUNCNAME[1]}) $*"
}

need() {
  # need <stage> <file> <where it comes from>: a stage's input, checked before any work
  [ -e "$2" ] || { echo "$0: stage $1 needs $2 ($3)" >&2; exit 1; }
}

grammar=local/harbour_grammar.txt
mfcc_config=conf/mfcc.conf
$telephone && mfcc_config=conf/mfcc_8k.conf

if [ $stage -le 0 ] && [ $stop_stage -ge 0 ]; then
  log "Stage 0: synthesise the harbour corpus into $corpus ($num_train_utts train, $num_test_utts test utterances)"
  mkdir -p $corpus/log
  $train_cmd $corpus/log/synth_harbour.log \
    local/synth_harbour.py --grammar $grammar --seed $seed --num-train $num_train_utts \
      --num-test $num_test_utts --num-lm-text $num_lm_text --num-train-spk $num_train_spk \
      --num-test-spk $num_test_spk --test-share $test_share --snr $snr \
      --clean-share $clean_share --noise-kinds $noise_kinds --reverb-share $reverb_share \
      --noise-seconds $noise_seconds --telephone $telephone --nj $nj $corpus \
    || { grep ERROR $corpus/log/synth_harbour.log | tail -n 1 >&2; exit 1; }
  grep "done:" $corpus/log/synth_harbour.log | tail -n 1 || true
fi

if [ $stage -le 1 ] && [ $stop_stage -ge 1 ]; then
  log "Stage 1: data/train, data/test, data/local/dict, data/lang, data/lang_wp, data/lang_tg"
  for x in train test; do
    for f in wav.scp text utt2spk spk2utt utt2cond; do
      need 1 $corpus/$x/$f "the corpus: run stage 0"
    done
    if [ -f data/$x/wav.scp ] && cmp -s $corpus/$x/wav.scp data/$x/wav.scp \
        && cmp -s $corpus/$x/text data/$x/text; then
      echo "$0: data/$x exists and matches $corpus/$x, skipping"
    else
      rm -rf data/$x   # a stale directory (other counts) would keep stale feats.scp/cmvn.scp
      mkdir -p data/$x
      cp $corpus/$x/{wav.scp,text,utt2spk,spk2utt,utt2cond} data/$x/
    fi
    utils/validate_data_dir.sh --no-feats data/$x
  done
  # The lexicon covers the whole grammar (as RM's did), from CMUdict with stress (wsj's way).
  local/prepare_dict.py $corpus/vocab.txt data/local/dict
  utils/prepare_lang.sh data/local/dict "<unk>" data/local/lang data/lang
  # Word-pair grammar: a copy of data/lang with the grammar's G (uniform successors).
  rm -rf data/lang_wp && cp -r data/lang data/lang_wp
  local/make_wordpair_g.py --text data/test/text $grammar data/lang_wp
  # N-gram: modified Kneser-Ney on training-side sentences only (the test side of the sentence
  # space never reaches them), perplexity of the test text in data/local/lm/heldout.ppl.
  mkdir -p data/local/lm
  cat data/train/text $corpus/lm/text > data/local/lm/train_text
  utils/train_lm.sh --order $lm_order --heldout data/test/text data/local/lm/train_text data/lang \
    data/local/lm
  utils/format_lm.sh data/lang data/local/lm/lm.arpa.gz data/local/dict/lexicon.txt data/lang_tg
fi

if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
  log "Stage 2: MFCC features ($mfcc_config) and per-speaker CMVN statistics"
  for x in train test; do
    need 2 data/$x/wav.scp "the data directories: run stage 1"
    steps/make_mfcc.sh --nj $nj --cmd "$train_cmd" --mfcc-config $mfcc_config \
      data/$x exp/make_mfcc/$x mfcc
    steps/compute_cmvn_stats.sh data/$x exp/make_mfcc/$x mfcc
    utils/validate_data_dir.sh data/$x
  done
fi

log "Done: stages $stage to $(( stop_stage < 2 ? stop_stage : 2 ))"
