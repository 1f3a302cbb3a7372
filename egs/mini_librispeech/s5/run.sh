#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Kaldi's egs/mini_librispeech/s5: Mini LibriSpeech (OpenSLR resource 31, CC BY 4.0: train-clean-5,
# about 5 hours of read audiobooks, 1519 utterances; dev-clean-2, 1089 utterances, 20,138 words),
# the LibriSpeech lexicon and ARPA language models (OpenSLR resource 11), with Kaldi's stages and
# names (lang_nosp, tri2b, tri3b, decode_nosp_tgsmall_dev_clean_2): data preparation from
# LibriSpeech's layout, MFCC, monophone, tri1 (deltas), tri2b (LDA+MLLT), tri3b (SAT), then, as
# egs/harbour/s5, a DNN on tri3b's fMLLR features trained over MPI with BMUF, its decoding and
# RESULTS.md.
#
#   ./run.sh                                    # download into corpus/ (skipped where there), every stage
#   ./run.sh --corpus-dir /data/mini_librispeech    # a local copy: LibriSpeech/{train-clean-5,dev-clean-2}/,
#                                               # librispeech-lexicon.txt, 3-gram.pruned.3e-7.arpa.gz
#   ./run.sh --lms "tgsmall tgmed"              # also decode with Kaldi's tgmed LM (its own graph)
#   ./run.sh --stage 3 --stop-stage 4           # the monophone only
#   ./run.sh --stage 10 --dnn-num-workers 4     # the DNN over 4 MPI ranks (BMUF)
#
# Stages: 0 download (local/download_corpus.py: each part's archive, MD5- and size-checked, then
# unpacked; librispeech-lexicon.txt and the LMs of --lms; anything there is skipped) and Kaldi's
# links in data/local/lm, 1 data/train_clean_5 and data/dev_clean_2 (local/data_prep.py: the whole
# corpus checked first, nothing written on bad input), data/local/dict_nosp (local/prepare_dict.py,
# the downloaded lexicon), data/lang_nosp, one data/lang_nosp_test_<lm> per --lms (G.fst from the
# downloaded ARPA, utils/format_lm.sh), 2 MFCC (conf/mfcc.conf) + CMVN, 3 monophone on the
# --mono-subset shortest utterances and alignment of all, 4 monophone graphs and decoding,
# 5 tri1 + alignment, 6 tri2b + alignment (with its graphs), 7 tri3b + fMLLR alignment, 8 tri1,
# tri2b, tri3b graphs and decoding (tri3b: decode_fmllr.sh), 9 fMLLR features (data-fmllr-tri3b/,
# steps/nnet/make_fmllr_feats.sh: training speakers' transforms from the alignment, test speakers'
# from tri3b's decoding), 10 DNN training (steps/nnet/train.sh, --dnn-num-workers MPI ranks, BMUF
# with --dnn-bmuf true), 11 DNN decoding with tri3b's graphs, 12 RESULTS.md (local/make_results.py).
#
# Kaldi's recipe rescores its tgsmall lattices with tgmed (steps/lmrescore.sh) and tglarge
# (steps/lmrescore_const_arpa.sh); nnetmix has neither, so each LM of --lms decodes with its own
# graph (tglarge, 759 MB of ARPA, is too big for that), and Kaldi's tglarge figures in RESULTS.md
# have no counterpart here. Kaldi's later stages (pronunciation and silence probabilities, chain
# TDNN) are not run. Sizes: the defaults are Kaldi's (mono on the 500 shortest utterances, tri1
# 2000 leaves / 10000 Gaussians, tri2b and tri3b 2500 / 15000, --boost-silence 1.25); the tests run
# the recipe on a small stand-in corpus with smaller ones.
#
# Everything is written under data/, exp/, mfcc/, data-fmllr-tri3b/ and the corpus directory:
# deleting them and running again starts from scratch; each stage skips what is already done.

. utils/recipe_signals.sh   # a signal to run.sh ends its whole process tree

# Begin configuration section.
stage=0                # first stage to run
stop_stage=100         # last stage to run
nj=2                   # parallel jobs (features, GMM training and alignment, decoding)
corpus_dir=corpus      # holds LibriSpeech/<part>/ and OpenSLR 11's files; stage 0 downloads what is missing
base_url=https://www.openslr.org/resources   # where stage 0 downloads from (a mirror: its resources/ URL)
train_set=train-clean-5   # the training part
test_sets=dev-clean-2  # the parts decoded
lms=tgsmall            # LMs decoded with, Kaldi's names: tgsmall, tgmed (OpenSLR 11's pruned 3-grams)
boost_silence=1.25     # silence likelihood boost: monophone training and alignment, tri1 training (Kaldi's)
mono_subset=500        # the monophone trains on the N shortest utterances (Kaldi's 500; 0: all)
mono_gauss=1000        # Gaussians of the monophone (train_mono.sh --totgauss)
tri1_leaves=2000       # tree leaves of tri1 (Kaldi's)
tri1_gauss=10000       # Gaussians of tri1
tri2_leaves=2500       # tree leaves of tri2b (LDA+MLLT)
tri2_gauss=15000       # Gaussians of tri2b
tri3_leaves=2500       # tree leaves of tri3b (SAT)
tri3_gauss=15000       # Gaussians of tri3b
gmm_iters=             # training passes of mono, tri1, tri2b and tri3b (--num-iters; empty: the steps' own, Kaldi's 40 and 35)
beam=11.0              # decoding beam, GMM and DNN (Kaldi's 13: slower here, see egs/harbour/s5)
lattice_beam=5.0       # lattice beam (Kaldi's 8)
max_active=7000        # most active states per frame
scoring_opts=          # local/score.sh's options of every decode, e.g. "--min-lmwt 8 --max-lmwt 12" (empty: the decode scripts')
dnn_hid_layers=4       # DNN hidden layers
dnn_hid_dim=1024       # DNN neurons per hidden layer
dnn_max_epochs=20      # most DNN epochs (Newbob stops earlier when the CV loss stops improving)
dnn_num_workers=2      # MPI ranks for DNN training (1: the single-worker nnet-train-frmshuff.py)
dnn_bmuf=true          # blockwise model-update filtering over the ranks (false: model averaging)
dnn_average_every=10   # minibatches between model mixes (BMUF: the block size)
dnn_opts=              # more steps/nnet/train.sh options
results=RESULTS.md     # stage 12 writes this (local/make_results.py --out)
# End configuration section.

. utils/recipe_options.sh   # --help: this header and the options above

command_line="$0 $*"
. ./cmd.sh
. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

. utils/recipe_functions.sh   # log, need

stage_done() {
  # stage_done <N> <start-seconds>: the stage's wall time and load average in exp/stage_seconds/N
  mkdir -p exp/stage_seconds
  echo "$(( SECONDS - $2 )) $(cut -d' ' -f1-3 /proc/loadavg)" > exp/stage_seconds/$1
}

mkdir -p exp
commit=$(git -C "$NNETMIX_ROOT" rev-parse --short HEAD 2>/dev/null) || commit=unknown
echo "$(date '+%Y-%m-%d %H:%M:%S') [$commit] $command_line" >> exp/commands

train=data/$(echo $train_set | tr - _)
tests=$(for x in $test_sets; do echo -n "data/$(echo $x | tr - _) "; done)
iters_opt=${gmm_iters:+--num-iters $gmm_iters}   # none: the steps' own passes
fmllr_lm=${lms%% *}   # the test speakers' fMLLR transforms come from tri3b's decoding with this LM
dnn_dir=exp/dnn_fmllr_w${dnn_num_workers}   # _bmuf: BMUF over the ranks (one rank has no mixing)
if [ $dnn_num_workers -gt 1 ] && $dnn_bmuf; then dnn_dir=${dnn_dir}_bmuf; fi

if [ $stage -le 0 ] && [ $stop_stage -ge 0 ]; then
  log "Stage 0: the corpus, lexicon and LMs ($lms) in $corpus_dir; links in data/local/lm"
  t0=$SECONDS
  local/download_corpus.py --prog local/download_corpus.py --parts "$train_set $test_sets" \
    --lms "$lms" --base-url $base_url --lm-dir data/local/lm $corpus_dir
  stage_done 0 $t0
fi

if [ $stage -le 1 ] && [ $stop_stage -ge 1 ]; then
  log "Stage 1: data directories ($train $tests), data/local/dict_nosp, data/lang_nosp, G of $lms"
  t0=$SECONDS
  # Every part checked whole (layout, transcripts, each FLAC decoded) before any is written.
  local/data_prep.py --prog local/data_prep.py $corpus_dir data $train_set $test_sets
  for x in $train $tests; do
    utils/validate_data_dir.sh --no-feats $x
  done
  need 1 data/local/lm/librispeech-lexicon.txt "the lexicon: run stage 0"
  local/prepare_dict.py --prog local/prepare_dict.py data/local/lm/librispeech-lexicon.txt \
    data/local/dict_nosp
  utils/prepare_lang.sh data/local/dict_nosp "<UNK>" data/local/lang_tmp_nosp data/lang_nosp
  # Kaldi's local/format_lms.sh: each ARPA LM to G.fst in a copy of data/lang_nosp.
  for lm in $lms; do
    need 1 data/local/lm/lm_$lm.arpa.gz "the LM: run stage 0 with --lms \"$lms\""
    utils/format_lm.sh data/lang_nosp data/local/lm/lm_$lm.arpa.gz \
      data/local/dict_nosp/lexicon.txt data/lang_nosp_test_$lm
  done
  stage_done 1 $t0
fi

if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
  log "Stage 2: MFCC (conf/mfcc.conf) and per-speaker CMVN statistics"
  t0=$SECONDS
  for x in $train $tests; do
    need 2 $x/wav.scp "the data directories: run stage 1"
    steps/make_mfcc.sh --nj $nj --cmd "$train_cmd" $x exp/make_mfcc/${x#data/} mfcc
    steps/compute_cmvn_stats.sh $x exp/make_mfcc/${x#data/} mfcc
    utils/validate_data_dir.sh $x
  done
  stage_done 2 $t0
fi

if [ $stage -le 3 ] && [ $stop_stage -ge 3 ]; then
  log "Stage 3: monophone ($mono_gauss Gaussians, the $mono_subset shortest utterances) and alignment of $train"
  t0=$SECONDS
  need 3 $train/feats.scp "features: run stage 2"
  # Kaldi: the shortest utterances first, as they are more likely to align well from a flat start.
  mono_data=$train
  if [ $mono_subset -gt 0 ] && [ $mono_subset -lt $(wc -l < $train/utt2spk) ]; then
    mono_data=data/train_${mono_subset}short
    [ -f $mono_data/feats.scp ] && [ $mono_data/feats.scp -nt $train/feats.scp ] || \
      { rm -rf $mono_data; utils/subset_data_dir.sh --shortest $train $mono_subset $mono_data; }
  fi
  steps/train_mono.sh --boost-silence $boost_silence --nj $nj --cmd "$train_cmd" $iters_opt \
    --totgauss $mono_gauss $mono_data data/lang_nosp exp/mono
  steps/align_si.sh --boost-silence $boost_silence --nj $nj --cmd "$train_cmd" \
    $train data/lang_nosp exp/mono exp/mono_ali_${train#data/}
  stage_done 3 $t0
fi

decode_all() {
  # decode_all <system> <decode script>: graphs of each LM, decoding of each test set, best WER
  local sys=$1 decode=$2 lm x
  for lm in $lms; do
    need "$stage" data/lang_nosp_test_$lm/G.fst "the LMs: run stage 1"
    need "$stage" exp/$sys/final.mdl "$sys: run its training stage"
    utils/mkgraph.sh data/lang_nosp_test_$lm exp/$sys exp/$sys/graph_nosp_$lm
    for x in $tests; do
      $decode --nj $nj --cmd "$decode_cmd" --beam $beam --lattice-beam $lattice_beam \
        --max-active $max_active ${scoring_opts:+--scoring-opts "$scoring_opts"} \
        exp/$sys/graph_nosp_$lm $x exp/$sys/decode_nosp_${lm}_${x#data/}
      grep -H WER exp/$sys/decode_nosp_${lm}_${x#data/}/wer_* | utils/best_wer.sh
    done
  done
}

if [ $stage -le 4 ] && [ $stop_stage -ge 4 ]; then
  log "Stage 4: monophone graphs ($lms), decoding of $tests and WER scoring"
  t0=$SECONDS
  decode_all mono steps/decode.sh
  stage_done 4 $t0
fi

if [ $stage -le 5 ] && [ $stop_stage -ge 5 ]; then
  log "Stage 5: tri1, deltas ($tri1_leaves leaves, $tri1_gauss Gaussians) and alignment"
  t0=$SECONDS
  need 5 exp/mono_ali_${train#data/}/ali.1.gz "the monophone alignments: run stage 3"
  steps/train_deltas.sh --boost-silence $boost_silence --cmd "$train_cmd" $iters_opt $tri1_leaves $tri1_gauss \
    $train data/lang_nosp exp/mono_ali_${train#data/} exp/tri1
  steps/align_si.sh --nj $nj --cmd "$train_cmd" $train data/lang_nosp exp/tri1 exp/tri1_ali_${train#data/}
  stage_done 5 $t0
fi

if [ $stage -le 6 ] && [ $stop_stage -ge 6 ]; then
  log "Stage 6: tri2b, LDA+MLLT ($tri2_leaves leaves, $tri2_gauss Gaussians) and alignment"
  t0=$SECONDS
  need 6 exp/tri1_ali_${train#data/}/ali.1.gz "tri1's alignments: run stage 5"
  steps/train_lda_mllt.sh --cmd "$train_cmd" $iters_opt --splice-opts "--left-context=3 --right-context=3" \
    $tri2_leaves $tri2_gauss $train data/lang_nosp exp/tri1_ali_${train#data/} exp/tri2b
  # as Kaldi, with tri2b's own training graphs (fsts.JOB.gz, split as tri1's alignments)
  steps/align_si.sh --nj $(cat exp/tri2b/num_jobs) --cmd "$train_cmd" --use-graphs true \
    $train data/lang_nosp exp/tri2b exp/tri2b_ali_${train#data/}
  stage_done 6 $t0
fi

if [ $stage -le 7 ] && [ $stop_stage -ge 7 ]; then
  log "Stage 7: tri3b, speaker-adaptive training ($tri3_leaves leaves, $tri3_gauss Gaussians) and fMLLR alignment"
  t0=$SECONDS
  need 7 exp/tri2b_ali_${train#data/}/ali.1.gz "tri2b's alignments: run stage 6"
  steps/train_sat.sh --cmd "$train_cmd" $iters_opt $tri3_leaves $tri3_gauss $train data/lang_nosp \
    exp/tri2b_ali_${train#data/} exp/tri3b
  steps/align_fmllr.sh --nj $nj --cmd "$train_cmd" $train data/lang_nosp exp/tri3b exp/tri3b_ali_${train#data/}
  stage_done 7 $t0
fi

if [ $stage -le 8 ] && [ $stop_stage -ge 8 ]; then
  log "Stage 8: tri1, tri2b, tri3b graphs ($lms), decoding of $tests and WER scoring"
  t0=$SECONDS
  # tri3b as Kaldi's decode_fmllr.sh: the speaker-independent pass (decode_*.si), fMLLR from its
  # lattices, the adapted pass, a second fMLLR; the transforms in decode_*/trans.*
  decode_all tri1 steps/decode.sh
  decode_all tri2b steps/decode.sh
  decode_all tri3b steps/decode_fmllr.sh
  stage_done 8 $t0
fi

fmllr=data-fmllr-tri3b
if [ $stage -le 9 ] && [ $stop_stage -ge 9 ]; then
  log "Stage 9: fMLLR features of $train $tests ($fmllr/)"
  t0=$SECONDS
  for x in $train $tests; do
    tdir=exp/tri3b_ali_${train#data/}
    [ $x == $train ] || tdir=exp/tri3b/decode_nosp_${fmllr_lm}_${x#data/}
    need 9 $tdir/trans.1 "tri3b's transforms: run stages 7-8"
    out=$fmllr/${x#data/}
    if [ ! -f $out/feats.scp ] || [ $out/feats.scp -ot $tdir/trans.1 ]; then
      rm -rf $out
      steps/nnet/make_fmllr_feats.sh --nj $nj --cmd "$train_cmd" --transform-dir $tdir \
        $out $x exp/tri3b $out/log $out/data
      steps/compute_cmvn_stats.sh $out $out/log $out/data
    fi
  done
  stage_done 9 $t0
fi

if [ $stage -le 10 ] && [ $stop_stage -ge 10 ]; then
  log "Stage 10: DNN on $fmllr/${train#data/} and tri3b's alignments, $dnn_num_workers MPI ranks, BMUF $dnn_bmuf ($dnn_dir)"
  t0=$SECONDS
  tr=$fmllr/${train#data/}
  need 10 $tr/feats.scp "the fMLLR features: run stage 9"
  ali=exp/tri3b_ali_${train#data/}
  # 10% of the training speakers hold out Newbob's CV set; the fMLLR features need no CMVN.
  [ -f ${tr}_cv10/feats.scp ] && [ ${tr}_cv10/feats.scp -nt $tr/feats.scp ] || \
    utils/subset_data_dir_tr_cv.sh $tr ${tr}_tr90 ${tr}_cv10
  steps/nnet/train.sh --cmd "$train_cmd" --num-workers $dnn_num_workers --bmuf $dnn_bmuf \
    --average-every $dnn_average_every --hid-layers $dnn_hid_layers --hid-dim $dnn_hid_dim \
    --learn-rate 0.008 --optimizer ngsgd --max-iters $dnn_max_epochs \
    --cmvn-opts "--norm-means=false --norm-vars=false" $dnn_opts \
    ${tr}_tr90 ${tr}_cv10 data/lang_nosp $ali $ali $dnn_dir
  stage_done 10 $t0
fi

if [ $stage -le 11 ] && [ $stop_stage -ge 11 ]; then
  log "Stage 11: DNN decoding of $tests with tri3b's graphs ($lms) and WER scoring"
  t0=$SECONDS
  need 11 $dnn_dir/final.nnet "the DNN: run stage 10"
  for lm in $lms; do
    need 11 exp/tri3b/graph_nosp_$lm/HCLG.fst "tri3b's graphs: run stage 8"
    for x in $tests; do
      steps/nnet/decode.sh --nj $nj --cmd "$decode_cmd" --acwt 0.1 --prior-cutoff 1 \
        --beam $beam --lattice-beam $lattice_beam --max-active $max_active \
        ${scoring_opts:+--scoring-opts "$scoring_opts"} exp/tri3b/graph_nosp_$lm $fmllr/${x#data/} \
        $dnn_dir/decode_nosp_${lm}_${x#data/}
      grep -H WER $dnn_dir/decode_nosp_${lm}_${x#data/}/wer_* | utils/best_wer.sh
    done
  done
  stage_done 11 $t0
fi

if [ $stage -le 12 ] && [ $stop_stage -ge 12 ]; then
  log "Stage 12: $results from exp/ (local/make_results.py)"
  local/make_results.py --prog local/make_results.py --exp exp --out $results
fi

log "Done: stages $stage to $(( stop_stage < 12 ? stop_stage : 12 ))"
