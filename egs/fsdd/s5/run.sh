#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Recorded speech: the Free Spoken Digit Dataset (FSDD), 3000 isolated English digits spoken by 6
# speakers, 8 kHz. An isolated-word grammar over the ten digits, a CMUdict lexicon, 8 kHz MFCCs,
# then Kaldi's ladder for speaker-independent recognition: a monophone GMM, tri1 (triphones on
# deltas), tri2 (LDA+MLLT), tri3 (speaker-adaptive training, fMLLR per speaker), and a DNN trained
# over MPI on tri3's fMLLR features and alignments (RBM pretraining as egs/digits/s5), decoded
# with the test speaker's fMLLR transforms from tri3's first pass (as Kaldi's nnet1 recipes).
#
# The corpus is not downloaded: clone it and pass the clone with --fsdd-dir (the folder that
# holds recordings/). FSDD is CC BY-SA 4.0, by Zohar Jackson and contributors:
#   git clone https://github.com/Jakobovski/free-spoken-digit-dataset
#   git -C free-spoken-digit-dataset checkout 26eb9aaf76e81b692f806f9140c2d2777410d7a1
#
#   ./run.sh --fsdd-dir /path/to/free-spoken-digit-dataset                   # the official split
#   ./run.sh --fsdd-dir DIR --split speaker --test-speaker theo              # leave theo out
#   ./run.sh --fsdd-dir DIR --stage 2 --stop-stage 2                         # one stage
#   ./run.sh --stage 9 --dnn-input mfcc                                      # the DNN on MFCCs and
#                                                                            # the monophone's alignments
#   local/store_split.py loso_theo                                           # exp/loso_theo into the
#                                                                            # store, results/loso_theo
#   local/make_results.py                                                    # RESULTS.md from results/
#
# The results store: exp/ stays on the machine that ran it, so each finished split is copied into
# results/<split>/ (kept in the repository: the small text files local/make_results.py reads,
# with the commit, machine, command lines and recipe fingerprint; local/fsdd_store.py) and
# committed, and RESULTS.md is written from there. The folds still to run are those
# RESULTS.md names; each, one at a time, then stored and committed:
#   s=jackson   # and each other fold RESULTS.md names, then the official split (no --split; store "official")
#   nice -n 10 ./run.sh --fsdd-dir DIR --split speaker --test-speaker $s --nj 2 &&
#     local/store_split.py loso_$s && local/make_results.py &&
#     git add results/loso_$s RESULTS.md && git commit -m "egs/fsdd/s5: the $s fold"
# make_results.py pools only folds of one recipe fingerprint (run.sh, conf/, local/fsdd_*.py
# without comments): after a change to that code, the stored folds are run again.
#
# Options (defaults in the configuration section of this file):
#   --fsdd-dir DIR            the FSDD clone (required for stage 0)
#   --split official|speaker  official: takes 0-4 of every speaker and digit are the test set
#                             (300 test, 2700 train); speaker: leave one speaker out
#   --test-speaker NAME       with --split speaker: jackson nicolas theo yweweler george lucas
#   --nj N                    parallel jobs (features, GMM, decoding)
#   --stage N --stop-stage N  the stages to run (0-11)
#   --tri1-leaves N --tri1-gauss N (tri2, tri3 likewise)   tree leaves and Gaussians (Sizes)
#   --dnn-input fmllr|mfcc    fmllr: tri3's fMLLR features and alignments, tri3's graph;
#                             mfcc: MFCC + CMVN and the monophone's (the DNN before tri1-tri3)
#   --dnn-hid-layers N --dnn-hid-dim N --pretrain true|false --dnn-num-workers N
#   --dnn-average-every N --dnn-optimizer ngsgd|sgd --dnn-prior-cutoff X --dnn-opts "..."
#   --dnn-tag TAG             the DNN options, as egs/digits/s5/run.sh
#   --scoring-opts "..."      local/score.sh options for every decode (default: each decode
#                             script's own LM-weight and penalty sweep)
#   --dnn-cv auto|takes|speaker  Newbob's CV set: the training takes under 10 (5-9 in the official
#                             split), or a held-out speaker; auto: takes for official, else speaker
#
# Stages: 0 data/<split>/{train,test}, 1 dictionary (CMUdict) + data/lang + data/lang_test (the
# one-word G), 2 MFCC + CMVN, 3 monophone GMM + alignments, 4 monophone decoding, 5 tri1
# (steps/train_deltas.sh) + alignments, 6 tri2 (train_lda_mllt.sh) + alignments, 7 tri3
# (train_sat.sh) + fMLLR alignments (align_fmllr.sh), 8 tri1-tri3 decoding (tri3: decode_fmllr.sh),
# 9 fMLLR features (steps/nnet/make_fmllr_feats.sh, data-fmllr-tri3/<split>/) + RBM pretraining,
# 10 DNN training, 11 DNN decoding. A split's data and models go under data/<split>/ and
# exp/<split>/ (<split>: official, or loso_<speaker>), so the splits sit side by side;
# exp/<split>/stage_seconds/N holds each stage's wall time (stages 10-11: in the DNN's directory).
# Each stage skips what is done.
#
# Sizes: FSDD is small: 2500-2700 training utterances of one word each, about 110,000 frames
# (18 minutes), and only 36 phone positions in its 13 pronunciations, so fewer than 200
# distinct context-dependent states (3 per phone, plus silence and the utterance-edge variants:
# build-tree.py's "Number of separate statistics" in exp/<split>/tri1/log/build_tree.log). Kaldi's
# rm/s5 sizes (1800 leaves, 9000 Gaussians on 3.8 hours) would ask the tree for more leaves than
# there are contexts, and 9000 Gaussians would get 12 frames each, below gmm-mixup's minimum of
# 20. tri1-tri3 get 200 leaves, an upper bound the tree stops short of once every context is its
# own leaf, and 1000 Gaussians, the monophone's, about 110 frames each, so a triphone's gain
# comes from context and adaptation, not from more parameters to fit 5-6 training speakers.

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
pretrain=true          # RBM pretraining (stage 9) before DNN training; false: random initialisation
dnn_num_workers=2      # MPI ranks for DNN training (1: the single-worker nnet-train-frmshuff.py)
dnn_average_every=10   # minibatches between model averages
dnn_optimizer=ngsgd    # ngsgd: natural-gradient SGD; sgd: plain
dnn_cv=auto            # Newbob's CV set: takes (the training takes under 10 of every speaker and digit:
                       # 5-9 in the official split), speaker (one training speaker held out), or auto
                       # (takes for the official split, speaker otherwise)
dnn_prior_cutoff=1     # decoding: pdfs with a count below this (no training frames) are never chosen
dnn_opts=              # more steps/nnet/train.sh options, e.g. "--bmuf true"
dnn_tag=               # appended to the DNN directory name, to keep variants (dnn_opts) apart
scoring_opts=          # local/score.sh options for every decode, e.g. "--min-lmwt 9 --max-lmwt 11
                       # --word-ins-penalty 0.0" (a quick run); empty: each decode script's own sweep
tri1_leaves=200        # tree leaves of tri1 (deltas); an upper bound here (header: Sizes)
tri1_gauss=1000        # Gaussians of tri1 (the monophone's number; header: Sizes)
tri2_leaves=200        # tree leaves of tri2 (LDA+MLLT)
tri2_gauss=1000        # Gaussians of tri2
tri3_leaves=200        # tree leaves of tri3 (SAT)
tri3_gauss=1000        # Gaussians of tri3
dnn_input=fmllr        # fmllr: tri3's fMLLR features, alignments and graph; mfcc: MFCC + CMVN and
                       # the monophone's (the recipe's DNN before tri1-tri3)
# End configuration section.
run_cmdline="$0 $*"   # as typed, before parse_options.sh consumes it: stage_done keeps it in $exp/run_opts

. ./cmd.sh
. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

. utils/recipe_functions.sh   # log, need

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
# The DNN's input: its targets (alignments), features, the GMM whose graph decodes it, the
# per-speaker CMVN of its input (none on fMLLR features: the transforms normalise each speaker)
# and its RBMs.
case $dnn_input in
  fmllr) ali=$exp/tri3_ali dnn_data=data-fmllr-tri3/$tag dnn_gmm=tri3 dnn_cmvn=""
         pretrain_dir=$exp/dnn_pretrain_fmllr ;;
  mfcc) ali=$exp/mono_ali dnn_data=$data dnn_gmm=mono dnn_cmvn="--norm-means=true --norm-vars=false"
        pretrain_dir=$exp/dnn_pretrain ;;
  *) echo "$0: --dnn-input must be fmllr or mfcc, got '$dnn_input'" >&2; exit 1 ;;
esac

nj_for() {
  # nj_for <data-dir>: --nj, but at most one job per speaker (split_data.sh keeps speakers whole;
  # a left-out speaker's test set is one speaker)
  local n=$(wc -l < $1/spk2utt)
  echo $(( n < nj ? n : nj ))
}

stage_done() {
  # stage_done <N> <start-seconds> [<dir>]: the stage's wall time in <dir>/stage_seconds/N
  # (default $exp; the DNN stages 10-11 use the DNN's directory), and the commit that ran it in
  # $exp/commit (of the checkout path.sh found; "+changes" with uncommitted changes) and the
  # command lines that ran the split's stages in $exp/run_opts (each once), for
  # local/make_results.py and local/store_split.py
  mkdir -p ${3:-$exp}/stage_seconds
  grep -qxF -- "$run_cmdline" $exp/run_opts 2>/dev/null || echo "$run_cmdline" >> $exp/run_opts
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

decode_gmm() {
  # decode_gmm <system> <decode script>: <system>'s graph (the one-word grammar), its decoding of
  # $data/test into $exp/<system>/decode_test, and the best WER line
  utils/mkgraph.sh data/lang_test $exp/$1 $exp/$1/graph
  steps/$2 --nj $(nj_for $data/test) --cmd "$decode_cmd" ${scoring_opts:+--scoring-opts "$scoring_opts"} \
    $exp/$1/graph $data/test $exp/$1/decode_test
  grep -H WER $exp/$1/decode_test/wer_* | utils/best_wer.sh
}

train_triphones() {
  # train_triphones <stage> <system> <train script> <previous alignments> <align script> [opts]:
  # a triphone stage (5-7): <system> trained on <previous alignments> with its --<system>-leaves
  # and --<system>-gauss, then $data/train aligned with it into $exp/<system>_ali
  local n=$1 sys=$2 train=$3 prev=$4 align=$5 leaves gauss t0=$SECONDS
  shift 5
  leaves=${sys}_leaves gauss=${sys}_gauss
  need $n $exp/$prev/ali.1.gz "the alignments of stage $((n - 1))"
  steps/$train --cmd "$train_cmd" "$@" ${!leaves} ${!gauss} $data/train data/lang $exp/$prev $exp/$sys
  steps/$align --nj $nj --cmd "$train_cmd" $data/train data/lang $exp/$sys $exp/${sys}_ali
  stage_done $n $t0
}

if [ $stage -le 4 ] && [ $stop_stage -ge 4 ]; then
  log "Stage 4: monophone graph (one-word grammar), decoding of $data/test and WER scoring"
  t0=$SECONDS
  decode_gmm mono decode.sh
  stage_done 4 $t0
fi

# Stages 5-7, Kaldi's triphone ladder (as egs/harbour/s5, with the sizes of the header): each
# system's tree comes from the previous one's alignments (context width 3, questions from phone
# clustering plus extra_questions.txt), 35 passes, realignment at 10, 20, 30.
if [ $stage -le 5 ] && [ $stop_stage -ge 5 ]; then
  log "Stage 5: tri1, triphones on deltas (steps/train_deltas.sh, $tri1_leaves leaves, $tri1_gauss Gaussians) and alignment"
  train_triphones 5 tri1 train_deltas.sh mono_ali align_si.sh
fi

if [ $stage -le 6 ] && [ $stop_stage -ge 6 ]; then
  # frames spliced +/-3 (7 x 13), LDA to 40 dimensions on tri1's pdfs, MLLT at passes 2 4 6 12
  log "Stage 6: tri2, LDA+MLLT (steps/train_lda_mllt.sh, $tri2_leaves leaves, $tri2_gauss Gaussians) and alignment"
  train_triphones 6 tri2 train_lda_mllt.sh tri1_ali align_si.sh \
    --splice-opts "--left-context=3 --right-context=3"
fi

if [ $stage -le 7 ] && [ $stop_stage -ge 7 ]; then
  # per-speaker fMLLR on tri2's LDA+MLLT features, re-estimated at passes 2 4 6 12; the
  # transforms and alignments of $exp/tri3_ali are the DNN's features and targets (stages 9-10)
  log "Stage 7: tri3, speaker-adaptive training (steps/train_sat.sh, $tri3_leaves leaves, $tri3_gauss Gaussians) and fMLLR alignment"
  train_triphones 7 tri3 train_sat.sh tri2_ali align_fmllr.sh
fi

if [ $stage -le 8 ] && [ $stop_stage -ge 8 ]; then
  log "Stage 8: tri1, tri2, tri3 graphs, decoding of $data/test and WER scoring"
  t0=$SECONDS
  # As stage 4; tri3 decodes as Kaldi's decode_fmllr.sh: the speaker-independent final.alimdl
  # into decode_test.si, the test speaker's fMLLR from its lattices, an adapted pass, a second
  # fMLLR, and those lattices rescored; the transforms (exp/<split>/tri3/decode_test/trans.*)
  # give the DNN its test features (stage 9).
  for sys in tri1 tri2 tri3; do
    need 8 $exp/$sys/final.mdl "$sys: run stages 5-7"
    decode_gmm $sys $([ $sys == tri3 ] && echo decode_fmllr.sh || echo decode.sh)
  done
  stage_done 8 $t0
fi

if [ $stage -le 9 ] && [ $stop_stage -ge 9 ]; then
  t0=$SECONDS
  if [ $dnn_input == fmllr ]; then
    # tri3's speaker-adapted features on disk (steps/nnet/make_fmllr_feats.sh): the training
    # speakers' transforms from align_fmllr.sh, the test speaker's from tri3's decoding
    log "Stage 9: fMLLR features of $data/train and $data/test ($dnn_data, transforms of $exp/tri3_ali and $exp/tri3/decode_test)"
    need 9 $exp/tri3_ali/trans.1 "tri3's alignments: run stage 7"
    need 9 $exp/tri3/decode_test/trans.1 "tri3's decoding: run stage 8"
    for x in train test; do
      tdir=$exp/tri3_ali
      [ $x == test ] && tdir=$exp/tri3/decode_test
      if [ ! -f $dnn_data/$x/feats.scp ] || [ $dnn_data/$x/feats.scp -ot $tdir/trans.1 ]; then
        rm -rf $dnn_data/$x
        steps/nnet/make_fmllr_feats.sh --nj $(nj_for $data/$x) --cmd "$train_cmd" --transform-dir $tdir \
          $dnn_data/$x $data/$x $exp/tri3 $dnn_data/$x/log $dnn_data/$x/data
        # per-speaker statistics too, so the directory is complete (the DNN uses none)
        steps/compute_cmvn_stats.sh $dnn_data/$x $dnn_data/$x/log $dnn_data/$x/data
      fi
    done
  fi
  # A DBN of dnn_hid_layers x dnn_hid_dim RBMs on spliced +/-5 frames of the DNN's input;
  # stage 10 puts a softmax on top.
  if $pretrain; then
    log "Stage 9: RBM pretraining ($pretrain_dir, $dnn_input features)"
    steps/nnet/pretrain_dbn.sh --cmd "$train_cmd" --nn-depth $dnn_hid_layers --hid-dim $dnn_hid_dim \
      --cmvn-opts "$dnn_cmvn" $dnn_data/train $pretrain_dir
  else
    log "Stage 9: no RBMs (--pretrain false); stage 10 initialises randomly"
  fi
  stage_done 9 $t0
fi

# As egs/digits/s5: the DNN's directory names its input (fmllr_; none for MFCCs, the name it had
# before tri1-tri3), initialisation, workers and optimizer.
dnn_dir=$exp/dnn_$([ $dnn_input == mfcc ] || echo fmllr_)$($pretrain && echo rbm || echo rand)_w${dnn_num_workers}
[ $dnn_optimizer == ngsgd ] || dnn_dir=${dnn_dir}_$dnn_optimizer
dnn_dir=${dnn_dir}${dnn_tag:+_$dnn_tag}

if [ $stage -le 10 ] && [ $stop_stage -ge 10 ]; then
  log "Stage 10: DNN training on $ali ($dnn_input features), $dnn_num_workers MPI worker(s) ($dnn_dir)"
  t0=$SECONDS
  need 10 $ali/final.mdl "the alignments: run stage $([ $dnn_input == mfcc ] && echo 3 || echo 7)"
  need 10 $dnn_data/train/feats.scp "the DNN's features: run stage $([ $dnn_input == mfcc ] && echo 2 || echo 9)"
  # Newbob's held-out (CV) set is drawn as the test set is (--dnn-cv auto): with the official
  # split (test speakers seen in training) takes 5-9 of every speaker and digit (300 utterances);
  # leaving a speaker out, one training speaker (utils/subset_data_dir_tr_cv.sh: 10% of the
  # speakers, at least one). A held-out speaker under the official split leaves that speaker
  # unseen by the DNN (--dnn-cv speaker --dnn-tag spkcv).
  cv=$dnn_cv
  [ $cv != auto ] || cv=$([ $split == official ] && echo takes || echo speaker)
  if [ ! -f $dnn_data/train_cv_$cv/feats.scp ] || [ $dnn_data/train_cv_$cv/feats.scp -ot $dnn_data/train/feats.scp ]; then
    case $cv in
      takes)
        awk -v cv=$dnn_data/cv_takes.list -v tr=$dnn_data/tr_takes.list \
          '{ split($1, f, "_"); print $1 > (f[3] < 10 ? cv : tr) }' $dnn_data/train/utt2spk   # <spk>_<digit>_<take>
        utils/subset_data_dir.sh --utt-list $dnn_data/tr_takes.list $dnn_data/train $dnn_data/train_tr_takes
        utils/subset_data_dir.sh --utt-list $dnn_data/cv_takes.list $dnn_data/train $dnn_data/train_cv_takes ;;
      speaker)
        utils/subset_data_dir_tr_cv.sh $dnn_data/train $dnn_data/train_tr_speaker $dnn_data/train_cv_speaker ;;
    esac
  fi
  dbn_opts=()
  if $pretrain; then   # stage 9's RBMs, with a new softmax layer on top
    need 10 $pretrain_dir/final.dbn "the RBMs: run stage 9"
    dbn_opts=(--dbn $pretrain_dir/final.dbn --hid-layers 0 --feature-transform $pretrain_dir/final.feature_transform)
  elif [ -z "$dnn_cmvn" ]; then
    dbn_opts=(--cmvn-opts "--norm-means=false --norm-vars=false")  # fMLLR: no per-speaker CMVN
  fi
  # With N > 1 workers each epoch runs bin/nnet-train-mpi.py under mpiexec, averaging every
  # dnn_average_every minibatches (docs/parallel.md).
  steps/nnet/train.sh --cmd "$train_cmd" --num-workers $dnn_num_workers --average-every $dnn_average_every \
    --hid-layers $dnn_hid_layers --hid-dim $dnn_hid_dim --learn-rate 0.008 "${dbn_opts[@]}" \
    --optimizer $dnn_optimizer $dnn_opts \
    $dnn_data/train_tr_$cv $dnn_data/train_cv_$cv data/lang $ali $ali $dnn_dir
  stage_done 10 $t0 $dnn_dir
fi

if [ $stage -le 11 ] && [ $stop_stage -ge 11 ]; then
  log "Stage 11: DNN decoding of $dnn_data/test with the $dnn_gmm graph and WER scoring"
  t0=$SECONDS
  # The graph of the GMM whose alignments the DNN learnt (its outputs are that GMM's pdfs);
  # pseudo log-likelihoods log p(s|x) - log p(s) at acoustic scale 0.1, pdfs without training
  # frames left out (--dnn-prior-cutoff, as egs/digits/s5).
  need 11 $exp/$dnn_gmm/graph/HCLG.fst "the graph: run stage $([ $dnn_gmm == mono ] && echo 4 || echo 8)"
  need 11 $dnn_dir/final.nnet "the DNN: run stage 10"
  steps/nnet/decode.sh --nj $(nj_for $dnn_data/test) --cmd "$decode_cmd" --acwt 0.1 --prior-cutoff $dnn_prior_cutoff \
    ${scoring_opts:+--scoring-opts "$scoring_opts"} \
    $exp/$dnn_gmm/graph $dnn_data/test $dnn_dir/decode_test
  grep -H WER $dnn_dir/decode_test/wer_* | utils/best_wer.sh
  stage_done 11 $t0 $dnn_dir
fi

log "Done: stages $stage to $(( stop_stage < 11 ? stop_stage : 11 )) of $tag"
