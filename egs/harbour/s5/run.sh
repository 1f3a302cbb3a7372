#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# The harbour recipe: a 1025-word continuous-speech task in the manner of DARPA Resource
# Management (queries and commands to a naval harbour's resource-management system: ships,
# ports, cargo, numbers, units, dates, times), read by espeak-ng voices in noise and reverberation
# and synthesised on this machine (espeak-ng + sox), so anyone can regenerate it. Two decoding
# conditions, as RM had: the grammar's word-pair grammar (data/lang_wp) and a trigram estimated
# on training sentences only (data/lang_tg).
#
#   ./run.sh                                          # every stage
#   ./run.sh --stage 3 --stop-stage 4                 # the monophone only
#   ./run.sh --num-train-utts 200 --num-test-utts 50 --num-lm-text 300 --corpus /tmp/harbour \
#     --results exp/RESULTS.md                        # a quick run (sizes follow the data: Sizes)
#   ./run.sh --telephone true --corpus corpus_8k      # 300-3400 Hz at 8 kHz
#   ./run.sh --feat-type plp_pitch                    # PLP + Kaldi pitch (seed 001's GMM input)
#   local/make_results.py                             # RESULTS.md from exp/ (stage 12 runs it)
#   ./run.sh --stage 10 --dnn-max-epochs 4            # stop (or resume) the DNN after epoch 4
#   ./run.sh --stage 10 --dnn-activation relu          # a ReLU DNN (<ParametricRelu>, no RBMs)
#   ./run.sh --stage 10 --dnn-type blstm --rnn-layers 5 --rnn-cell-dim 256   # seed 002's DBLSTM shape
#   ./run.sh --stage 10 --dnn-type blstm --rnn-decode-opts "--chunk-size 64 --chunk-left-context 21 --chunk-right-context 21 --chunk-overlap 32"
#   ./run.sh --stage 10 --dnn-type blstm --rnn-num-workers 2 --dnn-opts "--bmuf true" --dnn-tag bmuf   # BMUF over 2 ranks
#   local/run_blstm.sh                                # RESULTS.md's BLSTMs: 1 worker, MA and BMUF at 2 and 4
#
# Stages: 0 corpus (local/synth_harbour.py), 1 data/{train,test}, data/local/dict (CMUdict),
# data/lang, data/lang_wp (word-pair G), data/lang_tg (trigram G), 2 features (--feat-type:
# MFCC, PLP, either with Kaldi pitch) + CMVN, 3 monophone GMM
# and alignments, 4 monophone graphs and decoding with both G's (exp/mono/decode_test_{wp,tg}),
# 5 tri1 (triphones on deltas, steps/train_deltas.sh) and its alignments, 6 tri2 (LDA+MLLT,
# train_lda_mllt.sh), 7 tri3 (speaker-adaptive training with fMLLR, train_sat.sh, then
# align_fmllr.sh), 8 tri1-tri3 graphs and decoding with both G's (tri3: decode_fmllr.sh),
# 9 RBM pretraining, 10 DNN training, 11 DNN decoding with both G's, 12 RESULTS.md from exp/
# (local/make_results.py) and the run's fingerprint (exp/fingerprint.md; compared first with the
# one in the RESULTS.md it rewrites: exp/fingerprint_vs_results.txt). The DNN (--dnn-input)
# trains on tri3's alignments and fMLLR features (data-fmllr-tri3/, made at stage 9, as Kaldi's
# nnet1 Switchboard recipe) and decodes with tri3's graphs, or with `--dnn-input mfcc` on the
# monophone's alignments and MFCCs with the monophone's graphs. `local/make_results.py --record`
# keeps the run in exp/ as a row of RESULTS.md's calibration table (local/calibration.jsonl).
# Other networks for stages 10-11 (issue 19; of these only the ReLU DNN has run at full size, a tie
# with the sigmoid DNN in RESULTS.md): --dnn-activation relu trains a ReLU DNN (Kaldi's rm ReLU recipe:
# <ParametricRelu>, zero hidden biases, weights N(0, 0.02), learning rate 0.001, random
# initialisation: no stage 9 RBMs); --dnn-type lstm|blstm trains an LSTM or BLSTM
# (steps/nnet/train.sh --network-type, --rnn-* options; unspliced features, SGD with momentum 0.9
# on one worker; the BLSTM's default tool is nnet-train-multistream-perutt.py, whole utterances;
# --rnn-train-opts go to the tool, e.g. CSC-BPTT's chunk options; --rnn-num-workers N trains over
# N MPI ranks with model averaging, or BMUF with --dnn-opts "--bmuf true") and decodes it per utterance
# or, with --rnn-decode-opts, in context-sensitive chunks (seed 002: 21-64+21, 32-frame overlap).
#
# Sizes: the defaults are for the full corpus (5100 training, 1200 test utterances: 100 and 40
# speakers; 1800 leaves and 9000 Gaussians for each of tri1-tri3, as Kaldi's rm/s5). With fewer
# utterances, speakers and tree sizes left unset follow the data: each full-size value times the
# square root of the utterance share (--num-train-utts for the training speakers and tri1-tri3,
# --num-test-utts for the test speakers), so the quick run above gets 20 training and 8 test
# speakers (10 and 6 utterances each, enough for per-speaker fMLLR) and 356 leaves and 1782
# Gaussians (a tree of 1800 leaves on 200 utterances leaves tri1 worse than the monophone, and a
# DNN on its targets deletes most words). The monophone keeps Kaldi's 1000 Gaussians; an option
# given on the command line wins; a default run is unchanged. The quick run above, measured
# (RESULTS_quick.md, local/make_results.py's file of that run), %WER word-pair / trigram on 439
# words: mono 19.82 / 22.10, tri1 28.93 / 29.84, tri2 20.73 / 28.47, tri3 10.02 / 16.40, DNN
# 9.11 / 14.12: the DNN best, tri3 far ahead of the monophone, but tri1 still behind it (open: its
# size rule); 3365 s wall for stages 0-12 on 2 cores at a load average of 4-13 (other work).
#
# Everything is written under data/, exp/, mfcc/ (plp/) and the corpus directory: deleting them
# and running again starts from scratch. Each stage skips what is already done: stage 2
# recomputes features of another --feat-type, but later stages keep their models, so another
# feature type needs a fresh exp/. Each stage's wall
# time goes to exp/stage_seconds/N (stages 10-11: <dnn-dir>/stage_seconds/N).

. utils/recipe_signals.sh   # a signal to run.sh ends its whole process tree

# Begin configuration section.
stage=0                # first stage to run
stop_stage=100         # last stage to run
nj=2                   # parallel jobs (synthesis, features, GMM training and alignment, decoding)
corpus=corpus          # where the synthesised corpus goes (wavs + lists); any path
seed=777               # random seed of the corpus (sentences, speakers, conditions)
num_train_utts=5100    # training utterances (about 5 hours: 3.5 s each)
num_test_utts=1200     # test utterances (about 11,000 words; speakers unseen in training)
num_train_spk=         # training speakers (espeak-ng voice + variant pairs); empty: 100, scaled (Sizes)
num_test_spk=          # test speakers, none of them a training speaker; empty: 40, scaled (Sizes)
num_lm_text=0          # more training-side sentences (text only) for the n-gram LM
test_share=0.1         # share of the sentence space kept for test sentences
snr=5:30               # SNR range of noisy utterances, dB
clean_share=0.2        # share of utterances without noise
noise_kinds=white,pink,brown,engine,babble   # noises utterances draw from
reverb_share=0.3       # share of reverberant utterances (sox reverb)
noise_seconds=120      # length of each noise track (tests: a few seconds)
telephone=false        # true: 300-3400 Hz at 8 kHz (conf/mfcc_8k.conf)
feat_type=mfcc         # mfcc, plp, mfcc_pitch or plp_pitch (steps/make_<type>.sh; RESULTS.md: mfcc)
lm_order=3             # order of the n-gram LM (data/lang_tg)
lms="wp tg"            # decoding conditions: wp (word-pair grammar, data/lang_wp), tg (data/lang_tg)
mono_gauss=1000        # Gaussians of the monophone GMM (train_mono.sh --totgauss)
mono_subset=1000       # the monophone trains on the N shortest utterances (0: all); all are aligned
tri1_leaves=           # tree leaves of tri1; empty: Kaldi's rm/s5 1800, scaled (Sizes)
tri1_gauss=            # Gaussians of tri1; empty: rm/s5's 9000, scaled (Sizes)
tri2_leaves=           # tree leaves of tri2 (LDA+MLLT); empty: 1800, scaled (Sizes)
tri2_gauss=            # Gaussians of tri2; empty: 9000, scaled (Sizes)
tri3_leaves=           # tree leaves of tri3 (SAT); empty: 1800, scaled (Sizes)
tri3_gauss=            # Gaussians of tri3; empty: 9000, scaled (Sizes)
beam=11.0              # decoding beam, GMM and DNN (Kaldi's 13: about 10x slower here, see README)
lattice_beam=5.0       # lattice beam (Kaldi's 8)
max_active=7000        # most active states per frame
decoder=faster         # search: faster (Kaldi's LatticeFasterDecoder) or simple (beam only; RESULTS.md rows before dc723f5)
dnn_input=fmllr        # fmllr: tri3's alignments and fMLLR features; mfcc: the monophone's and MFCCs
dnn_hid_layers=2       # DNN hidden layers (the RBMs of stage 9)
dnn_hid_dim=512        # DNN neurons per hidden layer
pretrain=true          # RBM pretraining (stage 9) before DNN training; false: random initialisation
rbm_iter=1             # RBM pretraining epochs per RBM (the Gaussian-Bernoulli one does 2x)
dnn_max_epochs=20      # most DNN epochs (Newbob stops earlier when the CV loss stops improving)
dnn_num_workers=2      # MPI ranks for DNN training (1: the single-worker nnet-train-frmshuff.py)
dnn_average_every=10   # minibatches between model averages
dnn_optimizer=ngsgd    # ngsgd: natural-gradient SGD; sgd: plain
dnn_prior_cutoff=1     # decoding: pdfs with a count below this (no training frames) are never chosen
dnn_opts=              # more steps/nnet/train.sh options, e.g. "--bmuf true"
dnn_tag=               # appended to the DNN directory name, to keep variants (dnn_opts) apart
dnn_type=dnn           # stages 10-11's network: dnn (feed-forward), lstm or blstm (train.sh --network-type)
dnn_activation=sigmoid # dnn: sigmoid (RBM-pretrained with --pretrain true) or relu (<ParametricRelu>, random init)
rnn_layers=2           # lstm/blstm: recurrent layers (seed 002's DBLSTM: 5)
rnn_cell_dim=256       # lstm/blstm: memory cells per direction (seed 002: 256 forward + 256 backward)
rnn_proj_dim=128       # lstm/blstm: recurrent projection per direction
rnn_learn_rate=0.0001  # lstm/blstm: learning rate (Kaldi's rm LSTM recipe's), with momentum 0.9
rnn_num_workers=1      # lstm/blstm: MPI ranks (N > 1: nnet-train-mpi.py, mixing every dnn_average_every steps; BMUF: --dnn-opts "--bmuf true")
rnn_train_opts=        # lstm/blstm: the training tool's options, e.g. "--num-streams=10 --batch-size=20"
rnn_decode_opts=       # lstm/blstm: steps/nnet/decode.sh options, e.g. "--chunk-size 64 --chunk-left-context 21 ..."
results=RESULTS.md     # stage 12 writes this (local/make_results.py --out)
# End configuration section.

# --help (the header above and the options with their defaults) and the network options' checks
. utils/recipe_options.sh

command_line="$0 $*"
. ./cmd.sh
. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

. utils/recipe_functions.sh   # log, need

stage_done() {
  # stage_done <N> <start-seconds> [<dir>]: the stage's wall time in <dir>/stage_seconds/N
  # (default exp; the DNN stages 10-11 use the DNN's directory), then the load average at its
  # end (the machine may be shared), for local/make_results.py
  # and the options it ran with in <dir>/stage_options/N (this invocation's, as it wrote them to
  # exp/options: another run.sh started meanwhile on the same exp/ rewrites that file)
  mkdir -p ${3:-exp}/stage_seconds ${3:-exp}/stage_options
  echo "$(( SECONDS - $2 )) $(cut -d' ' -f1-3 /proc/loadavg)" > ${3:-exp}/stage_seconds/$1
  echo "$options" > ${3:-exp}/stage_options/$1
}

decode_inputs() {
  # decode_inputs <exp-dir> <graph-dir>: what a decode of data/test reads, for
  # utils/run_once.sh (a restarted stage skips the decodes that finished with the same inputs)
  local f
  echo $2/HCLG.fst $2/words.txt data/test/feats.scp data/test/cmvn.scp data/test/text
  for f in final.mdl final.mat final.alimdl; do [ -f $1/$f ] && echo $1/$f; done
  return 0
}

scaled() {
  # scaled <full-size value> <count> <full-size count>: the value times sqrt(count / full-size
  # count), rounded, at most the value itself, at least 2 (the header's "Sizes")
  awk -v v=$1 -v n=$2 -v full=$3 \
    'BEGIN { s = n >= full ? 1 : sqrt(n / full); x = int(v * s + 0.5); print (x < 2 ? 2 : x) }'
}

# Sizes that follow the data (an option given on the command line wins): resolved here, so that
# exp/options and each stage's stage_options hold the numbers the run used.
: ${num_train_spk:=$(scaled 100 $num_train_utts 5100)}
: ${num_test_spk:=$(scaled 40 $num_test_utts 1200)}
for v in tri1 tri2 tri3; do
  eval ": \${${v}_leaves:=$(scaled 1800 $num_train_utts 5100)} \${${v}_gauss:=$(scaled 9000 $num_train_utts 5100)}"
done

# exp/commands: every invocation's date, commit and command line; exp/options: the options of the latest, as
# name=value lines, copied to <dir>/stage_options/N by each stage (local/make_results.py reads them).
mkdir -p exp
commit=$(git -C "$NNETMIX_ROOT" rev-parse --short HEAD 2>/dev/null) || commit=unknown
git -C "$NNETMIX_ROOT" diff --quiet HEAD 2>/dev/null || commit="$commit+changes"
echo "$(date '+%Y-%m-%d %H:%M:%S') [$commit] $command_line" >> exp/commands
options=$(sed -n '/^# Begin configuration section/,/^# End configuration section/p' "$0" \
  | grep '^[a-z0-9_]*=' | sed 's/=.*//' | while read -r v; do printf '%s=%s\n' $v "${!v}"; done)
echo "$options" > exp/options

grammar=local/harbour_grammar.txt
case $feat_type in
  mfcc|plp|mfcc_pitch|plp_pitch) ;;
  *) echo "$0: --feat-type must be mfcc, plp, mfcc_pitch or plp_pitch, got '$feat_type'" >&2
     exit 1 ;;
esac
# The DNN's input: targets, features, the GMM whose graphs decode it, and the RBM directory.
case $dnn_input in
  fmllr) ali=exp/tri3_ali dnn_data=data-fmllr-tri3 dnn_gmm=tri3 dnn_cmvn="" pretrain_dir=exp/dnn_pretrain_fmllr ;;
  mfcc) ali=exp/mono_ali dnn_data=data dnn_gmm=mono dnn_cmvn="--norm-means=true --norm-vars=false"
        pretrain_dir=exp/dnn_pretrain ;;
  *) echo "$0: --dnn-input must be fmllr or mfcc, got '$dnn_input'" >&2; exit 1 ;;
esac
check_network_opts
# RBM pretraining (stage 9) only for the sigmoid DNN
use_rbm=$pretrain
[ $dnn_type == dnn ] && [ $dnn_activation == sigmoid ] || use_rbm=false
# the test set's speaker transforms come from tri3's decoding with this grammar (the trigram's
# when decoded, as Kaldi's swbd takes its tg decode's)
fmllr_lm=tg
echo " $lms " | grep -q " tg " || fmllr_lm=${lms%% *}
base_feat=${feat_type%_pitch}   # mfcc or plp: its config, log and archive directories
feat_opts=(--$base_feat-config conf/$base_feat.conf)
if [ $feat_type != $base_feat ]; then feat_opts+=(--pitch-config conf/pitch.conf); fi
$telephone && feat_opts=("${feat_opts[@]/%.conf/_8k.conf}")

if [ $stage -le 0 ] && [ $stop_stage -ge 0 ]; then
  log "Stage 0: synthesise the harbour corpus into $corpus ($num_train_utts train, $num_test_utts test utterances)"
  t0=$SECONDS
  mkdir -p $corpus/log
  $train_cmd $corpus/log/synth_harbour.log \
    local/synth_harbour.py --grammar $grammar --seed $seed --num-train $num_train_utts \
      --num-test $num_test_utts --num-lm-text $num_lm_text --num-train-spk $num_train_spk \
      --num-test-spk $num_test_spk --test-share $test_share --snr $snr \
      --clean-share $clean_share --noise-kinds $noise_kinds --reverb-share $reverb_share \
      --noise-seconds $noise_seconds --telephone $telephone --nj $nj $corpus \
    || { grep ERROR $corpus/log/synth_harbour.log | tail -n 1 >&2; exit 1; }
  grep "done:" $corpus/log/synth_harbour.log | tail -n 1 || true
  stage_done 0 $t0
fi

if [ $stage -le 1 ] && [ $stop_stage -ge 1 ]; then
  log "Stage 1: data/train, data/test, data/local/dict, data/lang, data/lang_wp, data/lang_tg"
  t0=$SECONDS
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
  stage_done 1 $t0
fi

if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
  log "Stage 2: $feat_type features (${feat_opts[*]}) and per-speaker CMVN statistics"
  t0=$SECONDS
  for x in train test; do
    need 2 data/$x/wav.scp "the data directories: run stage 1"
    steps/make_$feat_type.sh --nj $nj --cmd "$train_cmd" "${feat_opts[@]}" \
      data/$x exp/make_$base_feat/$x $base_feat
    steps/compute_cmvn_stats.sh data/$x exp/make_$base_feat/$x $base_feat
    utils/validate_data_dir.sh data/$x
  done
  stage_done 2 $t0
fi

if [ $stage -le 3 ] && [ $stop_stage -ge 3 ]; then
  log "Stage 3: monophone GMM-HMM (steps/train_mono.sh, $mono_gauss Gaussians) and alignment of data/train"
  t0=$SECONDS
  need 3 data/train/feats.scp "features: run stage 2"
  # Kaldi's train_mono.sh schedule: flat start, 40 passes, realignment at passes 1-10, 12, ...;
  # the stress and position variants of a phone share one tree root (data/lang/phones/roots.txt).
  # A flat start aligns short utterances best, and each realignment pass costs minutes at the
  # full size on 2 cores: the monophone sees the mono_subset shortest utterances, as Kaldi's wsj
  # trains its on the 2000 shortest of si84
  # (data/train_short). The alignments of all of data/train are the DNN's frame targets
  # (stage 10) until tri3 exists.
  mono_data=data/train
  if [ $mono_subset -gt 0 ] && [ $mono_subset -lt $(wc -l < data/train/utt2spk) ]; then
    rm -rf data/train_short
    utils/subset_data_dir.sh --shortest data/train $mono_subset data/train_short
    mono_data=data/train_short
  fi
  steps/train_mono.sh --nj $nj --cmd "$train_cmd" --totgauss $mono_gauss $mono_data data/lang exp/mono
  steps/align_si.sh --nj $nj --cmd "$train_cmd" data/train data/lang exp/mono exp/mono_ali
  stage_done 3 $t0
fi

if [ $stage -le 4 ] && [ $stop_stage -ge 4 ]; then
  log "Stage 4: monophone graphs ($lms), decoding of data/test and WER scoring"
  t0=$SECONDS
  # One HCLG per grammar (exp/mono/graph_wp, graph_tg); lattices at acwt 0.083333 and the beams
  # above; local/score.sh sweeps LM weight 7-17 and insertion penalty 0, 0.5, 1. A decode that
  # finished with the same graph, model, features and options is not run again (run_once.sh).
  for lm in $lms; do
    need 4 data/lang_$lm/G.fst "the grammars: run stage 1"
    need 4 exp/mono/final.mdl "the monophone GMM: run stage 3"
    utils/mkgraph.sh data/lang_$lm exp/mono exp/mono/graph_$lm
    utils/run_once.sh exp/mono/decode_test_$lm $(decode_inputs exp/mono exp/mono/graph_$lm) -- \
      steps/decode.sh --nj $nj --cmd "$decode_cmd" --decoder $decoder --beam $beam --lattice-beam $lattice_beam \
      --max-active $max_active exp/mono/graph_$lm data/test exp/mono/decode_test_$lm
    grep -H WER exp/mono/decode_test_$lm/wer_* | utils/best_wer.sh
  done
  stage_done 4 $t0
fi

if [ $stage -le 5 ] && [ $stop_stage -ge 5 ]; then
  log "Stage 5: tri1, triphones on deltas (steps/train_deltas.sh, $tri1_leaves leaves, $tri1_gauss Gaussians) and alignment"
  t0=$SECONDS
  need 5 exp/mono_ali/ali.1.gz "the monophone alignments: run stage 3"
  # Kaldi's schedule: tree from the monophone alignments (context width 3, questions from
  # clustering plus extra_questions.txt, roots.txt shares a phone's stress and position
  # variants), 35 passes, realignment at 10, 20, 30, mixing up over the first 25.
  steps/train_deltas.sh --cmd "$train_cmd" $tri1_leaves $tri1_gauss data/train data/lang \
    exp/mono_ali exp/tri1
  steps/align_si.sh --nj $nj --cmd "$train_cmd" data/train data/lang exp/tri1 exp/tri1_ali
  stage_done 5 $t0
fi

if [ $stage -le 6 ] && [ $stop_stage -ge 6 ]; then
  log "Stage 6: tri2, LDA+MLLT (steps/train_lda_mllt.sh, $tri2_leaves leaves, $tri2_gauss Gaussians) and alignment"
  t0=$SECONDS
  need 6 exp/tri1_ali/ali.1.gz "tri1's alignments: run stage 5"
  # frames spliced +/-3 (7 x 13), LDA to 40 dimensions on tri1's pdfs, MLLT at passes 2 4 6 12
  steps/train_lda_mllt.sh --cmd "$train_cmd" --splice-opts "--left-context=3 --right-context=3" \
    $tri2_leaves $tri2_gauss data/train data/lang exp/tri1_ali exp/tri2
  steps/align_si.sh --nj $nj --cmd "$train_cmd" data/train data/lang exp/tri2 exp/tri2_ali
  stage_done 6 $t0
fi

if [ $stage -le 7 ] && [ $stop_stage -ge 7 ]; then
  log "Stage 7: tri3, speaker-adaptive training (steps/train_sat.sh, $tri3_leaves leaves, $tri3_gauss Gaussians) and fMLLR alignment"
  t0=$SECONDS
  need 7 exp/tri2_ali/ali.1.gz "tri2's alignments: run stage 6"
  # per-speaker fMLLR on tri2's LDA+MLLT features, re-estimated at passes 2 4 6 12; the
  # alignments and transforms of exp/tri3_ali are what the DNN on fMLLR features needs
  steps/train_sat.sh --cmd "$train_cmd" $tri3_leaves $tri3_gauss data/train data/lang \
    exp/tri2_ali exp/tri3
  steps/align_fmllr.sh --nj $nj --cmd "$train_cmd" data/train data/lang exp/tri3 exp/tri3_ali
  stage_done 7 $t0
fi

if [ $stage -le 8 ] && [ $stop_stage -ge 8 ]; then
  log "Stage 8: tri1, tri2, tri3 graphs ($lms), decoding of data/test and WER scoring"
  t0=$SECONDS
  # As stage 4, with context-dependent graphs; tri3 decodes as Kaldi's decode_fmllr.sh does:
  # the speaker-independent final.alimdl into decode_test_<lm>.si, fMLLR from its lattices, an
  # adapted pass, a second fMLLR from its lattices, then those lattices rescored with the final
  # features (no third search); its transforms in exp/tri3/decode_test_<lm>/trans.*.
  for sys in tri1 tri2 tri3; do
    need 8 exp/$sys/final.mdl "$sys: run stages 5-7"
    for lm in $lms; do
      need 8 data/lang_$lm/G.fst "the grammars: run stage 1"
      utils/mkgraph.sh data/lang_$lm exp/$sys exp/$sys/graph_$lm
      decode=steps/decode.sh
      [ $sys == tri3 ] && decode=steps/decode_fmllr.sh
      utils/run_once.sh exp/$sys/decode_test_$lm $(decode_inputs exp/$sys exp/$sys/graph_$lm) -- \
        $decode --nj $nj --cmd "$decode_cmd" --decoder $decoder --beam $beam --lattice-beam $lattice_beam \
        --max-active $max_active exp/$sys/graph_$lm data/test exp/$sys/decode_test_$lm
      grep -H WER exp/$sys/decode_test_$lm/wer_* | utils/best_wer.sh
    done
  done
  stage_done 8 $t0
fi

if [ $stage -le 9 ] && [ $stop_stage -ge 9 ]; then
  t0=$SECONDS
  if [ $dnn_input == fmllr ]; then
    # tri3's speaker-adapted features on disk (steps/nnet/make_fmllr_feats.sh): training speakers'
    # transforms from align_fmllr.sh, test speakers' from tri3's decoding (decode_fmllr.sh)
    log "Stage 9: fMLLR features of data/train and data/test ($dnn_data, transforms of exp/tri3_ali and exp/tri3/decode_test_$fmllr_lm)"
    need 9 exp/tri3_ali/trans.1 "tri3's alignments: run stage 7"
    need 9 exp/tri3/decode_test_$fmllr_lm/trans.1 "tri3's decoding: run stage 8"
    for x in train test; do
      tdir=exp/tri3_ali
      [ $x == test ] && tdir=exp/tri3/decode_test_$fmllr_lm
      if [ ! -f $dnn_data/$x/feats.scp ] || [ $dnn_data/$x/feats.scp -ot $tdir/trans.1 ]; then
        rm -rf $dnn_data/$x
        steps/nnet/make_fmllr_feats.sh --nj $nj --cmd "$train_cmd" --transform-dir $tdir \
          $dnn_data/$x data/$x exp/tri3 $dnn_data/$x/log $dnn_data/$x/data
        # per-speaker statistics too, so the directory is complete (the DNN uses none: the
        # transforms already normalise each speaker)
        steps/compute_cmvn_stats.sh $dnn_data/$x $dnn_data/$x/log $dnn_data/$x/data
      fi
    done
  fi
  # A DBN of dnn_hid_layers x dnn_hid_dim RBMs (CD-1, rbm_iter epochs each) on spliced +/-5
  # frames of the fMLLR features (or per-speaker mean-normalised MFCCs with --dnn-input mfcc);
  # stage 10 puts a softmax on top.
  if $use_rbm; then
    log "Stage 9: RBM pretraining ($pretrain_dir, $dnn_hid_layers x $dnn_hid_dim, $dnn_input features)"
    need 9 $dnn_data/train/feats.scp "features: run stage 2"
    steps/nnet/pretrain_dbn.sh --cmd "$train_cmd" --nn-depth $dnn_hid_layers --hid-dim $dnn_hid_dim \
      --rbm-iter $rbm_iter --cmvn-opts "$dnn_cmvn" $dnn_data/train $pretrain_dir
  else
    log "Stage 9: no RBMs (--pretrain $pretrain --dnn-type $dnn_type --dnn-activation $dnn_activation); stage 10 initialises randomly"
  fi
  stage_done 9 $t0
fi

# As egs/digits/s5: the DNN's directory names its initialisation, workers and optimizer.
# (relu: exp/dnn_fmllr_relu_w2; lstm/blstm: exp/dnn_fmllr_blstm2x256 with one worker, SGD,
# exp/dnn_fmllr_blstm2x256_w2 with --rnn-num-workers 2)
dnn_init=$($use_rbm && echo rbm || echo rand)
[ $dnn_activation == relu ] && dnn_init=relu
dnn_dir=exp/dnn_$([ $dnn_input == mfcc ] || echo fmllr_)${dnn_init}_w${dnn_num_workers}
[ $dnn_optimizer == ngsgd ] || dnn_dir=${dnn_dir}_$dnn_optimizer
if [ $dnn_type != dnn ]; then
  dnn_dir=exp/dnn_$([ $dnn_input == mfcc ] || echo fmllr_)${dnn_type}${rnn_layers}x${rnn_cell_dim}
  [ $rnn_num_workers -le 1 ] || dnn_dir=${dnn_dir}_w$rnn_num_workers
fi
dnn_dir=${dnn_dir}${dnn_tag:+_$dnn_tag}
workers=$([ $dnn_type == dnn ] && echo $dnn_num_workers || echo $rnn_num_workers)

if [ $stage -le 10 ] && [ $stop_stage -ge 10 ]; then
  log "Stage 10: $dnn_type training on $ali, $workers MPI worker(s), at most $dnn_max_epochs epochs ($dnn_dir)"
  t0=$SECONDS
  need 10 $ali/final.mdl "the alignments: run stage 3"
  # 10% of the training speakers are Newbob's CV set (utils/subset_data_dir_tr_cv.sh); with N > 1
  # workers each epoch runs bin/nnet-train-mpi.py under mpiexec, averaging every
  # dnn_average_every minibatches (docs/parallel.md).
  need 10 $dnn_data/train/feats.scp "the DNN's features: run stage 9"
  [ -f $dnn_data/train_cv10/feats.scp ] && [ $dnn_data/train_cv10/feats.scp -nt $dnn_data/train/feats.scp ] || \
    utils/subset_data_dir_tr_cv.sh $dnn_data/train $dnn_data/train_tr90 $dnn_data/train_cv10
  dbn_opts=()
  if $use_rbm; then   # stage 9's RBMs, with a new softmax layer on top
    need 10 $pretrain_dir/final.dbn "the RBMs: run stage 9"
    dbn_opts=(--dbn $pretrain_dir/final.dbn --hid-layers 0 --feature-transform $pretrain_dir/final.feature_transform)
  elif [ -z "$dnn_cmvn" ]; then
    dbn_opts=(--cmvn-opts "--norm-means=false --norm-vars=false")  # fMLLR: no per-speaker CMVN
  fi
  if [ $dnn_type != dnn ]; then
    # issue 19: an LSTM or BLSTM on unspliced features, SGD with momentum 0.9; with
    # --rnn-num-workers N > 1 each epoch is nnet-train-mpi.py over N ranks (--stream-mode
    # perutt for blstm, multistream for lstm, with the --rnn-train-opts), model averaging
    # (learning rate x N) or BMUF (--dnn-opts "--bmuf true") every --dnn-average-every steps
    steps/nnet/train.sh --cmd "$train_cmd" --network-type $dnn_type --proto-opts "$(rnn_proto_opts)" \
      --num-workers $rnn_num_workers --average-every $dnn_average_every \
      --learn-rate $rnn_learn_rate --momentum 0.9 ${rnn_train_opts:+--train-tool-opts "$rnn_train_opts"} \
      "${dbn_opts[@]}" --max-iters $dnn_max_epochs $dnn_opts \
      $dnn_data/train_tr90 $dnn_data/train_cv10 data/lang $ali $ali $dnn_dir
  else
    act_opts=(--learn-rate 0.008)
    [ $dnn_activation == relu ] && act_opts=(--learn-rate 0.001 --proto-opts "$(relu_proto_opts)")
    steps/nnet/train.sh --cmd "$train_cmd" --num-workers $dnn_num_workers --average-every $dnn_average_every \
      --hid-layers $dnn_hid_layers --hid-dim $dnn_hid_dim "${act_opts[@]}" "${dbn_opts[@]}" \
      --max-iters $dnn_max_epochs --optimizer $dnn_optimizer $dnn_opts \
      $dnn_data/train_tr90 $dnn_data/train_cv10 data/lang $ali $ali $dnn_dir
  fi
  stage_done 10 $t0 $dnn_dir
fi

if [ $stage -le 11 ] && [ $stop_stage -ge 11 ]; then
  log "Stage 11: DNN decoding of $dnn_data/test with the $dnn_gmm graphs ($lms) and WER scoring"
  t0=$SECONDS
  # The graphs of the GMM whose alignments the DNN learnt (its outputs are that GMM's pdfs);
  # pseudo log-likelihoods log p(s|x) - log p(s) at acoustic scale 0.1, pdfs without training
  # frames left out (--dnn-prior-cutoff, as egs/digits/s5).
  for lm in $lms; do
    need 11 exp/$dnn_gmm/graph_$lm/HCLG.fst "the graphs: run stage $([ $dnn_gmm == mono ] && echo 4 || echo 8)"
    need 11 $dnn_dir/final.nnet "the DNN: run stage 10"
    decode_opts=
    [ $dnn_type == dnn ] || decode_opts=$rnn_decode_opts
    steps/nnet/decode.sh --nj $nj --cmd "$decode_cmd" --acwt 0.1 --prior-cutoff $dnn_prior_cutoff $decode_opts \
      --decoder $decoder --beam $beam --lattice-beam $lattice_beam --max-active $max_active \
      exp/$dnn_gmm/graph_$lm $dnn_data/test $dnn_dir/decode_test_$lm
    grep -H WER $dnn_dir/decode_test_$lm/wer_* | utils/best_wer.sh
  done
  stage_done 11 $t0 $dnn_dir
fi

if [ $stage -le 12 ] && [ $stop_stage -ge 12 ]; then
  # The fingerprint: checksums of corpus, features, alignments, models and WER files, and the
  # numeric environment; compare yours with RESULTS.md's to see at which stage your run left it.
  log "Stage 12: fingerprint (exp/fingerprint.md) and $results (local/make_results.py)"
  fingerprint-recipe.py . > exp/fingerprint.md.tmp && mv exp/fingerprint.md.tmp exp/fingerprint.md
  cat exp/fingerprint.md
  # Before $results is rewritten from this run: this run's rows against the run it holds
  # (exp/fingerprint_vs_results.txt: same, differs or missing; the first that differs is the
  # stage where this run left that one)
  if [ -f $results ] && grep -q '^| what | md5 |$' $results; then
    fingerprint-recipe.py --compare=$results exp/fingerprint.md > exp/fingerprint_vs_results.txt \
      || log "This run is not the one $results held (exp/fingerprint_vs_results.txt says where they part)"
  fi
  local/make_results.py --prog local/make_results.py --exp exp --out $results
fi

log "Done: stages $stage to $(( stop_stage < 12 ? stop_stage : 12 ))"
