#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# The embedded nnetmix recipe: connected digits (in the manner of TIDIGITS) synthesised on this
# machine with espeak-ng + sox, then features, a monophone GMM for alignments, RBM pretraining and a
# DNN trained data-parallel over MPI, and a triphone GMM (tri1) beside them. Runs end to end on 2
# cores.
#
#   ./run.sh                                  # every stage that exists
#   ./run.sh --stage 2 --stop-stage 2         # one stage
#   ./run.sh --num-train-utts 200 --num-test-utts 50 --corpus /tmp/digits   # a quick run
#   ./run.sh --stage 8                        # tri1 only (after stages 0-3)
#
# Stages: 0 corpus, 1 data/train, data/test, data/lang, data/lang_test (bigram G), 2 MFCC + CMVN,
# 3 monophone GMM and alignments, 4 monophone graph and decoding, 5 RBM pretraining, 6 DNN training
# on the monophone alignments, 7 DNN decoding with the monophone graph, 8 tri1 (triphones on
# deltas from the monophone alignments), its graph and decoding. tri1 comes last so that stages
# 0-7, the DNN's inputs and RESULTS.md's numbers and fingerprint rows stay what they were.
# Everything is written under data/, exp/, mfcc/ and the corpus directory: deleting them and
# running again starts from scratch. Each stage skips what is already done.

. utils/recipe_signals.sh   # a signal to run.sh ends its whole process tree

# Begin configuration section.
stage=0                # first stage to run
stop_stage=100         # last stage to run
nj=2                   # parallel jobs (synthesis, features)
corpus=corpus          # where the synthesised corpus goes (wavs + lists); any path
seed=777               # random seed of the corpus
num_train_utts=2000    # training utterances to synthesise
num_test_utts=300      # test utterances to synthesise (speakers unseen in training)
mfcc_config=conf/mfcc_dither.conf  # stage 2's MFCC options: Kaldi's --dither=1.0 (digital-zero silences); conf/mfcc.conf: --dither=0, the older tables
dnn_hid_layers=2       # DNN hidden layers (the seeds use 6 x 2048 on Switchboard)
dnn_hid_dim=512        # DNN neurons per hidden layer
pretrain=true          # RBM pretraining (stage 5) before DNN training; false: random initialisation
dnn_num_workers=2      # MPI ranks for DNN training (1: the single-worker nnet-train-frmshuff.py)
dnn_average_every=10   # minibatches between model averages (the seeds' averaging frequency)
watchdog_timeout=-1    # MPI jobs: seconds a rank may make no progress before the job ends naming it (0: off; -1: adaptive)
dnn_optimizer=ngsgd    # ngsgd: natural-gradient SGD (seed 001: what makes averaging work); sgd: plain
dnn_prior_cutoff=1     # decoding: pdfs with a count below this (no training frames) are never chosen
decoder=faster         # search: faster (Kaldi's LatticeFasterDecoder) or simple (beam only; RESULTS.md rows before dc723f5)
dnn_opts=              # more steps/nnet/train.sh options, e.g. "--bmuf true"
dnn_tag=               # appended to the DNN directory name, to keep variants (dnn_opts) apart
tri1_leaves=200        # tree leaves of tri1 (Kaldi's tidigits: 300/3000 on 8623 utterances; here 300/2000
                       # loses to the monophone, 200/1000 ties it: RESULTS.md's tri1 section)
tri1_gauss=1000        # Gaussians of tri1 (the monophone has 1000)
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

if [ $stage -le 0 ] && [ $stop_stage -ge 0 ]; then
  log "Stage 0: synthesise the digits corpus into $corpus ($num_train_utts train, $num_test_utts test utterances)"
  local/prepare_digits.sh --synth-only true --cmd "$train_cmd" --nj $nj --seed $seed \
    --num-train $num_train_utts --num-test $num_test_utts $corpus data
fi

if [ $stage -le 1 ] && [ $stop_stage -ge 1 ]; then
  log "Stage 1: data preparation: data/train, data/test, data/local/dict, data/lang, data/lang_test"
  local/prepare_digits.sh --cmd "$train_cmd" --nj $nj --seed $seed \
    --num-train $num_train_utts --num-test $num_test_utts $corpus data
  for x in train test; do
    utils/validate_data_dir.sh --no-feats data/$x
  done
  # data/lang from data/local/dict (position-dependent phones, optional silence 0.5); a
  # Kneser-Ney bigram of the training transcripts becomes G.fst in data/lang_test.
  utils/prepare_lang.sh data/local/dict "<UNK>" data/local/lang data/lang
  local/prepare_lm.sh data/train/text data/lang data/local/lm data/lang_test
fi

if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
  log "Stage 2: MFCC features and per-speaker CMVN statistics"
  for x in train test; do
    steps/make_mfcc.sh --nj $nj --cmd "$train_cmd" --mfcc-config $mfcc_config \
      data/$x exp/make_mfcc/$x mfcc
    steps/compute_cmvn_stats.sh data/$x exp/make_mfcc/$x mfcc
    utils/validate_data_dir.sh data/$x
  done
fi

if [ $stage -le 3 ] && [ $stop_stage -ge 3 ]; then
  log "Stage 3: monophone GMM-HMM (steps/train_mono.sh) and alignment of data/train (steps/align_si.sh)"
  # Kaldi's train_mono.sh schedule: flat start from equal alignments, 40 passes, realignment at
  # passes 1-10, 12, 14, ..., mixing up to 1000 Gaussians in all. The alignments of data/train
  # are the DNN's frame targets (stage 6).
  steps/train_mono.sh --nj $nj --cmd "$train_cmd" data/train data/lang exp/mono
  steps/align_si.sh --nj $nj --cmd "$train_cmd" data/train data/lang exp/mono exp/mono_ali
fi

if [ $stage -le 4 ] && [ $stop_stage -ge 4 ]; then
  log "Stage 4: monophone graph, decoding of data/test and WER scoring"
  # HCLG from data/lang_test (the bigram G); lattices with Kaldi's decode.sh defaults (acwt
  # 0.083333, beam 13, lattice beam 8); local/score.sh sweeps LM weight and insertion penalty.
  utils/mkgraph.sh data/lang_test exp/mono exp/mono/graph
  steps/decode.sh --nj $nj --cmd "$decode_cmd" --decoder $decoder ${scoring_opts:+--scoring-opts "$scoring_opts"} exp/mono/graph data/test exp/mono/decode_test
  grep -H WER exp/mono/decode_test/wer_* | utils/best_wer.sh
fi

if [ $stage -le 5 ] && [ $stop_stage -ge 5 ]; then
  # RBM pretraining: a DBN of dnn_hid_layers x dnn_hid_dim RBMs (seed 001 section 5.3, Table 2:
  # RBM initialisation matters more under model averaging); stage 6 puts a softmax on top
  # (train.sh --dbn --hid-layers 0) and reuses its feature transform and cmvn_opts.
  # --pretrain false skips it: stage 6 then initialises randomly.
  if $pretrain; then
    log "Stage 5: RBM pretraining (exp/dnn_pretrain)"
    steps/nnet/pretrain_dbn.sh --cmd "$train_cmd" --nn-depth $dnn_hid_layers --hid-dim $dnn_hid_dim \
      --watchdog-timeout $watchdog_timeout \
      --cmvn-opts "--norm-means=true --norm-vars=false" data/train exp/dnn_pretrain
  else
    log "Stage 5: skipped (--pretrain false); stage 6 initialises randomly"
  fi
fi

# The DNN's directory names its initialisation, number of workers and (when not the default
# ngsgd) optimizer, so runs with other settings (--pretrain false, --dnn-num-workers 4,
# --dnn-optimizer sgd, --dnn-tag) sit beside each other for RESULTS.md.
dnn_dir=exp/dnn_$($pretrain && echo rbm || echo rand)_w${dnn_num_workers}
[ $dnn_optimizer == ngsgd ] || dnn_dir=${dnn_dir}_$dnn_optimizer
dnn_dir=${dnn_dir}${dnn_tag:+_$dnn_tag}

if [ $stage -le 6 ] && [ $stop_stage -ge 6 ]; then
  log "Stage 6: DNN training on the monophone alignments, $dnn_num_workers MPI worker(s) ($dnn_dir)"
  # 10% of the training speakers are held out for Newbob's learning-rate schedule. With N > 1
  # workers each epoch runs bin/nnet-train-mpi.py under mpiexec (utils/run.py --num-tasks N):
  # every rank trains on its own shard and the models are averaged every dnn_average_every
  # minibatches (learning rate x N, seed 001 section 5.6); see docs/parallel.md for the options.
  # Every affine layer's update is natural-gradient SGD (Kaldi nnet2's online NG-SGD) unless
  # --dnn-optimizer sgd (seed 001 Table 6; the comparison on digits is in RESULTS.md).
  [ -f data/train_cv10/feats.scp ] || utils/subset_data_dir_tr_cv.sh data/train data/train_tr90 data/train_cv10
  dbn_opts=()
  if $pretrain; then   # stage 5's RBMs, with a new softmax layer on top
    dbn_opts=(--dbn exp/dnn_pretrain/final.dbn --hid-layers 0 --feature-transform exp/dnn_pretrain/final.feature_transform)
  fi
  steps/nnet/train.sh --cmd "$train_cmd" --num-workers $dnn_num_workers --average-every $dnn_average_every \
    --hid-layers $dnn_hid_layers --hid-dim $dnn_hid_dim --learn-rate 0.008 "${dbn_opts[@]}" \
    --optimizer $dnn_optimizer --watchdog-timeout $watchdog_timeout $dnn_opts \
    data/train_tr90 data/train_cv10 data/lang exp/mono_ali exp/mono_ali $dnn_dir
fi

if [ $stage -le 7 ] && [ $stop_stage -ge 7 ]; then
  log "Stage 7: DNN decoding of data/test with the monophone graph and WER scoring"
  # Pseudo log-likelihoods log p(s|x) - log p(s) from nnet-forward, acoustic scale 0.1 as nnet1.
  # Pdfs that no training frame was aligned to (count 0.5 after analyze-counts' smoothing: a
  # silence state, spn) would be boosted by -log(prior), about +13; --prior-cutoff 1 excludes
  # them, as Kaldi's PdfPrior excludes classes under its (much smaller) default cutoff.
  steps/nnet/decode.sh --nj $nj --cmd "$decode_cmd" --decoder $decoder --acwt 0.1 --prior-cutoff $dnn_prior_cutoff \
    ${scoring_opts:+--scoring-opts "$scoring_opts"} \
    exp/mono/graph data/test $dnn_dir/decode_test
  grep -H WER $dnn_dir/decode_test/wer_* | utils/best_wer.sh
fi

if [ $stage -le 8 ] && [ $stop_stage -ge 8 ]; then
  log "Stage 8: tri1, triphones on deltas (steps/train_deltas.sh, $tri1_leaves leaves, $tri1_gauss Gaussians), its graph, decoding of data/test and WER scoring"
  # Kaldi's tri1 schedule: a tree from the monophone alignments (context width 3, questions from
  # phone clustering plus extra_questions.txt), 35 passes, realignment at 10, 20, 30. The DNN
  # (stages 5-7) keeps the monophone's alignments; tri1 is decoded as stage 4 decodes the
  # monophone, with the same bigram G, so the two WERs compare (compare-wer.py --decode-dirs=true
  # exp/mono/decode_test exp/tri1/decode_test).
  [ -f exp/mono_ali/ali.1.gz ] || { echo "$0: stage 8 needs exp/mono_ali/ali.1.gz (run stage 3)" >&2; exit 1; }
  steps/train_deltas.sh --cmd "$train_cmd" $tri1_leaves $tri1_gauss data/train data/lang \
    exp/mono_ali exp/tri1
  utils/mkgraph.sh data/lang_test exp/tri1 exp/tri1/graph
  steps/decode.sh --nj $nj --cmd "$decode_cmd" --decoder $decoder ${scoring_opts:+--scoring-opts "$scoring_opts"} exp/tri1/graph data/test exp/tri1/decode_test
  grep -H WER exp/tri1/decode_test/wer_* | utils/best_wer.sh
fi

# The fingerprint: checksums of the corpus, features, alignments and models, and the numeric
# environment (kernel pinning, versions). Compare yours with RESULTS.md's to see at which stage
# your run left the published one; --nj and thread counts do not change it.
log "Fingerprint (exp/fingerprint.md):"
mkdir -p exp && fingerprint-recipe.py . > exp/fingerprint.md.tmp && mv exp/fingerprint.md.tmp exp/fingerprint.md
cat exp/fingerprint.md
# Row by row against RESULTS.md's (the default run): with the default options every row there is
# the same here, on any machine of the kind; exp/fingerprint_vs_results.txt has the rows.
fingerprint-recipe.py --compare=RESULTS.md exp/fingerprint.md > exp/fingerprint_vs_results.txt \
  || log "This run is not RESULTS.md's default run (exp/fingerprint_vs_results.txt says where they part; other options than the defaults part by design)"
log "Done: stages $stage to $(( stop_stage < 8 ? stop_stage : 8 ))"
