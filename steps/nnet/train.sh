#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Trains a DNN (nnet1) with frame-level cross-entropy on pdf targets from GMM alignments, as
# Kaldi's steps/nnet/train.sh: feature pipeline (per-speaker CMVN, optional deltas; written once
# as $dir/feats_{tr,cv}.json), feature transform (splice +/-N, global CMVN), network prototype
# and initialisation (optionally behind a pretrained DBN), priors, then the Newbob (or
# exponential) scheduler in nnetmix/train.
# --network-type lstm|blstm (Kaldi's): the prototype comes from make-lstm-proto.py or
# make-blstm-proto.py (--proto-opts, e.g. "--cell-dim=320 --proj-dim=200 --num-layers=2"), the
# features are not spliced unless --splice says so, and each epoch runs as a job of the
# --train-tool (lstm: nnet-train-multistream.py, truncated BPTT; blstm:
# nnet-train-multistream-perutt.py, whole utterances) with --train-tool-opts, e.g.
# "--num-streams=4 --batch-size=20" (Kaldi's defaults). With --num-workers N > 1 (or --use-mpi)
# each epoch is nnet-train-mpi.py over N ranks instead, training the same way (--stream-mode
# multistream for lstm, perutt for blstm) with the --train-tool-opts (--num-streams, when not
# given, is the single-worker tool's default: 4 for lstm, 20 for blstm), mixed by model
# averaging or --bmuf every --average-every steps (of streams, utterances or CSC chunks).
# Run from the recipe directory. Skips everything when <exp-dir>/final.nnet exists; a killed run
# resumes after the last finished epoch.

# Begin configuration section.
config=               # config file with options (sourced by parse_options.sh)
cmd=utils/run.py      # how to run the training job (run.pl convention; cuda_cmd for a GPU)
# topology, initialization,
network_type=dnn      # dnn (make-nnet-proto.py), lstm (make-lstm-proto.py) or blstm (make-blstm-proto.py)
hid_layers=4          # nr. of hidden layers (before softmax); use 0 with --dbn
hid_dim=1024          # number of neurons per hidden layer
dbn=                  # (optional) pretrained DBN prepended to the initialized network
proto_opts=           # extra options to make-nnet-proto.py (lstm, blstm: make-lstm-proto.py, make-blstm-proto.py)
nnet_init=            # (optional) use this pre-initialized network
nnet_proto=           # (optional) initialize from this prototype
# feature processing,
splice=               # splice features +/-N frames in the feature transform (default: 5 for dnn, 0 for lstm/blstm)
cmvn_opts=            # options of apply-cmvn.py (default: <ali-train>/cmvn_opts, else --norm-means=true --norm-vars=false)
delta_opts=           # options of add-deltas.py (empty: no deltas; splice +/-5 gives the context)
feature_transform=    # (optional) use this feature transform instead of building one
# training,
learn_rate=0.008      # initial learning rate (the gradient is the SUM over the minibatch)
momentum=0            # momentum
l1_penalty=0          # L1 penalty
l2_penalty=0          # L2 penalty (weight decay)
minibatch_size=256    # frames per minibatch
randomizer_size=32768 # frames in the shuffling buffer
randomizer_seed=777   # seed of the frame shuffling
targets_kind=post     # post: pdf posteriors (ali-to-post, as Kaldi); ali: pdf alignments (faster to read)
train_tool=           # per-epoch training tool, run as a job (default: dnn in process; lstm:
                      # nnet-train-multistream.py; blstm: nnet-train-multistream-perutt.py)
train_tool_opts=      # extra options for the training tool (--name=value; dnn without --train-tool: for the scheduler;
                      # lstm|blstm with --num-workers > 1: the stream options of nnet-train-mpi.py, whose
                      # --stream-mode is multistream for lstm, perutt for blstm)
# learning-rate schedule,
scheduler=newbob      # newbob (Kaldi's train_scheduler.sh) or exponential
max_iters=20          # newbob: maximum number of epochs
min_iters=0           # newbob: no stopping before this epoch (0: not set)
keep_lr_iters=0       # newbob: epochs accepted unconditionally at the initial learning rate
start_halving_impr=0.01  # newbob: start halving below this relative CV improvement
end_halving_impr=0.001   # newbob: stop (once halving) below this relative CV improvement
halving_factor=0.5    # newbob: learning-rate factor when halving
num_epochs=10         # exponential: number of epochs (lr0 * 0.01^(e/(E-1)))
scheduler_opts=       # more nnet-train-scheduler.py options, e.g. "--dropout-schedule=0.2,0.2,0.0"
# parallel training over MPI (bin/nnet-train-mpi.py; seeds 001, 002),
num_workers=1         # MPI ranks per epoch (1: the single-worker nnet-train-frmshuff.py, in-process)
use_mpi=false         # true: run the MPI tool even with --num-workers 1
average_every=10      # minibatches between model mixes (BMUF: the block size)
mixing=allreduce      # model mixing: allreduce | butterfly | ring | hierarchical (exact average inside each host, then among one leader per host; BMUF too)
mix_compression=none  # what a mix sends: none | fp16 | bf16 | 1bit | topk (each rank's update, with error feedback; allreduce mixing or BMUF)
overlap_mixing=false  # true: each mix's all-reduce runs during the next block, applied one block late (allreduce mixing or BMUF, --allreduce mpi)
epoch_average=true  # false: no average at an epoch's end, each worker goes on from its own model (seed 000's way; plain mixing only)
allreduce=mpi         # all-reduce algorithm: mpi | ring | ring-async | recursive-doubling | tree
bmuf=false            # blockwise model-update filtering instead of plain model averaging
block_momentum=-1     # BMUF block momentum (negative: 1 - 1/num_workers)
block_lr=1.0          # BMUF block learning rate
bmuf_nesterov=true    # BMUF Nesterov (NBM) or classical (CBM) block momentum
scale_lr_by_workers=auto  # learning rate x num_workers: true | false | auto (true unless --bmuf)
resume_workers=same   # a run restarted with another --num-workers: same (refuse its checkpoint) | any (resume it: docs/parallel.md "Elastic resume")
watchdog_timeout=-1   # seconds a rank may make no progress before the job ends naming it; 0: off; -1: adaptive (120 s at start, then 20x the slowest step, at least 60 s)
# the update rule
optimizer=sgd         # sgd (nnet1 SGD) or ngsgd (online natural-gradient SGD, seed 001 section 4)
ngsgd_opts=           # e.g. "--ngsgd-rank-in=20 --ngsgd-rank-out=80 --max-change-per-sample=0.075"
# misc,
backend=cpu           # compute backend: cpu, cuda or auto
seed=777              # seed of the utterance shuffling and the network initialisation
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 6 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <data-train> <data-cv> <lang-dir> <ali-train> <ali-cv> <exp-dir>
 e.g.: $0 data/train_tr90 data/train_cv10 data/lang exp/mono_ali exp/mono_ali exp/dnn
 Training data : <data-train>,<ali-train> (for optimizing cross-entropy)
 Held-out data : <data-cv>,<ali-cv> (for learn-rate scheduling, model selection)
 note: <ali-train>,<ali-cv> can point to the same directory.
main options (for others, see top of script file)
  --config <config-file>          # config containing options
  --network-type <dnn|lstm|blstm> # type of neural network (default: $network_type)
  --hid-layers <n>                # number of hidden layers (default: $hid_layers)
  --hid-dim <n>                   # neurons per hidden layer (default: $hid_dim)
  --dbn <file>                    # prepend this pretrained DBN (then use --hid-layers 0)
  --nnet-proto <file>             # use this network prototype
  --proto-opts <string>           # make-nnet-proto.py options, e.g. "--activation-type=<ParametricRelu> --with-dropout"
                                  # (lstm/blstm: make-(b)lstm-proto.py's, e.g. "--cell-dim=320 --proj-dim=200")
  --feature-transform <file>      # re-use this input feature transform
  --cmvn-opts <string>            # options of apply-cmvn.py
  --delta-opts <string>           # add add-deltas.py with these options
  --splice <n>                    # splice +/-n frames (default: 5 for dnn, 0 for lstm/blstm)
  --learn-rate <float>            # initial learning rate (default: $learn_rate)
  --train-tool <tool>             # per-epoch training tool (default: see top of script file)
  --train-tool-opts <string>      # its options, e.g. "--num-streams=4 --batch-size=20"
  --scheduler <newbob|exponential> # learning-rate schedule (default: $scheduler)
  --max-iters <n>                 # newbob: maximum epochs (default: $max_iters)
  --num-epochs <n>                # exponential: epochs (default: $num_epochs)
  --backend <cpu|cuda|auto>       # compute backend (default: $backend)
  --num-workers <n>               # MPI ranks per epoch (default: $num_workers; >1 runs nnet-train-mpi.py)
  --optimizer <sgd|ngsgd>         # update rule (default: $optimizer; ngsgd = natural-gradient SGD)
  --average-every <n>             # minibatches between model mixes (default: $average_every)
  --mixing <allreduce|butterfly|ring|hierarchical> # model mixing (default: $mixing)
  --mix-compression <none|fp16|bf16|1bit|topk> # compressed updates at a mix (default: $mix_compression)
  --overlap-mixing <true|false>   # mix's all-reduce overlapped with the next block (default: $overlap_mixing)
  --epoch-average <true|false>    # the workers' exact average at each epoch's end (default: $epoch_average)
  --bmuf <true|false>             # BMUF instead of model averaging (default: $bmuf)
  --resume-workers <same|any>     # restarted with another --num-workers: refuse or resume (default: $resume_workers)
  --watchdog-timeout <seconds>    # end an MPI epoch whose rank hangs (default: $watchdog_timeout = adaptive; 0: off)
EOF
  exit 1
fi

data=$1
data_cv=$2
lang=$3
alidir=$4
alidir_cv=$5
dir=$6

# whole-number options: a typo ends here naming the option (not in a shell test later, which
# prints "integer expression expected" and goes on, nor with a half-written nnet.proto)
for spec in hid_layers:0 hid_dim:1 num_workers:1 average_every:1 max_iters:1 min_iters:0 \
            keep_lr_iters:0 num_epochs:1 minibatch_size:1 randomizer_size:1; do
  name=${spec%:*} least=${spec#*:}
  value=${!name}
  { [[ $value =~ ^[0-9]+$ ]] && [ "$value" -ge "$least" ]; } || \
    { echo "$0: --${name//_/-} must be an integer >= $least, got '$value'" >&2; exit 1; }
done

for f in $alidir/final.mdl $alidir/ali.1.gz $alidir_cv/ali.1.gz $data/feats.scp \
         $data_cv/feats.scp $lang/phones.txt; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
[ -z "$dbn" ] || [ -f "$dbn" ] || { echo "$0: no such file $dbn" >&2; exit 1; }
[ -z "$feature_transform" ] || [ -f "$feature_transform" ] || \
  { echo "$0: no such file $feature_transform" >&2; exit 1; }
case $network_type in
  dnn) [ -n "$splice" ] || splice=5 ;;
  lstm|blstm)
    [ -n "$splice" ] || splice=0  # the recurrence gives the context (Kaldi's LSTM recipes)
    if [ -n "$dbn" ]; then echo "$0: --dbn is for --network-type dnn only" >&2; exit 1; fi
    if [ "$optimizer" != sgd ]; then
      echo "$0: --network-type $network_type trains with SGD here (got --optimizer $optimizer)" >&2
      exit 1
    fi
    # the blstm default: whole utterances (CSC-BPTT with --chunk-size in --train-tool-opts)
    stream_mode=multistream; [ $network_type = blstm ] && stream_mode=perutt
    if [ -z "$train_tool" ] && [ $num_workers -le 1 ] && [ "$use_mpi" != true ]; then
      train_tool=nnet-train-multistream.py
      [ $network_type = blstm ] && train_tool=nnet-train-multistream-perutt.py
    fi ;;
  *) echo "$0: unknown --network-type $network_type (expected dnn, lstm or blstm)" >&2; exit 1 ;;
esac
if [ -n "$train_tool" ]; then
  command -v ${train_tool%% *} >/dev/null || \
    { echo "$0: no such training tool ${train_tool%% *} (--train-tool)" >&2; exit 1; }
  if [ $num_workers -gt 1 ] || [ "$use_mpi" = true ]; then
    echo "$0: --train-tool with --num-workers $num_workers: give the MPI tool's options instead" >&2
    exit 1
  fi
fi

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
echo "$0: training a neural network in $dir"
echo "$0:   train set $data ($(wc -l < $data/feats.scp) utterances), alignments $alidir"
echo "$0:   cv set    $data_cv ($(wc -l < $data_cv/feats.scp) utterances), alignments $alidir_cv"

mkdir -p $dir/log $dir/nnet

if [ -e $dir/final.nnet ]; then
  echo "SKIPPING TRAINING... ($0)"
  echo "nnet already trained : $dir/final.nnet ($(readlink $dir/final.nnet))"
  exit 0
fi

###### ALIGNMENTS -> TARGETS, PRIORS ######
num_pdf=$(hmm-info.py --print-args=false $alidir/final.mdl | awk '/pdfs/{print $NF}')
ali_to_pdf() {  # <ali-dir>: pdf alignments of every ali.*.gz on stdout
  ali-to-pdf.py --print-args=false $alidir/final.mdl "ark:gunzip -c $1/ali.*.gz |" ark:-
}
for x in tr cv; do
  src=$alidir; [ $x = cv ] && src=$alidir_cv
  out=$dir/pdf_ali.$x.ark
  if [ $x = cv ] && [ "$(readlink -f $alidir_cv)" = "$(readlink -f $alidir)" ]; then
    [ -e $out ] || ln -s pdf_ali.tr.ark $out
    continue
  fi
  if [ ! -f $out ]; then
    ali_to_pdf $src > $out.tmp 2>$dir/log/ali_to_pdf.$x.log
    mv $out.tmp $out
  fi
done
if [ "$targets_kind" = post ]; then
  for x in tr cv; do
    out=$dir/pdf_post.$x.ark
    if [ -L $dir/pdf_ali.$x.ark ]; then [ -e $out ] || ln -s pdf_post.tr.ark $out; continue; fi
    if [ ! -f $out ]; then
      ali-to-post.py ark:$dir/pdf_ali.$x.ark ark:$out.tmp 2>$dir/log/ali_to_post.$x.log
      mv $out.tmp $out
    fi
  done
  labels_tr=ark:$dir/pdf_post.tr.ark; labels_cv=ark:$dir/pdf_post.cv.ark
else
  labels_tr=ark:$dir/pdf_ali.tr.ark; labels_cv=ark:$dir/pdf_ali.cv.ark
fi
if [ ! -f $dir/ali_train_pdf.counts ]; then
  analyze-counts.py --verbose=1 --binary=false --counts-dim=$num_pdf ark:$dir/pdf_ali.tr.ark \
    $dir/ali_train_pdf.counts 2>$dir/log/analyze_counts_pdf.log
fi
# the transition model and tree, needed by the decoder
copy-transition-model.py --binary=false $alidir/final.mdl $dir/final.mdl 2>$dir/log/copy_trans.log
[ -f $alidir/tree ] && cp $alidir/tree $dir/tree

###### FEATURES ######
cp $data/feats.scp $dir/train_sorted.scp
cp $data_cv/feats.scp $dir/cv.scp
# shuffle the utterance list (seeded), so each randomizer buffer mixes speakers
awk -v seed=$seed 'BEGIN{srand(seed)} {printf "%.10f\t%s\n", rand(), $0}' $dir/train_sorted.scp | \
  sort -k1,1 | cut -f2- > $dir/train.scp

if [ -n "$feature_transform" ]; then  # import the settings that came with it
  D=$(dirname $feature_transform)
  [ -e $D/cmvn_opts ] && cmvn_opts=$(cat $D/cmvn_opts)
  [ -e $D/delta_opts ] && delta_opts=$(cat $D/delta_opts)
  echo "$0: importing feature settings from $D: cmvn_opts '$cmvn_opts' delta_opts '$delta_opts'"
elif [ -z "$cmvn_opts" ]; then
  if [ -f $alidir/cmvn_opts ]; then cmvn_opts=$(cat $alidir/cmvn_opts); fi
  [ -n "$cmvn_opts" ] || cmvn_opts="--norm-means=true --norm-vars=false"
fi
if [ -n "$cmvn_opts" ]; then
  for f in $data/cmvn.scp $data_cv/cmvn.scp; do
    [ -f $f ] || { echo "$0: no such file $f (needed by --cmvn-opts '$cmvn_opts')" >&2; exit 1; }
  done
fi
# the feature chain, described once: these two files (kept for Kaldi's scripts too), and one
# pipeline per set (make-feature-pipeline.py) that the tools read as pipeline:<file>
echo "$cmvn_opts" > $dir/cmvn_opts
echo "$delta_opts" > $dir/delta_opts
echo plain > $dir/feat_type
make-feature-pipeline.py --print-args=false --opts-from=$dir --utt-list=$dir/train.scp \
  $data $dir/feats_tr.json 2>$dir/log/feats_pipeline.log
make-feature-pipeline.py --print-args=false --opts-from=$dir --utt-list=$dir/cv.scp \
  $data_cv $dir/feats_cv.json 2>>$dir/log/feats_pipeline.log
feats_tr="pipeline:$dir/feats_tr.json"
feats_cv="pipeline:$dir/feats_cv.json"

###### FEATURE TRANSFORM ######
if [ -n "$feature_transform" ]; then
  echo "$0: importing the feature transform $feature_transform"
  ft=$dir/imported_$(basename $feature_transform)
  cp $feature_transform $ft
else
  feat_dim=$(feat-to-dim.py --print-args=false "$feats_tr" - 2>$dir/log/feat_to_dim.log)
  echo "$0: feature dim $feat_dim (input of the feature transform), splice +/-$splice"
  ft=$dir/tr_splice${splice}_cmvn-g.nnet
  if [ ! -f $ft ]; then
    # splice +/-N, then global CMVN of the spliced features of (up to) 10k training utterances
    make-feature-transform.py --splice=$splice --max-utts=10000 "$feats_tr" $ft \
      2>$dir/log/feature_transform.log || \
      { echo "$0: building the feature transform failed, see $dir/log/feature_transform.log" >&2; exit 1; }
  fi
fi
ln -sfn $(basename $ft) $dir/final.feature_transform
feature_transform=$dir/final.feature_transform

###### NETWORK INITIALISATION ######
if [ -n "$nnet_init" ]; then
  echo "$0: using the pre-initialized network $nnet_init"
elif [ -n "$nnet_proto" ]; then
  nnet_init=$dir/nnet.init
  [ -f $nnet_init ] || nnet-initialize.py --seed=$seed $nnet_proto $nnet_init 2>$dir/log/nnet_initialize.log
else
  num_fea=$(nnet-info.py --print-args=false $feature_transform 2>/dev/null | awk '/^output-dim/{print $2}')
  [ -n "$dbn" ] && num_fea=$(nnet-info.py --print-args=false "$dbn" 2>/dev/null | awk '/^output-dim/{print $2}')
  nnet_proto=$dir/nnet.proto
  case $network_type in
    dnn) make-nnet-proto.py --print-args=false $proto_opts $num_fea $num_pdf $hid_layers $hid_dim > $nnet_proto ;;
    *) make-${network_type}-proto.py --print-args=false $proto_opts $num_fea $num_pdf > $nnet_proto ;;
  esac
  nnet_init=$dir/nnet.init
  [ -f $nnet_init ] || nnet-initialize.py --seed=$seed $nnet_proto $nnet_init 2>$dir/log/nnet_initialize.log
  if [ -n "$dbn" ]; then
    [ -f $dir/nnet_dbn_dnn.init ] || nnet-concat.py "$dbn" $nnet_init $dir/nnet_dbn_dnn.init \
      2>>$dir/log/nnet_initialize.log
    nnet_init=$dir/nnet_dbn_dnn.init
  fi
  if [ $network_type = dnn ]; then
    echo "$0: network $num_fea -> ${hid_layers}x$hid_dim -> $num_pdf${dbn:+ behind the DBN $dbn} in $nnet_init"
  else
    echo "$0: $network_type network $num_fea -> $num_pdf (prototype $nnet_proto) in $nnet_init"
  fi
fi

###### TRAINING ######
# Single-worker SGD trains in the scheduler's process; MPI and NG-SGD run each epoch (and each
# CV pass) as a job, NG-SGD's state travelling with each epoch's model as <model>.ngsgd.npz.
optim_opts="--optimizer=$optimizer $ngsgd_opts"
mpi_opts=
sched_tool_opts=$train_tool_opts
if [ -n "$train_tool" ]; then
  # each epoch (and each CV pass) is a job of the tool: $cmd log/iterNN.tr.log <tool> ...
  sched_tool_opts=
  mpi_opts="--train-cmd=$cmd|--train-tool=$train_tool $train_tool_opts|--pass-epoch=false"
  [ "$optimizer" != sgd ] && mpi_opts="$mpi_opts|--tr-tool-opts=$optim_opts"
  echo "$0: each epoch runs as a job: $train_tool $train_tool_opts"
elif [ $num_workers -gt 1 ] || [ "$use_mpi" = true ]; then
  # each epoch (and each CV pass) is its own MPI job: $cmd --num-tasks N log/iterNN.tr.log
  # nnet-train-mpi.py ..., ranks logging to log/iterNN.tr.rankR.log; the scheduler reads the
  # losses back from the job log and keeps a BMUF checkpoint with each epoch's model.
  tool="nnet-train-mpi.py --average-every=$average_every --mixing=$mixing --allreduce=$allreduce"
  tool="$tool --bmuf=$bmuf --block-momentum=$block_momentum --block-lr=$block_lr"
  tool="$tool --bmuf-nesterov=$bmuf_nesterov --scale-lr-by-workers=$scale_lr_by_workers"
  [ "$mix_compression" != none ] && tool="$tool --mix-compression=$mix_compression"
  [ "$resume_workers" != same ] && tool="$tool --resume-workers=$resume_workers"
  [ "$overlap_mixing" = true ] && tool="$tool --overlap-mixing=true"
  [ "$epoch_average" = false ] && tool="$tool --epoch-average=false"
  if [ $network_type != dnn ]; then
    # the single-worker tool's stream options (--train-tool-opts) go to every epoch and CV pass
    tool="$tool --stream-mode=$stream_mode $train_tool_opts"; sched_tool_opts=
  fi
  tr_opts="$optim_opts"; cv_opts=
  [ -f $data/utt2num_frames ] && tr_opts="$tr_opts --utt2num-frames=$data/utt2num_frames"
  [ -f $data_cv/utt2num_frames ] && cv_opts="--utt2num-frames=$data_cv/utt2num_frames"
  mpi_opts="--train-cmd=$cmd --num-tasks $num_workers|--train-tool=$tool|--tr-tool-opts=$tr_opts|--cv-tool-opts=$cv_opts|--bmuf-state=$bmuf|--watchdog-timeout=$watchdog_timeout"
  echo "$0: $num_workers MPI workers per epoch ($([ $bmuf = true ] && echo BMUF || echo "$mixing mixing") every $average_every minibatches); rank logs in $dir/log/iterNN.tr.rankR.log"
elif [ "$optimizer" != sgd ]; then
  mpi_opts="--train-cmd=$cmd|--train-tool=nnet-train-frmshuff.py|--tr-tool-opts=$optim_opts|--pass-epoch=false"
fi
echo "$0: training ($scheduler schedule, backend $backend); progress in $dir/log/train_scheduler.log"
IFS='|' read -r -a mpi_args <<< "$mpi_opts"
# A resumed run (no final.nnet, a scheduler log there) keeps the log of the run before it as
# log/train_scheduler.log.N, N = 1, 2, ... (the wrapper starts its log afresh, as Kaldi's run.pl)
if [ -s $dir/log/train_scheduler.log ]; then
  n=1; while [ -e $dir/log/train_scheduler.log.$n ]; do n=$((n + 1)); done
  mv $dir/log/train_scheduler.log $dir/log/train_scheduler.log.$n
  echo "$0: resuming; the earlier run's log is now $dir/log/train_scheduler.log.$n"
fi
# The wrapper's own stderr waits in log/train_cmd.err: on failure the scheduler's ERROR line
# (for an MPI epoch: the rank that ended it, its host, signal or status, and its log) comes first.
if ! $cmd $dir/log/train_scheduler.log \
  nnet-train-scheduler.py \
    --learn-rate=$learn_rate --momentum=$momentum --l1-penalty=$l1_penalty \
    --l2-penalty=$l2_penalty --minibatch-size=$minibatch_size \
    --randomizer-size=$randomizer_size --randomizer-seed=$randomizer_seed \
    --scheduler=$scheduler --max-iters=$max_iters --min-iters=$min_iters \
    --keep-lr-iters=$keep_lr_iters --start-halving-impr=$start_halving_impr \
    --end-halving-impr=$end_halving_impr --halving-factor=$halving_factor \
    --num-epochs=$num_epochs --backend=$backend --targets-kind=$targets_kind \
    --feature-transform=$feature_transform $scheduler_opts $sched_tool_opts \
    ${mpi_args[@]+"${mpi_args[@]}"} \
    $nnet_init "$feats_tr" "$feats_cv" $labels_tr $labels_cv $dir 2>$dir/log/train_cmd.err; then
  grep -h -e "^ERROR" -e "^  consequence:" $dir/log/train_scheduler.log >&2 || true
  cat $dir/log/train_cmd.err >&2
  exit 1
fi
cat $dir/log/train_cmd.err >&2
grep -hE "CROSSVAL PRERUN|ITERATION|finished|continue as|Succeeded" $dir/log/train_scheduler.log | \
  sed 's/^LOG ([^)]*) //' || true

[ -e $dir/final.nnet ] || { echo "$0: no $dir/final.nnet after training" >&2; exit 1; }
echo "$0: done, $dir/final.nnet -> $(readlink $dir/final.nnet)"
