#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Recorded speech: the Free Spoken Digit Dataset (FSDD), 3000 isolated English digits spoken by 6
# speakers, 8 kHz. An isolated-word grammar over the ten digits, a CMUdict lexicon, 8 kHz MFCCs, a
# monophone GMM for alignments, RBM pretraining and a DNN trained over MPI, as egs/digits/s5.
#
# The corpus is not downloaded: clone it and pass the clone with --fsdd-dir (the folder that
# holds recordings/). FSDD is CC BY-SA 4.0, by Zohar Jackson and contributors:
#   git clone https://github.com/Jakobovski/free-spoken-digit-dataset
#   git -C free-spoken-digit-dataset checkout 26eb9aaf76e81b692f806f9140c2d2777410d7a1
#
#   ./run.sh --fsdd-dir /path/to/free-spoken-digit-dataset                   # the official split
#   ./run.sh --fsdd-dir DIR --split speaker --test-speaker theo              # leave theo out
#   ./run.sh --fsdd-dir DIR --stage 2 --stop-stage 2                         # one stage
#   local/make_results.py                                                    # RESULTS.md from exp/
#
# Options (defaults in the configuration section of this file):
#   --fsdd-dir DIR            the FSDD clone (required for stage 0)
#   --split official|speaker  official: takes 0-4 of every speaker and digit are the test set
#                             (300 test, 2700 train); speaker: leave one speaker out
#   --test-speaker NAME       with --split speaker: jackson nicolas theo yweweler george lucas
#   --nj N                    parallel jobs (features, GMM, decoding)
#   --stage N --stop-stage N  the stages to run (0-7)
#   --dnn-hid-layers N --dnn-hid-dim N --pretrain true|false --dnn-num-workers N
#   --dnn-average-every N --dnn-optimizer ngsgd|sgd --dnn-prior-cutoff X --dnn-opts "..."
#   --dnn-tag TAG             the DNN options, as egs/digits/s5/run.sh
#   --scoring-opts "..."      local/score.sh options for both decodes (default: each decode
#                             script's own LM-weight and penalty sweep)
#   --dnn-cv auto|takes|speaker  Newbob's CV set: the training takes under 10 (5-9 in the official
#                             split), or a held-out speaker; auto: takes for official, else speaker
#
# Stages: 0 data/<split>/{train,test}, 1 dictionary (CMUdict) + data/lang + data/lang_test (the
# one-word G), 2 MFCC + CMVN, 3 monophone GMM + alignments, 4 monophone decoding, 5 RBM
# pretraining, 6 DNN training, 7 DNN decoding. A split's data and models go under data/<split>/
# and exp/<split>/ (<split>: official, or loso_<speaker>), so both splits sit side by side;
# exp/<split>/stage_seconds/N holds each stage's wall time (stages 6-7: in the DNN's directory).
# Each stage skips what is done.

. utils/recipe_signals.sh   # a signal to run.sh ends its whole process tree

# Begin configuration section.
stage=0                # first stage to run
stop_stage=100         # last stage to run
nj=2                   # parallel jobs (features, GMM training and alignment, decoding)
fsdd_dir=              # the FSDD clone, holding recordings/ (see the header: where to get it)
split=official         # official (takes 0-4 are test) or speaker (leave --test-speaker out)
test_speaker=          # the held-out speaker of --split speaker
dnn_hid_layers=2       # DNN hidden layers
dnn_hid_dim=512        # DNN neurons per hidden layer
pretrain=true          # RBM pretraining (stage 5) before DNN training; false: random initialisation
dnn_num_workers=2      # MPI ranks for DNN training (1: the single-worker nnet-train-frmshuff.py)
dnn_average_every=10   # minibatches between model averages
dnn_optimizer=ngsgd    # ngsgd: natural-gradient SGD; sgd: plain
dnn_cv=auto            # Newbob's CV set: takes (the training takes under 10 of every speaker and digit:
                       # 5-9 in the official split), speaker (one training speaker held out), or auto
                       # (takes for the official split, speaker otherwise)
dnn_prior_cutoff=1     # decoding: pdfs with a count below this (no training frames) are never chosen
dnn_opts=              # more steps/nnet/train.sh options, e.g. "--bmuf true"
dnn_tag=               # appended to the DNN directory name, to keep variants (dnn_opts) apart
scoring_opts=          # local/score.sh options for both decodes, e.g. "--min-lmwt 9 --max-lmwt 11
                       # --word-ins-penalty 0.0" (a quick run); empty: each decode script's own sweep
# End configuration section.

. ./cmd.sh
. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

log() {
  # Dated progress lines: 2024-01-01 12:00:00 (run.sh:88:main) message
  local fname=${BASH_SOURCE[1]##*/}
  echo -e "$(date '+%Y-%m-%d %H:%M:%S') (${fname}:${BASH_LINENO[0]}:${FUNCNAME[1]}) $*"
}

case $split in
  official)
    [ -z "$test_speaker" ] || { echo "$0: --test-speaker goes with --split speaker, not --split official" >&2; exit 1; }
    tag=official ;;
  speaker)
    [ -n "$test_speaker" ] || { echo "$0: --split speaker needs --test-speaker NAME (jackson nicolas theo yweweler george lucas)" >&2; exit 1; }
    tag=loso_$test_speaker ;;
  *) echo "$0: --split must be official or speaker, got '$split'" >&2; exit 1 ;;
esac
data=data/$tag
exp=exp/$tag
case $dnn_cv in
  auto|takes|speaker) ;;
  *) echo "$0: --dnn-cv must be auto, takes or speaker, got '$dnn_cv'" >&2; exit 1 ;;
esac

nj_for() {
  # nj_for <data-dir>: --nj, but at most one job per speaker (split_data.sh keeps speakers whole;
  # a left-out speaker's test set is one speaker)
  local n=$(wc -l < $1/spk2utt)
  echo $(( n < nj ? n : nj ))
}

stage_done() {
  # stage_done <N> <start-seconds> [<dir>]: the stage's wall time in <dir>/stage_seconds/N
  # (default $exp; the DNN stages 6-7 use the DNN's directory), and the commit that ran it in
  # $exp/commit (of the checkout path.sh found; "+changes" with uncommitted changes), for
  # local/make_results.py
  mkdir -p ${3:-$exp}/stage_seconds
  echo $(( SECONDS - $2 )) > ${3:-$exp}/stage_seconds/$1
  local commit
  if commit=$(git -C "$NNETMIX_ROOT" rev-parse --short HEAD 2>/dev/null); then
    git -C "$NNETMIX_ROOT" diff --quiet HEAD || commit="$commit +changes"
  fi
  echo "${commit:-unknown}" > $exp/commit
}

if [ $stage -le 0 ] && [ $stop_stage -ge 0 ]; then
  log "Stage 0: data preparation: $data/train and $data/test (split $split${test_speaker:+, test speaker $test_speaker})"
  t0=$SECONDS
  if [ -z "$fsdd_dir" ]; then
    echo "$0: --fsdd-dir is required: a clone of github.com/Jakobovski/free-spoken-digit-dataset" \
         "(commit 26eb9aaf76e81b692f806f9140c2d2777410d7a1), the folder that holds recordings/" >&2
    exit 1
  fi
  # The whole corpus is checked first (names, counts, 8 kHz mono), then both directories are
  # written under temporary names and renamed: an error leaves nothing half-written.
  local/fsdd_data_prep.py --prog local/fsdd_data_prep.py --split $split \
    ${test_speaker:+--test-speaker $test_speaker} "$fsdd_dir" $data
  for x in train test; do
    utils/validate_data_dir.sh --no-feats $data/$x
  done
  stage_done 0 $t0
fi

if [ $stage -le 1 ] && [ $stop_stage -ge 1 ]; then
  log "Stage 1: dictionary from CMUdict (data/local/dict), data/lang and the isolated-word data/lang_test"
  t0=$SECONDS
  # Position-dependent phones with stress kept (wsj's way, see local/fsdd_prepare_dict.py);
  # optional silence 0.5 between words, which here means before and after the one word.
  local/fsdd_prepare_dict.py --prog local/fsdd_prepare_dict.py data/local/dict
  utils/prepare_lang.sh data/local/dict "<UNK>" data/local/lang data/lang
  # data/lang_test: data/lang with G.fst, one digit per utterance (local/fsdd_prepare_grammar.py).
  rm -rf data/lang_test data/lang_test.tmp
  cp -r data/lang data/lang_test.tmp
  local/fsdd_prepare_grammar.py --prog local/fsdd_prepare_grammar.py \
    data/lang_test.tmp/words.txt data/local/dict/lexicon.txt data/lang_test.tmp/G.fst
  mv data/lang_test.tmp data/lang_test
  stage_done 1 $t0
fi

if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
  log "Stage 2: MFCC features (8 kHz, conf/mfcc.conf) and per-speaker CMVN statistics"
  t0=$SECONDS
  for x in train test; do
    steps/make_mfcc.sh --nj $(nj_for $data/$x) --cmd "$train_cmd" $data/$x exp/make_mfcc/$tag/$x mfcc/$tag
    steps/compute_cmvn_stats.sh $data/$x exp/make_mfcc/$tag/$x mfcc/$tag
    utils/validate_data_dir.sh $data/$x
  done
  stage_done 2 $t0
fi

if [ $stage -le 3 ] && [ $stop_stage -ge 3 ]; then
  log "Stage 3: monophone GMM-HMM (steps/train_mono.sh) and alignment of $data/train (steps/align_si.sh)"
  t0=$SECONDS
  # Kaldi's train_mono.sh schedule (flat start, 40 passes, up to 1000 Gaussians); the stress
  # variants of a vowel share their pdfs (phones/sets.int). The alignments are the DNN's targets.
  steps/train_mono.sh --nj $nj --cmd "$train_cmd" $data/train data/lang $exp/mono
  steps/align_si.sh --nj $nj --cmd "$train_cmd" $data/train data/lang $exp/mono $exp/mono_ali
  stage_done 3 $t0
fi

if [ $stage -le 4 ] && [ $stop_stage -ge 4 ]; then
  log "Stage 4: monophone graph (one-word grammar), decoding of $data/test and WER scoring"
  t0=$SECONDS
  utils/mkgraph.sh data/lang_test $exp/mono $exp/mono/graph
  steps/decode.sh --nj $(nj_for $data/test) --cmd "$decode_cmd" ${scoring_opts:+--scoring-opts "$scoring_opts"} \
    $exp/mono/graph $data/test $exp/mono/decode_test
  grep -H WER $exp/mono/decode_test/wer_* | utils/best_wer.sh
  stage_done 4 $t0
fi

if [ $stage -le 5 ] && [ $stop_stage -ge 5 ]; then
  t0=$SECONDS
  if $pretrain; then
    log "Stage 5: RBM pretraining ($exp/dnn_pretrain)"
    steps/nnet/pretrain_dbn.sh --cmd "$train_cmd" --nn-depth $dnn_hid_layers --hid-dim $dnn_hid_dim \
      --cmvn-opts "--norm-means=true --norm-vars=false" $data/train $exp/dnn_pretrain
  else
    log "Stage 5: skipped (--pretrain false); stage 6 initialises randomly"
  fi
  stage_done 5 $t0
fi

# As egs/digits/s5: the DNN's directory names its initialisation, workers and optimizer.
dnn_dir=$exp/dnn_$($pretrain && echo rbm || echo rand)_w${dnn_num_workers}
[ $dnn_optimizer == ngsgd ] || dnn_dir=${dnn_dir}_$dnn_optimizer
dnn_dir=${dnn_dir}${dnn_tag:+_$dnn_tag}

if [ $stage -le 6 ] && [ $stop_stage -ge 6 ]; then
  log "Stage 6: DNN training on the monophone alignments, $dnn_num_workers MPI worker(s) ($dnn_dir)"
  t0=$SECONDS
  # Newbob's held-out (CV) set is drawn as the test set is (--dnn-cv auto): with the official
  # split (test speakers seen in training) takes 5-9 of every speaker and digit (300 utterances);
  # leaving a speaker out, one training speaker (utils/subset_data_dir_tr_cv.sh: 10% of the
  # speakers, at least one). A held-out speaker under the official split leaves that speaker
  # unseen by the DNN (RESULTS.md: --dnn-cv speaker --dnn-tag spkcv).
  cv=$dnn_cv
  [ $cv != auto ] || cv=$([ $split == official ] && echo takes || echo speaker)
  if [ ! -f $data/train_cv_$cv/feats.scp ]; then
    case $cv in
      takes)
        awk -v cv=$data/cv_takes.list -v tr=$data/tr_takes.list \
          '{ split($1, f, "_"); print $1 > (f[3] < 10 ? cv : tr) }' $data/train/utt2spk   # <spk>_<digit>_<take>
        utils/subset_data_dir.sh --utt-list $data/tr_takes.list $data/train $data/train_tr_takes
        utils/subset_data_dir.sh --utt-list $data/cv_takes.list $data/train $data/train_cv_takes ;;
      speaker)
        utils/subset_data_dir_tr_cv.sh $data/train $data/train_tr_speaker $data/train_cv_speaker ;;
    esac
  fi
  dbn_opts=()
  if $pretrain; then   # stage 5's RBMs, with a new softmax layer on top
    dbn_opts=(--dbn $exp/dnn_pretrain/final.dbn --hid-layers 0 --feature-transform $exp/dnn_pretrain/final.feature_transform)
  fi
  steps/nnet/train.sh --cmd "$train_cmd" --num-workers $dnn_num_workers --average-every $dnn_average_every \
    --hid-layers $dnn_hid_layers --hid-dim $dnn_hid_dim --learn-rate 0.008 "${dbn_opts[@]}" \
    --optimizer $dnn_optimizer $dnn_opts \
    $data/train_tr_$cv $data/train_cv_$cv data/lang $exp/mono_ali $exp/mono_ali $dnn_dir
  stage_done 6 $t0 $dnn_dir
fi

if [ $stage -le 7 ] && [ $stop_stage -ge 7 ]; then
  log "Stage 7: DNN decoding of $data/test with the monophone graph and WER scoring"
  t0=$SECONDS
  steps/nnet/decode.sh --nj $(nj_for $data/test) --cmd "$decode_cmd" --acwt 0.1 --prior-cutoff $dnn_prior_cutoff \
    ${scoring_opts:+--scoring-opts "$scoring_opts"} \
    $exp/mono/graph $data/test $dnn_dir/decode_test
  grep -H WER $dnn_dir/decode_test/wer_* | utils/best_wer.sh
  stage_done 7 $t0 $dnn_dir
fi

log "Done: stages $stage to $(( stop_stage < 7 ? stop_stage : 7 )) of $tag"
