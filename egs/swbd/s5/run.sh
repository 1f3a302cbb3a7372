#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Switchboard-1 (300 h of telephone conversations) with Hub5'00 (eval2000) as the test set, the
# seeds' task: Kaldi's egs/swbd/s5c data, dictionary and LM stages, features, its GMM ladder
# (monophone, tri1 and tri2 on deltas, tri3 LDA+MLLT, tri4 SAT) whose tri4 alignments and graph
# the DNN learns from (or those of an existing Kaldi GMM system), RBM pretraining and a 6 x 2048
# sigmoid DNN trained over MPI with NG-SGD and model averaging, scored on the Switchboard and
# CallHome halves of eval2000.
#
#   ./run.sh --swbd-dir /export/corpora3/LDC/LDC97S62 \
#            --eval2000-dirs "/export/corpora2/LDC/LDC2002S09/hub5e_00 /export/corpora2/LDC/LDC2002T43"
#   ./run.sh --stage 2 --stop-stage 2                  # one stage
#   ./run.sh --stage 12 --gmm-dir /path/to/kaldi/egs/swbd/s5c/exp/tri4   # after 0-5: DNN on Kaldi tri4 targets
#   ./run.sh --num-tri-utts 20000 --tri1-leaves 2000 --tri1-gauss 10000 ...   # a smaller GMM ladder
#   ./run.sh --stage 12 --dnn-type blstm --dnn-opts "--bmuf true"   # seed 002's DBLSTM, CSC-BPTT, BMUF
#   ./run.sh --stage 12 --dnn-hid-layers 7 --dnn-activation relu    # seed 002's 7 x 2048 ReLU DNN
#
# LDC releases (the corpus locations are options; nothing is downloaded):
#   LDC97S62   Switchboard-1 Release 2 audio (swb1/disc*/data/*.sph, or flat)   --swbd-dir
#              with the MS-State ms98 transcripts and dictionary in
#              transcriptions/swb_ms98_transcriptions (or --swbd-trans-dir; the same files are
#              switchboard_word_alignments.tar.gz of openslr.org/resources/5)
#   LDC2002S09 Hub5'00 audio, hub5e_00/english/*.sph and hub5e_00.pem          --eval2000-dirs (1st)
#   LDC2002T43 Hub5'00 transcripts, [2000_hub5_eng_eval_tr/]reference/*.stm, *.glm --eval2000-dirs (2nd)
#
# Stages: 0 dictionary, 1 training data + lang, 2 eval2000, 3 trigram LM + G.fst, 4 MFCC and fbank
# features, 5 train_dev / train_nodup / train_100k_nodup subsets, 6 monophone GMM + alignments,
# 7 tri1 (deltas), 8 tri2 (deltas) + alignment of train_nodup, 9 tri3 (LDA+MLLT), 10 tri4 (SAT) +
# fMLLR alignment of train_nodup (the DNN's targets), 11 GMM graphs and eval2000 decoding (stages
# 6-11 are skipped with --gmm-dir or --ali-dir + --graph-dir), 12 RBM pretraining, 13 DNN
# training, 14 DNN decoding of eval2000 and scoring. Everything is written under data/, exp/,
# mfcc/ and fbank/; each stage skips what is already finished.
#
# Seed 002's networks (issue 19; none of them run on the corpus yet) are options of stages 12-14:
# --dnn-type blstm is its SWB DBLSTM with the --rnn-* defaults (5 layers of 512 memory blocks,
# 256 forward + 256 backward, on unspliced fbank; its 9304 tied states are its GMM's, ours are
# tri4's pdfs), trained with CSC-BPTT "21-64+21" (--rnn-train-opts) on --dnn-num-workers MPI
# ranks (model averaging every --dnn-average-every steps of --num-streams chunks, or BMUF with
# --dnn-opts "--bmuf true"), SGD with momentum 0.9, no RBMs, and decoded in the same chunks
# with a 32-frame overlap (--rnn-decode-opts); --dnn-type lstm a uni-directional LSTM.
# --dnn-activation relu is its SWB+Fisher DNN's activation (with --dnn-hid-layers 7: 7 x 2048
# <ParametricRelu>, random initialisation, no RBMs; Fisher and its 18002 states are not here).

. utils/recipe_signals.sh   # a signal to run.sh ends its whole process tree

# Begin configuration section.
stage=0                # first stage to run
stop_stage=100         # last stage to run
nj=8                   # parallel jobs (features, GMM, decoding); Kaldi uses 30-50 on a grid
swbd_dir=/export/corpora3/LDC/LDC97S62  # Switchboard-1 Release 2 (LDC97S62)
swbd_trans_dir=        # ms98 transcripts + sw-ms98-dict.text (default: <swbd-dir>/transcriptions/swb_ms98_transcriptions)
eval2000_dirs="/export/corpora2/LDC/LDC2002S09/hub5e_00 /export/corpora2/LDC/LDC2002T43"  # Hub5'00 audio and transcripts
sph2pipe=sph2pipe      # the sph2pipe command in wav.scp (Kaldi: $KALDI_ROOT/tools/sph2pipe_v2.5/sph2pipe)
num_dev_utts=4000      # train_dev: the first N utterances (Kaldi's 4k, about 5 hours)
nodup_max_count=300    # train_nodup: at most about N utterances of one transcript (Kaldi's 300)
num_short_utts=100000  # monophone data: the N shortest utterances of train_nodev ...
num_mono_utts=30000    # ... of which N spread evenly (Kaldi's train_30kshort)
num_tri_utts=100000    # tri1 and tri2 data: the first N utterances of train_nodev (Kaldi's train_100k) ...
tri_dup_max_count=200  # ... with at most about N of one transcript (train_100k_nodup; tri3, tri4: train_nodup)
# The GMM ladder's tree leaves and Gaussians: Kaldi s5c's for the full corpus (about 110 h for
# tri1-tri2, 286 h for tri3-tri4); scale them with the data when the subsets are smaller.
tri1_leaves=3200       # tri1, deltas on train_100k_nodup
tri1_gauss=30000
tri2_leaves=4000       # tri2, deltas on train_100k_nodup
tri2_gauss=70000
tri3_leaves=6000       # tri3, LDA+MLLT on train_nodup
tri3_gauss=140000
tri4_leaves=11500      # tri4, SAT on train_nodup
tri4_gauss=200000
gmm_config=            # config file for every GMM training script (their --config), e.g. num_iters=10 for a quick ladder
gmm_decode="tri1 tri2 tri3 tri4"  # GMMs stage 11 decodes eval2000 with ("": only tri4's graph, for the DNN)
lm_order=3             # the Switchboard LM (Kaldi's sw1_tg)
lm_heldout_sents=10000 # the first N transcripts are held out of the LM, for its perplexity (Kaldi's 10k)
gmm_dir=               # an existing Kaldi GMM system, e.g. .../s5c/exp/tri4: implies --ali-dir <gmm-dir>_ali_nodup --graph-dir <gmm-dir>/graph_sw1_tg
ali_dir=               # alignments of train_nodup (with final.mdl) for the DNN targets (default: exp/tri4_ali_nodup)
graph_dir=             # decoding graph (HCLG.fst, words.txt) made with the same GMM's model (default: exp/tri4/graph_nosp_sw1_tg)
pretrain=true          # RBM pretraining (stage 12); false: random initialisation (seed 001, Table 2)
rbm_num_workers=1      # MPI ranks per RBM (Kaldi pretrains on one GPU; > 1 mixes every dnn_average_every minibatches)
dnn_hid_layers=6       # the seeds' network: 6 hidden layers ...
dnn_hid_dim=2048       # ... of 2048 sigmoids, 440 inputs (40 fbank x 11 frames)
dnn_minibatch_size=1024  # the seeds' minibatch (seed 001, section 5.1)
# Learning rate at minibatch 1024, not tuned here: that needs the corpus. Kaldi's swbd nnet1 DNN
# (local/nnet/run_dnn.sh) uses 0.008 at minibatch 256, and nnet1 sums the gradient over the
# minibatch, so 0.008 * 256 / 1024 = 0.002 keeps the size of each update what it is in Kaldi
# (0.008 itself, the per-frame rate, would make each update 4x larger). Seed 001 reports 0.32 at
# minibatch 1024 without saying whether the gradient is summed or averaged or whether the number
# already includes the x N of model averaging; steps/nnet/train.sh multiplies by the number of
# workers itself (--scale-lr-by-workers auto, seed 001 section 5.6). Tune 0.001-0.008 on train_dev
# before the full run.
dnn_learn_rate=0.002
dnn_num_workers=8      # MPI ranks (one GPU each, cmd.sh's cuda_cmd); the seeds use up to 32
dnn_average_every=10   # minibatches between model averages (the seeds' averaging frequency)
dnn_optimizer=ngsgd    # NG-SGD (seed 001, section 4 and Table 6: needed for model averaging)
dnn_backend=auto       # cuda when a GPU is there, else cpu
dnn_opts=              # more steps/nnet/train.sh options, e.g. "--bmuf true"
dnn_tag=               # appended to the DNN directory name, to keep variants apart
dnn_type=dnn           # stages 12-14's network: dnn (feed-forward), lstm or blstm (train.sh --network-type)
dnn_activation=sigmoid # dnn: sigmoid (seed 001, RBM-pretrained) or relu (seed 002's SWB+Fisher DNN: <ParametricRelu>, random init)
rnn_layers=5           # lstm/blstm: recurrent layers (seed 002's DBLSTM: 5)
rnn_cell_dim=256       # lstm/blstm: memory cells per direction (seed 002: 512 memory blocks, 256 forward + 256 backward)
# Seed 002 gives no projection; nnet1's <BlstmProjected> always has one. 256 per direction (no
# reduction) makes 12.3M parameters with 40 fbank inputs and 9304 outputs, the nearest to the
# seed's "about 11 million" (128 would make 6.2M); tests/egs/test_swbd_networks.py counts them.
rnn_proj_dim=256       # lstm/blstm: recurrent projection per direction
rnn_learn_rate=0.0001  # lstm/blstm: learning rate (Kaldi's rm LSTM recipe's, not tuned here), momentum 0.9
rnn_train_opts="--chunk-size=64 --chunk-left-context=21 --chunk-right-context=21"  # lstm/blstm: the training tool's options (seed 002's CSC-BPTT 21-64+21)
rnn_decode_opts="--chunk-size 64 --chunk-left-context 21 --chunk-right-context 21 --chunk-overlap 32"  # lstm/blstm: steps/nnet/decode.sh's (seed 002: 32-frame overlap)
decode_acwt=0.08333    # acoustic scale of DNN decoding (Kaldi's swbd run_dnn.sh)
scoring_opts=          # local/score.sh options of every decode, e.g. "--min-lmwt 10 --max-lmwt 12" (a quick run)
# End configuration section.

# --help (the header above and the options with their defaults) and the network options' checks
. utils/recipe_options.sh
. ./cmd.sh
. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

. utils/recipe_functions.sh   # log, need

swbd_trans_dir=${swbd_trans_dir:-$swbd_dir/transcriptions/swb_ms98_transcriptions}
check_network_opts
# RBM pretraining (stage 12) only for the sigmoid DNN
use_rbm=$pretrain
[ $dnn_type == dnn ] && [ $dnn_activation == sigmoid ] || use_rbm=false
read -r -a eval2000 <<< "$eval2000_dirs"
if [ ${#eval2000[@]} -ne 2 ]; then
  echo "$0: --eval2000-dirs takes two directories, the LDC2002S09 audio (hub5e_00) and the" \
       "LDC2002T43 transcripts, got '$eval2000_dirs'" >&2
  exit 1
fi
where_swbd="Switchboard-1 Release 2, LDC97S62: --swbd-dir, e.g. /export/corpora3/LDC/LDC97S62"
where_ms98="the MS-State ms98 transcripts of LDC97S62 (transcriptions/swb_ms98_transcriptions), or --swbd-trans-dir with switchboard_word_alignments.tar.gz from openslr.org/resources/5 unpacked"
where_eval="Hub5'00: --eval2000-dirs \"/export/corpora2/LDC/LDC2002S09/hub5e_00 /export/corpora2/LDC/LDC2002T43\""

# The GMM system the DNN learns from: our tri4 (stages 6-11) or a Kaldi one.
if [ -n "$gmm_dir" ]; then
  ali_dir=${ali_dir:-${gmm_dir}_ali_nodup}
  graph_dir=${graph_dir:-$gmm_dir/graph_sw1_tg}
fi
if [ -n "$ali_dir$graph_dir" ] && { [ -z "$ali_dir" ] || [ -z "$graph_dir" ]; }; then
  echo "$0: give both --ali-dir and --graph-dir (or --gmm-dir): the DNN decodes with the" \
       "transition model of its alignments, so the graph must come from the same GMM system" >&2
  exit 1
fi
own_gmm=true
if [ -n "$ali_dir" ]; then own_gmm=false; fi
ali_dir=${ali_dir:-exp/tri4_ali_nodup}
graph_dir=${graph_dir:-exp/tri4/graph_nosp_sw1_tg}

if [ $stage -le 0 ] && [ $stop_stage -ge 0 ]; then
  log "Stage 0: dictionary data/local/dict_nosp from the ms98 lexicon"
  need 0 $swbd_trans_dir/sw-ms98-dict.text "$where_ms98"
  local/swbd1_prepare_dict.sh $swbd_trans_dir data/local/dict_nosp
fi

if [ $stage -le 1 ] && [ $stop_stage -ge 1 ]; then
  log "Stage 1: Switchboard-1 training data data/train and data/lang_nosp"
  need 1 $swbd_dir "$where_swbd"
  need 1 $swbd_trans_dir "$where_ms98"
  need 1 data/local/dict_nosp/lexicon.txt "the dictionary: run stage 0"
  # Every conversation side is a recording and a speaker; utterances are the ms98 segments with
  # words (see local/swbd1_data_prep.py). data/local/train/text keeps every transcript for
  # the LM, as Kaldi's.
  local/swbd1_data_prep.sh --sph2pipe "$sph2pipe" $swbd_dir $swbd_trans_dir data/train
  utils/prepare_lang.sh data/local/dict_nosp "<unk>" data/local/lang_nosp data/lang_nosp
fi

if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
  log "Stage 2: Hub5'00 data data/eval2000 (with its stm and GLM for scoring)"
  need 2 ${eval2000[0]}/english "the Hub5'00 audio, LDC2002S09 hub5e_00; $where_eval"
  need 2 ${eval2000[1]} "the Hub5'00 transcripts, LDC2002T43; $where_eval"
  local/eval2000_data_prep.sh --sph2pipe "$sph2pipe" ${eval2000[0]} ${eval2000[1]} data/eval2000
fi

if [ $stage -le 3 ] && [ $stop_stage -ge 3 ]; then
  log "Stage 3: Switchboard trigram LM (data/local/lm) and data/lang_nosp_sw1_tg/G.fst"
  need 3 data/local/train/text "the training transcripts: run stage 1"
  need 3 data/lang_nosp/words.txt "the lang directory: run stage 1"
  # Kneser-Ney trigram over the lexicon's words, the first 10k transcripts held out (Kaldi's
  # sw1.o3g.kn; no Fisher transcripts, as in the seeds: "trained on the training transcripts only").
  local/swbd1_train_lms.sh --order $lm_order --heldout-sents $lm_heldout_sents data/local/train/text data/lang_nosp \
    data/local/dict_nosp/lexicon.txt data/local/lm data/lang_nosp_sw1_tg
fi

if [ $stage -le 4 ] && [ $stop_stage -ge 4 ]; then
  log "Stage 4: MFCC (GMM) and 40-bin fbank (DNN) features with per-speaker CMVN statistics"
  for x in train eval2000; do
    need 4 data/$x/wav.scp "run stage $([ $x = train ] && echo 1 || echo 2)"
    steps/make_mfcc.sh --nj $nj --cmd "$train_cmd" data/$x exp/make_mfcc/$x mfcc
    steps/compute_cmvn_stats.sh data/$x exp/make_mfcc/$x mfcc
    utils/fix_data_dir.sh data/$x
    # the DNN's features live in a parallel data directory with the same utterances
    mkdir -p data/fbank/$x
    for f in wav.scp segments text utt2spk spk2utt reco2file_and_channel stm glm; do
      if [ -f data/$x/$f ]; then cp data/$x/$f data/fbank/$x/$f; fi
    done
    steps/make_fbank.sh --nj $nj --cmd "$train_cmd" data/fbank/$x exp/make_fbank/$x fbank
    steps/compute_cmvn_stats.sh data/fbank/$x exp/make_fbank/$x fbank
    utils/fix_data_dir.sh data/fbank/$x
  done
fi

if [ $stage -le 5 ] && [ $stop_stage -ge 5 ]; then
  log "Stage 5: subsets train_dev, train_nodev, train_nodup, train_100kshort, train_30kshort, train_100k_nodup"
  need 5 data/train/text "the training data: run stage 1"
  # The first 4k utterances are the dev set (held out of the LM's training too, which held out
  # the first 10k); train_nodup limits repeated transcripts ("uh-huh") to about 300 each. The
  # monophone trains on 30k of the 100k shortest utterances, which are easier to align; tri1 and
  # tri2 on the first 100k (about half), at most about 200 of one transcript; tri3, tri4 and the
  # DNN on train_nodup.
  n=$(wc -l < data/train/utt2spk)
  if [ $num_dev_utts -ge $n ]; then
    echo "$0: stage 5: --num-dev-utts $num_dev_utts leaves no training data (data/train has $n utterances)" >&2
    exit 1
  fi
  utils/subset_data_dir.sh --first data/train $num_dev_utts data/train_dev
  utils/subset_data_dir.sh --last data/train $((n - num_dev_utts)) data/train_nodev
  utils/data/remove_dup_utts.sh $nodup_max_count data/train_nodev data/train_nodup
  n=$(wc -l < data/train_nodev/utt2spk)
  utils/subset_data_dir.sh --shortest data/train_nodev $(( num_short_utts < n ? num_short_utts : n )) \
    data/train_100kshort
  n=$(wc -l < data/train_100kshort/utt2spk)
  utils/subset_data_dir.sh data/train_100kshort $(( num_mono_utts < n ? num_mono_utts : n )) \
    data/train_30kshort
  n=$(wc -l < data/train_nodev/utt2spk)
  utils/subset_data_dir.sh --first data/train_nodev $(( num_tri_utts < n ? num_tri_utts : n )) \
    data/train_100k
  utils/data/remove_dup_utts.sh $tri_dup_max_count data/train_100k data/train_100k_nodup
fi

# Stages 6-11: the GMM ladder of Kaldi's s5c run.sh, each stage training one system from the
# alignments of the one before (steps/train_*.sh skip a system whose final.mdl exists). With
# --gmm-dir (or --ali-dir + --graph-dir) the DNN uses another system's and these are skipped.
gmm_opts=()
if [ -n "$gmm_config" ]; then gmm_opts=(--config $gmm_config); fi
gmm_stage() {
  # gmm_stage <N> <what>: true when stage N runs and our GMMs are wanted; logs it either way
  [ $stage -le $1 ] && [ $stop_stage -ge $1 ] || return 1
  if ! $own_gmm; then
    log "Stage $1: skipped, the DNN uses $ali_dir and $graph_dir"
    return 1
  fi
  log "Stage $1: $2"
}

if gmm_stage 6 "monophone GMM (exp/mono) on train_30kshort, alignment of train_100k_nodup"; then
  for f in data/train_30kshort/feats.scp data/train_100k_nodup/feats.scp; do
    need 6 $f "features and subsets: run stages 4 and 5"
  done
  steps/train_mono.sh --nj $nj --cmd "$train_cmd" "${gmm_opts[@]}" data/train_30kshort \
    data/lang_nosp exp/mono
  steps/align_si.sh --nj $nj --cmd "$train_cmd" data/train_100k_nodup data/lang_nosp exp/mono \
    exp/mono_ali
fi

if gmm_stage 7 "tri1, triphones on deltas ($tri1_leaves leaves, $tri1_gauss Gaussians) on train_100k_nodup"; then
  need 7 exp/mono_ali/ali.1.gz "the monophone alignments: run stage 6"
  steps/train_deltas.sh --cmd "$train_cmd" "${gmm_opts[@]}" $tri1_leaves $tri1_gauss \
    data/train_100k_nodup data/lang_nosp exp/mono_ali exp/tri1
  steps/align_si.sh --nj $nj --cmd "$train_cmd" data/train_100k_nodup data/lang_nosp exp/tri1 \
    exp/tri1_ali
fi

if gmm_stage 8 "tri2, deltas again ($tri2_leaves leaves, $tri2_gauss Gaussians) on train_100k_nodup, alignment of train_nodup"; then
  need 8 exp/tri1_ali/ali.1.gz "tri1's alignments: run stage 7"
  need 8 data/train_nodup/feats.scp "the train_nodup subset: run stage 5"
  steps/train_deltas.sh --cmd "$train_cmd" "${gmm_opts[@]}" $tri2_leaves $tri2_gauss \
    data/train_100k_nodup data/lang_nosp exp/tri1_ali exp/tri2
  # from here on all of the data (less most repeats of "uh-huh")
  steps/align_si.sh --nj $nj --cmd "$train_cmd" data/train_nodup data/lang_nosp exp/tri2 \
    exp/tri2_ali_nodup
fi

if gmm_stage 9 "tri3, LDA+MLLT ($tri3_leaves leaves, $tri3_gauss Gaussians) on train_nodup, fMLLR alignment"; then
  need 9 exp/tri2_ali_nodup/ali.1.gz "tri2's alignments of train_nodup: run stage 8"
  # Kaldi's train_lda_mllt.sh defaults (splice +/-3, 40 dimensions, MLLT at passes 2 4 6 12).
  # Kaldi's s5c re-estimates pronunciation and silence probabilities from tri3 into data/lang;
  # here tri3 and tri4 keep data/lang_nosp.
  steps/train_lda_mllt.sh --cmd "$train_cmd" "${gmm_opts[@]}" $tri3_leaves $tri3_gauss \
    data/train_nodup data/lang_nosp exp/tri2_ali_nodup exp/tri3
  steps/align_fmllr.sh --nj $nj --cmd "$train_cmd" data/train_nodup data/lang_nosp exp/tri3 \
    exp/tri3_ali_nodup
fi

if gmm_stage 10 "tri4, speaker-adaptive training ($tri4_leaves leaves, $tri4_gauss Gaussians) on train_nodup, fMLLR alignment (the DNN's targets)"; then
  need 10 exp/tri3_ali_nodup/ali.1.gz "tri3's alignments of train_nodup: run stage 9"
  steps/train_sat.sh --cmd "$train_cmd" "${gmm_opts[@]}" $tri4_leaves $tri4_gauss \
    data/train_nodup data/lang_nosp exp/tri3_ali_nodup exp/tri4
  steps/align_fmllr.sh --nj $nj --cmd "$train_cmd" data/train_nodup data/lang_nosp exp/tri4 \
    $ali_dir
fi

if gmm_stage 11 "GMM graphs with the sw1 trigram, eval2000 decoding of ${gmm_decode:-none} and hub5 scoring"; then
  need 11 data/lang_nosp_sw1_tg/G.fst "the LM: run stage 3"
  need 11 data/eval2000/feats.scp "eval2000 features: run stage 4"
  # tri4's graph is the DNN's (stage 14) whether or not tri4 is decoded here; tri4 decodes in
  # Kaldi's three passes (decode_fmllr.sh: speaker-independent, fMLLR from its lattices, adapted).
  for sys in $(echo tri4 $gmm_decode | tr ' ' '\n' | awk '!seen[$0]++'); do
    need 11 exp/$sys/final.mdl "$sys: run stages 6-10"
    utils/mkgraph.sh data/lang_nosp_sw1_tg exp/$sys exp/$sys/graph_nosp_sw1_tg
  done
  for sys in $gmm_decode; do
    decode=steps/decode.sh
    [ $sys == tri4 ] && decode=steps/decode_fmllr.sh
    $decode --nj $nj --cmd "$decode_cmd" ${scoring_opts:+--scoring-opts "$scoring_opts"} \
      exp/$sys/graph_nosp_sw1_tg data/eval2000 exp/$sys/decode_eval2000_nosp_sw1_tg
    for x in "" score_swbd/ score_callhm/; do
      d=exp/$sys/decode_eval2000_nosp_sw1_tg/$x
      if ls ${d}wer_* > /dev/null 2>&1; then grep -H WER ${d}wer_* | utils/best_wer.sh; fi
    done
  done
fi

# exp/dnn6x2048_rbm_w8; relu: exp/dnn7x2048_relu_w8; lstm/blstm: exp/blstm5x256_w8
dnn_pre=exp/dnn${dnn_hid_layers}x${dnn_hid_dim}_pretrain
dnn_init=$($use_rbm && echo rbm || echo rand)
[ $dnn_activation == relu ] && dnn_init=relu
dnn_dir=exp/dnn${dnn_hid_layers}x${dnn_hid_dim}_${dnn_init}_w${dnn_num_workers}${dnn_tag:+_$dnn_tag}
[ $dnn_type == dnn ] || dnn_dir=exp/${dnn_type}${rnn_layers}x${rnn_cell_dim}_w${dnn_num_workers}${dnn_tag:+_$dnn_tag}

if [ $stage -le 12 ] && [ $stop_stage -ge 12 ]; then
  if $use_rbm; then
    log "Stage 12: RBM pretraining, $dnn_hid_layers x $dnn_hid_dim ($dnn_pre)"
  else
    log "Stage 12: fbank train_nodup only; no RBM pretraining (--pretrain $pretrain --dnn-type $dnn_type --dnn-activation $dnn_activation), stage 13 initialises randomly"
  fi
  need 12 data/fbank/train/feats.scp "fbank features: run stage 4"
  need 12 data/train_nodup/utt2spk "the train_nodup subset: run stage 5"
  # the fbank copy of train_nodup: the same utterances as data/train_nodup
  utils/subset_data_dir.sh --utt-list data/train_nodup/utt2spk data/fbank/train data/fbank/train_nodup
  if $use_rbm; then
    # Kaldi's swbd recipe: one pass per RBM (the Gaussian-Bernoulli first layer does two).
    steps/nnet/pretrain_dbn.sh --cmd "$cuda_cmd" --nn-depth $dnn_hid_layers --hid-dim $dnn_hid_dim \
      --rbm-iter 1 --num-workers $rbm_num_workers --average-every $dnn_average_every \
      --backend $dnn_backend --cmvn-opts "--norm-means=true --norm-vars=false" \
      data/fbank/train_nodup $dnn_pre
  fi
fi

if [ $stage -le 13 ] && [ $stop_stage -ge 13 ]; then
  if [ $dnn_type == dnn ]; then
    log "Stage 13: DNN training, $dnn_num_workers MPI workers, minibatch $dnn_minibatch_size, $dnn_optimizer ($dnn_dir)"
  else
    log "Stage 13: $dnn_type training, $dnn_num_workers MPI workers, $(rnn_proto_opts), $rnn_train_opts ($dnn_dir)"
  fi
  need 13 data/fbank/train_nodup/feats.scp "run stage 12"
  need 13 $ali_dir/final.mdl "alignments of train_nodup: run stages 6-10 or give --gmm-dir/--ali-dir"
  need 13 $ali_dir/ali.1.gz "alignments of train_nodup: run stages 6-10 or give --gmm-dir/--ali-dir"
  # 10% of the speakers held out for Newbob; every dnn_average_every minibatches the ranks'
  # models are averaged (learning rate x N for model averaging, seed 001 section 5.6).
  [ -f data/fbank/train_nodup_cv10/feats.scp ] || utils/subset_data_dir_tr_cv.sh \
    data/fbank/train_nodup data/fbank/train_nodup_tr90 data/fbank/train_nodup_cv10
  if [ $dnn_type != dnn ]; then
    # seed 002's DBLSTM (or an LSTM): unspliced features, SGD with momentum 0.9 (train.sh runs
    # nnet-train-mpi.py --stream-mode perutt for blstm, multistream for lstm, with the
    # --rnn-train-opts), mixed every dnn_average_every steps
    steps/nnet/train.sh --cmd "$cuda_cmd" --network-type $dnn_type --proto-opts "$(rnn_proto_opts)" \
      --num-workers $dnn_num_workers --average-every $dnn_average_every \
      --learn-rate $rnn_learn_rate --momentum 0.9 --optimizer sgd --scheduler newbob \
      ${rnn_train_opts:+--train-tool-opts "$rnn_train_opts"} --backend $dnn_backend $dnn_opts \
      data/fbank/train_nodup_tr90 data/fbank/train_nodup_cv10 data/lang_nosp $ali_dir $ali_dir $dnn_dir
  else
    dbn_opts=(--hid-layers $dnn_hid_layers)
    if $use_rbm; then
      need 13 $dnn_pre/final.dbn "the pretrained DBN: run stage 12 (or give --pretrain false)"
      dbn_opts=(--dbn $dnn_pre/final.dbn --hid-layers 0 --feature-transform $dnn_pre/final.feature_transform)
    fi
    act_opts=()
    [ $dnn_activation == relu ] && act_opts=(--proto-opts "$(relu_proto_opts)")
    steps/nnet/train.sh --cmd "$cuda_cmd" --num-workers $dnn_num_workers \
      --average-every $dnn_average_every --minibatch-size $dnn_minibatch_size \
      --learn-rate $dnn_learn_rate --optimizer $dnn_optimizer --scheduler newbob \
      --hid-dim $dnn_hid_dim --backend $dnn_backend "${dbn_opts[@]}" "${act_opts[@]}" $dnn_opts \
      data/fbank/train_nodup_tr90 data/fbank/train_nodup_cv10 data/lang_nosp $ali_dir $ali_dir $dnn_dir
  fi
fi

if [ $stage -le 14 ] && [ $stop_stage -ge 14 ]; then
  log "Stage 14: DNN decoding of eval2000 with $graph_dir, hub5 scoring of the swbd and callhome parts"
  need 14 $graph_dir/HCLG.fst "the decoding graph: run stage 11 or give --gmm-dir/--graph-dir"
  need 14 $dnn_dir/final.nnet "the DNN: run stage 13"
  need 14 data/fbank/eval2000/feats.scp "eval2000 features: run stage 4"
  decode=$dnn_dir/decode_eval2000_$(basename $graph_dir | sed 's/^graph_//')
  # local/score.sh sees data/fbank/eval2000/stm and scores with local/score_eval2000.sh.
  decode_opts=
  [ $dnn_type == dnn ] || decode_opts=$rnn_decode_opts   # recurrent: in chunks, as trained
  steps/nnet/decode.sh --nj $nj --cmd "$decode_cmd" --acwt $decode_acwt --backend $dnn_backend \
    ${scoring_opts:+--scoring-opts "$scoring_opts"} $decode_opts $graph_dir data/fbank/eval2000 $decode
  for x in "" score_swbd/ score_callhm/; do   # all of eval2000, its Switchboard and CallHome parts
    if ls $decode/${x}wer_* > /dev/null 2>&1; then grep -H WER $decode/${x}wer_* | utils/best_wer.sh; fi
  done
fi

log "Done: stages $stage to $(( stop_stage < 14 ? stop_stage : 14 ))"
