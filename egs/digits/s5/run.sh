#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# The embedded nnetmix recipe, in Kaldi's order: connected digits (in the manner of TIDIGITS, in
# noise as Aurora 2) synthesised on this machine with espeak-ng + sox, MFCCs, a monophone GMM, a
# triphone GMM (tri1) and its alignments, RBM pretraining and a DNN trained data-parallel over MPI
# on tri1's tree and alignments, then a closing table of every system with its WER, 95% interval
# and significance against the one before. Runs end to end on 2 cores (`make demo`).
#
#   ./run.sh                                  # every stage
#   ./run.sh --stage 2 --stop-stage 2         # one stage
#   ./run.sh --num-train-utts 200 --num-test-utts 50 --num-train-spk 20 --num-test-spk 5 \
#     --corpus /tmp/digits --results exp/RESULTS.md   # a quick run (plumbing: too small to rank)
#   ./run.sh --stage 7                        # the DNN again (after stages 0-6; rm -r exp/dnn_*)
#   local/make_results.py                     # the closing table and RESULTS.md (stage 10)
#
# Stages: 0 corpus (local/synth_digits.py), 1 data/train, data/test, data/lang, data/lang_test
# (bigram G), 2 MFCC + CMVN, 3 monophone GMM and alignments, 4 monophone graph and decoding,
# 5 tri1 (triphones on deltas from the monophone's alignments) and its alignments, 6 tri1 graph
# and decoding, 7 RBM pretraining, 8 DNN training over MPI on tri1's alignments (tri1's tree
# leaves are its targets), 9 DNN decoding with tri1's graph, 10 the run's fingerprint
# (exp/fingerprint.md, first compared with the one in $results) and the closing table, written
# to $results (local/make_results.py). Every decode uses the same bigram G and test set, so the
# WERs compare. Everything is written under data/, exp/, mfcc/ and the corpus directory:
# deleting them and running again starts from scratch. Each stage skips what is already done.
# Stages overlap where they can, as Kaldi's recipes run their decodes with `&`: stages 4 and 6
# decode in the background while the next stages train, stage 7 runs beside stage 5 (it needs
# only the features); stage 8 waits for stage 7, stage 9 for stage 6's graph and stage 10 for
# every one. A background stage that fails ends run.sh at that wait; run.sh ending for any
# reason ends what it left running (utils/recipe_group.py).
#
# Why the task and the sizes are what they are (the numbers are RESULTS.md's, written by the run):
# - OH. On the clean corpus every system made a few dozen errors, most on OH, too few for any test
#   set that decodes in minutes to separate systems. OH is the single vowel ow, which also ends
#   ZERO, and espeak-ng runs repeated OHs into one longer vowel (`espeak-ng -v en-us+m3 -s 160
#   -w x.wav "oh oh"` lasts 0.77 s against 0.64 s for "oh", the two joined by a dip of about 5 dB)
#   and ZERO's ow into a following OH: how many OHs were said is told by duration and that dip
#   alone, which an HMM's self-loops model poorly. Run with --glottal-onset false (noise and
#   sizes as below), OH was still 53 of the monophone's 60 errors and 45 of the DNN's 51, tri1
#   (its tree splits ow by right context, and a second ow leaf fits the tail of one long vowel)
#   inserted OHs, and the DNN, best at 1.26%, did not beat the monophone's 1.49% beyond the
#   interval (MAPSSWE p 0.24; a learning rate of 0.004 ended within two words of it).
# - So --glottal-onset true (the default) puts a glottal stop (espeak-ng's [[?]]) before OH and
#   EIGHT, as careful speakers reading digits make one: the word boundary becomes a dip of
#   10-40 dB. The OH deletions go; every system now hears OH as FOUR now and then (the lexicon
#   has no phone for the glottal stop, so ow's first state takes it: a lexicon that spells it is
#   the next step), and in noise the GMMs also hear NINE as FIVE, where the DNN loses far less
#   (RESULTS.md's 5-10 dB column): the DNN is now the best system beyond the interval.
# - Noise, as Aurora 2 added to TIDIGITS: all but --clean-share of the utterances, training and
#   test alike, get white, pink or brown noise at an SNR drawn from --snr (RESULTS.md's WER by
#   condition: 5-10 dB is where the GMMs lose most).
# - 1000 test utterances of 20 unseen voices (about 4000 words) and 200 training voices of 10
#   utterances each, so that the DNN learns the digits rather than the voices: on 40 voices it
#   overfitted after one epoch; here Newbob accepts nearly every epoch and CV frame accuracy
#   rises throughout (RESULTS.md's epoch table), the training frames ahead of the held-out
#   voices' by the gap unseen voices make.
# - tri1: 300 leaves and 2000 Gaussians, Kaldi's tidigits size (300/3000 on 8623 utterances) for
#   2000 utterances; its alignments and tree give the DNN its targets, as in Kaldi's nnet1
#   recipes. The DNN: 2 x 512 sigmoid units behind +/-5 frames of MFCCs, RBM-pretrained, NG-SGD
#   over 2 MPI ranks averaged every 10 minibatches, Newbob from 0.008 with 10% of the training
#   voices held out.
# - Time: RESULTS.md's timing table has each stage's wall and CPU seconds and the load average at
#   its end; on a shared machine the CPU seconds over 2 cores are what 2 quiet cores would take
#   (under 10 minutes), a quarter of it the DNN's training.
. utils/recipe_signals.sh   # a signal to run.sh ends its whole process tree

# Begin configuration section.
stage=0                # first stage to run
stop_stage=100         # last stage to run
nj=2                   # parallel jobs (synthesis, features, GMM training, decoding)
corpus=corpus          # where the synthesised corpus goes (wavs + lists); any path
seed=777               # random seed of the corpus
num_train_utts=2000    # training utterances to synthesise
num_test_utts=1000     # test utterances to synthesise (speakers unseen in training)
num_train_spk=200      # training speakers (espeak-ng voice + variant pairs)
num_test_spk=20        # test speakers, none of them a training speaker
snr=5:20               # SNR range (dB) of the noisy utterances (white, pink or brown noise)
clean_share=0.2        # share of utterances without noise (1: the clean corpus)
glottal_onset=true     # a glottal stop before the vowel-initial words OH and EIGHT (the header); false: none
mfcc_config=conf/mfcc_dither.conf  # stage 2's MFCC options: Kaldi's --dither=1.0 (the clean parts are digital zeros)
tri1_leaves=300        # tree leaves of tri1 (Kaldi's tidigits: 300 on 8623 utterances)
tri1_gauss=2000        # Gaussians of tri1 (Kaldi's tidigits: 3000; the monophone has 1000)
gmm_iters=             # training passes of mono and tri1 (--num-iters; empty: the steps' own, Kaldi's 40 and 35)
dnn_hid_layers=2       # DNN hidden layers (the seeds use 6 x 2048 on Switchboard)
dnn_hid_dim=512        # DNN neurons per hidden layer
dnn_learn_rate=0.008   # initial learning rate (Newbob halves it once the CV loss stalls)
pretrain=true          # RBM pretraining (stage 7) before DNN training; false: random initialisation
dnn_num_workers=2      # MPI ranks for DNN training (1: the single-worker nnet-train-frmshuff.py)
dnn_average_every=10   # minibatches between model averages (the seeds' averaging frequency)
watchdog_timeout=-1    # MPI jobs: seconds a rank may make no progress before the job ends naming it (0: off; -1: adaptive)
dnn_optimizer=ngsgd    # ngsgd: natural-gradient SGD (seed 001: what makes averaging work); sgd: plain
dnn_prior_cutoff=1     # decoding: pdfs with a count below this (no training frames) are never chosen
decoder=faster         # search: faster (Kaldi's LatticeFasterDecoder) or simple (beam only)
dnn_opts=              # more steps/nnet/train.sh options, e.g. "--bmuf true"
dnn_tag=               # appended to the DNN directory name, to keep variants (dnn_opts) apart
scoring_opts=          # local/score.sh options for every decode, e.g. "--min-lmwt 9 --max-lmwt 11
                       # --word-ins-penalty 0.0" (a quick run); empty: each decode script's own sweep
results=RESULTS.md     # stage 10 writes the closing table here (local/make_results.py --out)
# End configuration section.

command_line="$0 $*"
. ./cmd.sh
. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

. utils/recipe_functions.sh   # log, need

cpu_now() {
  # cpu_now: $cpu, the CPU seconds (user + system) of this shell's finished children and their
  # descendants so far; `times` must run in this shell (a command substitution is a new process)
  local f=exp/.times.$BASHPID   # this (sub)shell's own file: stages run side by side
  times > $f
  cpu=$(tail -n 1 $f | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } printf "%.0f\n", s }')
  rm -f $f
}

stage_start() {
  # stage_start: the wall and CPU clocks stage_done reads
  t0=$SECONDS; cpu_now; c0=$cpu
}

stage_done() {
  # stage_done <N> [<dir>]: the stage's wall seconds, the load averages at its end (the
  # machine may be shared) and its CPU seconds in <dir>/stage_seconds/N (default exp; the DNN
  # stages 8-9 use the DNN's directory), for local/make_results.py
  cpu_now
  mkdir -p ${2:-exp}/stage_seconds
  echo "$(( SECONDS - t0 )) $(cut -d' ' -f1-3 /proc/loadavg) $(( cpu - c0 ))" > ${2:-exp}/stage_seconds/$1
}

# Decoding runs in the background while the next stages train, as Kaldi's recipes decode
# (`( ... ) &`): the graph search and the scoring fill the cores that a model update or a tree
# build leaves idle. Every stage runs in a subshell of its own, so that each one's CPU seconds are
# its own (a background stage ending in the middle of another would otherwise be counted there).
# A background stage's pid is bg_pids[N]; wait_stage <N> waits for it and ends run.sh if it
# failed, wait_stage all waits for every one.
declare -A bg_pids=()
wait_stage() {
  local n
  for n in $([ $1 == all ] && echo "${!bg_pids[@]}" || echo $1); do
    [ -n "${bg_pids[$n]:-}" ] || continue
    wait ${bg_pids[$n]} || { log "Stage $n (in the background) failed: its output is above"; exit 1; }
    unset "bg_pids[$n]"
  done
}

# exp/commands: every invocation's date, commit and command line (local/make_results.py names
# the latest in RESULTS.md).
mkdir -p exp
commit=$(git -C "$NNETMIX_ROOT" rev-parse --short HEAD 2>/dev/null) || commit=unknown
git -C "$NNETMIX_ROOT" diff --quiet HEAD 2>/dev/null || commit="$commit+changes"
echo "$(date '+%Y-%m-%d %H:%M:%S') [$commit] $command_line" >> exp/commands

if [ $stage -le 0 ] && [ $stop_stage -ge 0 ]; then
  log "Stage 0: synthesise the digits corpus into $corpus ($num_train_utts train, $num_test_utts test utterances)"
  (
  stage_start
  local/prepare_digits.sh --synth-only true --cmd "$train_cmd" --nj $nj --seed $seed \
    --num-train $num_train_utts --num-test $num_test_utts --num-train-spk $num_train_spk \
    --num-test-spk $num_test_spk --snr $snr --clean-share $clean_share --glottal-onset $glottal_onset $corpus data
  stage_done 0
  )
fi

if [ $stage -le 1 ] && [ $stop_stage -ge 1 ]; then
  log "Stage 1: data preparation: data/train, data/test, data/local/dict, data/lang, data/lang_test"
  (
  stage_start
  local/prepare_digits.sh --cmd "$train_cmd" --nj $nj --seed $seed \
    --num-train $num_train_utts --num-test $num_test_utts --num-train-spk $num_train_spk \
    --num-test-spk $num_test_spk --snr $snr --clean-share $clean_share --glottal-onset $glottal_onset $corpus data
  for x in train test; do
    utils/validate_data_dir.sh --no-feats data/$x
  done
  # data/lang from data/local/dict (position-dependent phones, optional silence 0.5); a
  # Kneser-Ney bigram of the training transcripts becomes G.fst in data/lang_test.
  utils/prepare_lang.sh data/local/dict "<UNK>" data/local/lang data/lang
  local/prepare_lm.sh data/train/text data/lang data/local/lm data/lang_test
  stage_done 1
  )
fi

if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
  log "Stage 2: MFCC features and per-speaker CMVN statistics"
  (
  stage_start
  for x in train test; do
    steps/make_mfcc.sh --nj $nj --cmd "$train_cmd" --mfcc-config $mfcc_config \
      data/$x exp/make_mfcc/$x mfcc
    steps/compute_cmvn_stats.sh data/$x exp/make_mfcc/$x mfcc
    utils/validate_data_dir.sh data/$x
  done
  stage_done 2
  )
fi

if [ $stage -le 3 ] && [ $stop_stage -ge 3 ]; then
  log "Stage 3: monophone GMM-HMM (steps/train_mono.sh) and alignment of data/train (steps/align_si.sh)"
  # Kaldi's train_mono.sh schedule: flat start from equal alignments, 40 passes, realignment at
  # passes 1-10, 12, 14, ..., mixing up to 1000 Gaussians in all. Its alignments start tri1.
  (
  stage_start
  steps/train_mono.sh --nj $nj --cmd "$train_cmd" ${gmm_iters:+--num-iters $gmm_iters} \
    data/train data/lang exp/mono
  steps/align_si.sh --nj $nj --cmd "$train_cmd" data/train data/lang exp/mono exp/mono_ali
  stage_done 3
  )
fi

if [ $stage -le 4 ] && [ $stop_stage -ge 4 ]; then
  log "Stage 4: monophone graph, decoding of data/test and WER scoring (in the background)"
  # HCLG from data/lang_test (the bigram G); lattices with Kaldi's decode.sh defaults (acwt
  # 0.083333, beam 13, lattice beam 8); local/score.sh sweeps LM weight and insertion penalty.
  (
  stage_start
  utils/mkgraph.sh data/lang_test exp/mono exp/mono/graph
  steps/decode.sh --nj $nj --cmd "$decode_cmd" --decoder $decoder ${scoring_opts:+--scoring-opts "$scoring_opts"} exp/mono/graph data/test exp/mono/decode_test
  grep -H WER exp/mono/decode_test/wer_* | utils/best_wer.sh
  stage_done 4
  ) &
  bg_pids[4]=$!
fi

stage_7() {
  # RBM pretraining: a DBN of dnn_hid_layers x dnn_hid_dim RBMs (seed 001 section 5.3, Table 2:
  # RBM initialisation matters more under model averaging); stage 8 puts a softmax on top
  # (train.sh --dbn --hid-layers 0) and reuses its feature transform and cmvn_opts.
  # --pretrain false skips it: stage 8 then initialises randomly. It needs stage 2's features
  # only, so a run of stages 5 to 7 starts it in the background beside stage 5 (one process, on
  # the core that tri1's passes leave idle), and stage 8 waits for it.
  # stage_7 [<how>]: <how> says where it runs, for the log line
  log "Stage 7: RBM pretraining (exp/dnn_pretrain)${1:+, $1}"
  need 7 data/train/feats.scp "run stage 2"
  (
  stage_start
  steps/nnet/pretrain_dbn.sh --cmd "$train_cmd" --nn-depth $dnn_hid_layers --hid-dim $dnn_hid_dim \
    --watchdog-timeout $watchdog_timeout \
    --cmvn-opts "--norm-means=true --norm-vars=false" data/train exp/dnn_pretrain
  stage_done 7
  )
}

if [ $stage -le 5 ] && [ $stop_stage -ge 5 ]; then
  log "Stage 5: tri1, triphones on deltas (steps/train_deltas.sh, $tri1_leaves leaves, $tri1_gauss Gaussians), and its alignments"
  # Kaldi's tri1 schedule: a tree from the monophone alignments (context width 3, questions from
  # phone clustering plus extra_questions.txt), 35 passes, realignment at 10, 20, 30. Its
  # alignments of data/train (exp/tri1_ali) are the DNN's frame targets, its leaves the DNN's
  # outputs (stage 8).
  need 5 exp/mono_ali/ali.1.gz "run stage 3"
  if $pretrain && [ $stop_stage -ge 7 ]; then
    stage_7 "in the background beside stage 5" &
    bg_pids[7]=$!
  fi
  (
  stage_start
  steps/train_deltas.sh --cmd "$train_cmd" ${gmm_iters:+--num-iters $gmm_iters} \
    $tri1_leaves $tri1_gauss data/train data/lang exp/mono_ali exp/tri1
  steps/align_si.sh --nj $nj --cmd "$train_cmd" data/train data/lang exp/tri1 exp/tri1_ali
  stage_done 5
  )
fi

if [ $stage -le 6 ] && [ $stop_stage -ge 6 ]; then
  log "Stage 6: tri1 graph, decoding of data/test and WER scoring (in the background)"
  need 6 exp/tri1/final.mdl "run stage 5"
  (
  stage_start
  utils/mkgraph.sh data/lang_test exp/tri1 exp/tri1/graph
  steps/decode.sh --nj $nj --cmd "$decode_cmd" --decoder $decoder ${scoring_opts:+--scoring-opts "$scoring_opts"} exp/tri1/graph data/test exp/tri1/decode_test
  grep -H WER exp/tri1/decode_test/wer_* | utils/best_wer.sh
  stage_done 6
  ) &
  bg_pids[6]=$!
fi

if [ $stage -le 7 ] && [ $stop_stage -ge 7 ]; then
  if ! $pretrain; then
    log "Stage 7: skipped (--pretrain false); stage 8 initialises randomly"
  elif [ -n "${bg_pids[7]:-}" ]; then
    log "Stage 7: RBM pretraining runs in the background since stage 5 started"
  else
    stage_7
  fi
fi

# The DNN's directory names its initialisation, number of workers and (when not the default
# ngsgd) optimizer, so runs with other settings (--pretrain false, --dnn-num-workers 4,
# --dnn-optimizer sgd, --dnn-tag) sit beside each other.
dnn_dir=exp/dnn_$($pretrain && echo rbm || echo rand)_w${dnn_num_workers}
[ $dnn_optimizer == ngsgd ] || dnn_dir=${dnn_dir}_$dnn_optimizer
dnn_dir=${dnn_dir}${dnn_tag:+_$dnn_tag}

if [ $stage -le 8 ] && [ $stop_stage -ge 8 ]; then
  log "Stage 8: DNN training on tri1's alignments, $dnn_num_workers MPI worker(s) ($dnn_dir)"
  # 10% of the training speakers are held out for Newbob's learning-rate schedule. With N > 1
  # workers each epoch runs bin/nnet-train-mpi.py under mpiexec (utils/run.py --num-tasks N):
  # every rank trains on its own shard and the models are averaged every dnn_average_every
  # minibatches (learning rate x N, seed 001 section 5.6); see docs/parallel.md for the options.
  # Every affine layer's update is natural-gradient SGD (Kaldi nnet2's online NG-SGD) unless
  # --dnn-optimizer sgd (seed 001 Table 6).
  need 8 exp/tri1_ali/ali.1.gz "run stage 5"
  wait_stage 7
  ! $pretrain || need 8 exp/dnn_pretrain/final.dbn "run stage 7"
  (
  stage_start
  [ -f data/train_cv10/feats.scp ] || utils/subset_data_dir_tr_cv.sh data/train data/train_tr90 data/train_cv10
  dbn_opts=()
  if $pretrain; then   # stage 7's RBMs, with a new softmax layer on top
    dbn_opts=(--dbn exp/dnn_pretrain/final.dbn --hid-layers 0 --feature-transform exp/dnn_pretrain/final.feature_transform)
  fi
  steps/nnet/train.sh --cmd "$train_cmd" --num-workers $dnn_num_workers --average-every $dnn_average_every \
    --hid-layers $dnn_hid_layers --hid-dim $dnn_hid_dim --learn-rate $dnn_learn_rate "${dbn_opts[@]}" \
    --optimizer $dnn_optimizer --watchdog-timeout $watchdog_timeout $dnn_opts \
    data/train_tr90 data/train_cv10 data/lang exp/tri1_ali exp/tri1_ali $dnn_dir
  stage_done 8 $dnn_dir
  )
fi

if [ $stage -le 9 ] && [ $stop_stage -ge 9 ]; then
  log "Stage 9: DNN decoding of data/test with tri1's graph and WER scoring"
  # Pseudo log-likelihoods log p(s|x) - log p(s) from nnet-forward, acoustic scale 0.1 as nnet1.
  # Pdfs that no training frame was aligned to (count 0.5 after analyze-counts' smoothing)
  # would be boosted by -log(prior), about +13; --prior-cutoff 1 excludes them, as Kaldi's
  # PdfPrior excludes classes under its (much smaller) default cutoff.
  need 9 $dnn_dir/final.nnet "run stage 8"
  wait_stage 6   # its graph
  need 9 exp/tri1/graph/HCLG.fst "run stage 6"
  (
  stage_start
  steps/nnet/decode.sh --nj $nj --cmd "$decode_cmd" --decoder $decoder --acwt 0.1 --prior-cutoff $dnn_prior_cutoff \
    ${scoring_opts:+--scoring-opts "$scoring_opts"} \
    exp/tri1/graph data/test $dnn_dir/decode_test
  grep -H WER $dnn_dir/decode_test/wer_* | utils/best_wer.sh
  stage_done 9 $dnn_dir
  )
fi

wait_stage all
if [ $stage -le 0 ] && [ $stop_stage -ge 9 ]; then
  # exp/run_seconds: the whole run's wall and CPU seconds and the load at its end, written only
  # by a run of stages 0-9 in one go (the stages overlap, so their times do not add up to it)
  cpu_now
  echo "$SECONDS $(cut -d' ' -f1-3 /proc/loadavg) $cpu" > exp/run_seconds
fi

if [ $stage -le 10 ] && [ $stop_stage -ge 10 ]; then
  # The fingerprint: checksums of the corpus, features, alignments, models and WER files, and
  # the numeric environment (kernel pinning, versions); --nj and thread counts do not change it.
  log "Stage 10: fingerprint (exp/fingerprint.md) and the closing table ($results)"
  mkdir -p exp && fingerprint-recipe.py . > exp/fingerprint.md.tmp && mv exp/fingerprint.md.tmp exp/fingerprint.md
  # Before $results is rewritten from this run: this run's rows against the run it holds
  # (exp/fingerprint_vs_results.txt: same, differs or missing; the first that differs is the
  # stage where this run left that one; other options than the defaults part by design)
  if [ -f $results ] && grep -q '^| what | md5 |$' $results; then
    fingerprint-recipe.py --compare=$results exp/fingerprint.md > exp/fingerprint_vs_results.txt \
      || log "This run is not the one $results held (exp/fingerprint_vs_results.txt says where they part)"
  fi
  local/make_results.py --prog local/make_results.py --exp exp --dnn-dir $dnn_dir --out $results
fi

log "Done: stages $stage to $(( stop_stage < 10 ? stop_stage : 10 ))"
