#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Kaldi's "hello world": egs/yesno/s5 (60 recordings of one man saying eight words, each "yes" or
# "no"; 8 kHz; OpenSLR resource 1, Apache 2.0), with Kaldi's stages (data split, lexicon, unigram
# grammar, MFCC, a 400-Gaussian monophone, graph, decoding, scoring), then a DNN trained over MPI
# on the monophone's alignments and decoded with the same graph, and Kaldi's own trained model
# decoded on the same features for comparison.
#
#   ./run.sh                                     # download the corpus into corpus/, every stage
#   ./run.sh --corpus-dir /data/waves_yesno      # a local copy (waves_yesno/ or its folder)
#   ./run.sh --corpus-dir DIR --kaldi-model-dir /path/to/kaldi/egs/yesno/s5/exp/mono0a
#   ./run.sh --stage 4 --stop-stage 5            # the monophone only
#
# Options (defaults in the configuration section of this file):
#   --corpus-dir DIR          waves_yesno/ or the folder that holds it; without it waves_yesno/
#                             is downloaded into DIR (stage 0: https://www.openslr.org/resources/1/
#                             waves_yesno.tar.gz, MD5-checked; skipped when the corpus is there)
#   --kaldi-model-dir DIR     a monophone Kaldi trained on yesno: final.mdl (or 40.mdl), tree, and
#                             HCLG.fst + words.txt in DIR or DIR/graph_tgpr; stage 6 decodes the
#                             test set with it and its graph (empty: stage 6 is skipped)
#   --dnn-hid-layers N --dnn-hid-dim N --dnn-num-workers N --dnn-average-every N --dnn-opts "..."
#   --results FILE            where stage 9 writes the results (default RESULTS.md)
#   --stage N --stop-stage N  the stages to run (0-9)
#
# Stages: 0 corpus (download unless there), 1 data/train_yesno and data/test_yesno (Kaldi's split:
# the first half of the sorted file list trains, the second half tests), 2 data/local/dict,
# data/lang (position-independent phones Y, N, SIL; OOV word <SIL>) and data/lang_test_tg (G from
# Kaldi's unigram ARPA), 3 MFCC (conf/mfcc.conf, Kaldi's yesno options) + CMVN, 4 monophone GMM
# (steps/train_mono.sh --nj 1 --totgauss 400, as Kaldi's run.sh), 5 graph (exp/mono0a/graph_tgpr),
# decoding and scoring (exp/mono0a/decode_test_yesno), 6 Kaldi's model decoded
# (exp/kaldi_mono0a/decode_test_yesno), 7 alignments (exp/mono0a_ali) and DNN training over MPI,
# 8 DNN decoding with the monophone's graph, 9 RESULTS.md (local/make_results.py). Kaldi's names
# are kept (train_yesno, mono0a, graph_tgpr). Everything is written under data/, exp/, mfcc/ and
# the corpus directory; each stage skips what is done.

. utils/recipe_signals.sh   # a signal to run.sh ends its whole process tree

# Begin configuration section.
stage=0                # first stage to run
stop_stage=100         # last stage to run
corpus_dir=corpus      # waves_yesno/ or the folder that holds it; stage 0 downloads into it when absent
kaldi_model_dir=       # a Kaldi-trained yesno monophone and its graph, decoded at stage 6 (empty: skipped)
mono_gauss=400         # Gaussians of the monophone (Kaldi's yesno run.sh: --totgauss 400)
dnn_hid_layers=2       # DNN hidden layers
dnn_hid_dim=256        # DNN neurons per hidden layer
dnn_num_workers=2      # MPI ranks for DNN training (1: the single-worker nnet-train-frmshuff.py)
dnn_average_every=10   # minibatches between model averages
dnn_opts=              # more steps/nnet/train.sh options, e.g. "--max-iters 10"
results=RESULTS.md     # the file stage 9 writes
# End configuration section.

. ./cmd.sh
. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

. utils/recipe_functions.sh   # log, need

dnn_dir=exp/dnn_w${dnn_num_workers}

if [ $stage -le 0 ] && [ $stop_stage -ge 0 ]; then
  log "Stage 0: the corpus in $corpus_dir"
  if [ -d $corpus_dir/waves_yesno ] || ls $corpus_dir/*.wav > /dev/null 2>&1; then
    log "$corpus_dir holds the corpus, skipping the download"
  else
    local/yesno_download.py --prog local/yesno_download.py $corpus_dir
  fi
fi

if [ $stage -le 1 ] && [ $stop_stage -ge 1 ]; then
  log "Stage 1: data preparation: data/train_yesno and data/test_yesno"
  # The whole corpus is checked first (names, count, 8 kHz mono), then both directories are
  # written under temporary names and renamed: an error leaves nothing half-written.
  local/yesno_data_prep.py --prog local/yesno_data_prep.py $corpus_dir data
  for x in train_yesno test_yesno; do
    utils/validate_data_dir.sh --no-feats data/$x
  done
fi

if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
  log "Stage 2: dictionary (data/local/dict), data/lang and the grammar (data/lang_test_tg)"
  local/prepare_dict.sh data/local/dict
  utils/prepare_lang.sh --position-dependent-phones false data/local/dict "<SIL>" data/local/lang data/lang
  local/prepare_lm.sh data/lang data/local data/lang_test_tg
fi

if [ $stage -le 3 ] && [ $stop_stage -ge 3 ]; then
  log "Stage 3: MFCC features (conf/mfcc.conf) and CMVN statistics"
  for x in train_yesno test_yesno; do
    steps/make_mfcc.sh --nj 1 --cmd "$train_cmd" data/$x exp/make_mfcc/$x mfcc
    steps/compute_cmvn_stats.sh data/$x exp/make_mfcc/$x mfcc
    utils/validate_data_dir.sh data/$x
  done
fi

if [ $stage -le 4 ] && [ $stop_stage -ge 4 ]; then
  log "Stage 4: monophone GMM-HMM (steps/train_mono.sh, $mono_gauss Gaussians)"
  # Kaldi's yesno run.sh: one job, --totgauss 400, train_mono.sh's other defaults (40 passes,
  # boost-silence 1.0).
  steps/train_mono.sh --nj 1 --cmd "$train_cmd" --totgauss $mono_gauss data/train_yesno data/lang exp/mono0a
fi

if [ $stage -le 5 ] && [ $stop_stage -ge 5 ]; then
  log "Stage 5: monophone graph, decoding of data/test_yesno and WER scoring"
  utils/mkgraph.sh data/lang_test_tg exp/mono0a exp/mono0a/graph_tgpr
  steps/decode.sh --nj 1 --cmd "$decode_cmd" exp/mono0a/graph_tgpr data/test_yesno exp/mono0a/decode_test_yesno
  grep -H WER exp/mono0a/decode_test_yesno/wer_* | utils/best_wer.sh
fi

if [ $stage -le 6 ] && [ $stop_stage -ge 6 ]; then
  if [ -z "$kaldi_model_dir" ]; then
    log "Stage 6: skipped (no --kaldi-model-dir: a Kaldi-trained yesno model to compare with)"
  else
    log "Stage 6: Kaldi's model ($kaldi_model_dir) and graph, decoding of data/test_yesno and WER scoring"
    # The model and graph as Kaldi wrote them, decoded by nnetmix on nnetmix's features (delta
    # features and per-speaker CMN, as train_mono.sh's model expects them).
    mdl=$kaldi_model_dir/final.mdl
    [ -f $mdl ] || mdl=$kaldi_model_dir/40.mdl
    graph=$kaldi_model_dir
    [ -f $graph/HCLG.fst ] || graph=$kaldi_model_dir/graph_tgpr
    for f in $mdl $kaldi_model_dir/tree $graph/HCLG.fst $graph/words.txt; do
      [ -f $f ] || { echo "$0: no such file $f (--kaldi-model-dir: final.mdl or 40.mdl, tree, and HCLG.fst + words.txt there or in graph_tgpr/)" >&2; exit 1; }
    done
    mkdir -p exp/kaldi_mono0a/graph_tgpr
    cp $mdl exp/kaldi_mono0a/final.mdl
    cp $kaldi_model_dir/tree exp/kaldi_mono0a/tree
    cp $graph/HCLG.fst $graph/words.txt exp/kaldi_mono0a/graph_tgpr/
    steps/decode.sh --nj 1 --cmd "$decode_cmd" exp/kaldi_mono0a/graph_tgpr data/test_yesno exp/kaldi_mono0a/decode_test_yesno
    grep -H WER exp/kaldi_mono0a/decode_test_yesno/wer_* | utils/best_wer.sh
  fi
fi

if [ $stage -le 7 ] && [ $stop_stage -ge 7 ]; then
  log "Stage 7: alignments (exp/mono0a_ali) and DNN training on them, $dnn_num_workers MPI worker(s) ($dnn_dir)"
  # One speaker, so Newbob's held-out set is the last 10% of the training utterances (3 of 30),
  # not a held-out speaker. With N > 1 workers each epoch runs bin/nnet-train-mpi.py under
  # mpiexec (utils/run.py --num-tasks N), the models averaged every dnn_average_every minibatches.
  steps/align_si.sh --nj 1 --cmd "$train_cmd" data/train_yesno data/lang exp/mono0a exp/mono0a_ali
  [ -f data/train_yesno_cv10/feats.scp ] || utils/subset_data_dir_tr_cv.sh --cv-utt-percent 10 \
    data/train_yesno data/train_yesno_tr90 data/train_yesno_cv10
  steps/nnet/train.sh --cmd "$train_cmd" --num-workers $dnn_num_workers --average-every $dnn_average_every \
    --hid-layers $dnn_hid_layers --hid-dim $dnn_hid_dim --learn-rate 0.008 --optimizer ngsgd $dnn_opts \
    data/train_yesno_tr90 data/train_yesno_cv10 data/lang exp/mono0a_ali exp/mono0a_ali $dnn_dir
fi

if [ $stage -le 8 ] && [ $stop_stage -ge 8 ]; then
  log "Stage 8: DNN decoding of data/test_yesno with the monophone graph and WER scoring"
  steps/nnet/decode.sh --nj 1 --cmd "$decode_cmd" --acwt 0.1 --prior-cutoff 1 \
    exp/mono0a/graph_tgpr data/test_yesno $dnn_dir/decode_test_yesno
  grep -H WER $dnn_dir/decode_test_yesno/wer_* | utils/best_wer.sh
fi

if [ $stage -le 9 ] && [ $stop_stage -ge 9 ]; then
  log "Stage 9: $results from exp/ (local/make_results.py)"
  local/make_results.py --prog local/make_results.py --exp exp --out $results
fi

log "Done: stages $stage to $(( stop_stage < 9 ? stop_stage : 9 ))"
