#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Pre-trains a Deep Belief Network as a stack of RBMs by CD-1, as Kaldi's steps/nnet/pretrain_dbn.sh:
# feature transform (splice +/-N, global CMVN), then per layer an RBM (the first Gaussian-Bernoulli,
# the others Bernoulli-Bernoulli with the visible bias from the mean activation below) converted
# to Affine + Sigmoid and stacked: <exp-dir>/1.dbn ... N.dbn, final.dbn -> N.dbn and
# final.feature_transform, which steps/nnet/train.sh takes with --dbn and --feature-transform.
# Run from the recipe directory. Trained layers are skipped, so a killed run resumes.

# Begin configuration section.
config=                 # config file with options (sourced by parse_options.sh)
cmd=utils/run.py        # how to run the training jobs (run.pl convention; cuda_cmd for a GPU)
num_workers=1           # MPI ranks per RBM (> 1: rbm-train-cd1-mpi.py under $cmd --num-tasks N)
average_every=10        # with --num-workers > 1: minibatches between mixes of the ranks' RBMs
watchdog_timeout=-1     # with --num-workers > 1: seconds a rank may make no progress before the job ends naming it; 0: off; -1: adaptive
# topology, initialization,
nn_depth=6              # number of hidden layers (RBMs)
hid_dim=2048            # number of neurons per layer
param_stddev_first=0.1  # init parameters in the 1st RBM
param_stddev=0.1        # init parameters in the other RBMs
input_vis_type=gauss    # type of visible nodes on DBN input (gauss or bern)
# number of iterations,
rbm_iter=1              # pre-training epochs per RBM (the Gaussian-Bernoulli RBM does 2x more)
# pre-training opts,
rbm_lrate=0.4           # RBM learning rate
rbm_lrate_low=0.01      # lower RBM learning rate (for Gaussian units)
rbm_l2penalty=0.0002    # L2 penalty (increases RBM-mixing rate)
rbm_extra_opts=         # extra options of rbm-train-cd1-frmshuff.py (--name=value)
# feature processing,
splice=5                # splice features +/-N frames in the feature transform
cmvn_opts=              # (optional) per-speaker apply-cmvn.py with these options
delta_opts=             # (optional) add-deltas.py with these options
feature_transform=      # (optional) use this feature transform instead of building one
# misc,
backend=cpu             # compute backend: cpu, cuda or auto
seed=777                # seed of the list shuffling, the RBM initialisation and the CD-1 sampling
verbose=1               # verbosity of rbm-train-cd1-frmshuff.py (1: momentum steps)
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 2 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <data> <exp-dir>
 e.g.: $0 data/train exp/dnn_pretrain
main options (for others, see top of script file)
  --config <config-file>       # config containing options
  --nn-depth <N>               # number of RBM layers (default: $nn_depth)
  --hid-dim <N>                # number of hidden units per layer (default: $hid_dim)
  --rbm-iter <N>               # CD-1 iterations per layer, 2x for the Gaussian one (default: $rbm_iter)
  --rbm-lrate <float>          # learning rate of Bernoulli-Bernoulli RBMs (default: $rbm_lrate)
  --rbm-lrate-low <float>      # learning rate of the Gaussian-Bernoulli RBM (default: $rbm_lrate_low)
  --cmvn-opts <string>         # add apply-cmvn.py to the input feature pipeline
  --delta-opts <string>        # add add-deltas.py to the input feature pipeline
  --splice <N>                 # splice +/-N frames of input features (default: $splice)
  --feature-transform <file>   # directly use this feature transform
  --backend <cpu|cuda|auto>    # compute backend (default: $backend)
  --num-workers <N>            # MPI ranks per RBM (default: $num_workers; > 1 needs mpiexec)
  --average-every <N>          # minibatches between mixes of the ranks (default: $average_every)
  --watchdog-timeout <seconds> # end an MPI job whose rank hangs (default: $watchdog_timeout = adaptive; 0: off)
EOF
  exit 1
fi

data=$1
dir=$2

for f in $data/feats.scp; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
[ -z "$feature_transform" ] || [ -f "$feature_transform" ] || \
  { echo "$0: no such file $feature_transform" >&2; exit 1; }
case $input_vis_type in gauss|bern) ;; *)
  echo "$0: --input-vis-type must be gauss or bern, got '$input_vis_type'" >&2; exit 1;;
esac
[ "$nn_depth" -ge 1 ] || { echo "$0: --nn-depth must be >= 1, got $nn_depth" >&2; exit 1; }
[ "$num_workers" -ge 1 ] 2>/dev/null || \
  { echo "$0: --num-workers must be an integer >= 1, got '$num_workers'" >&2; exit 1; }

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
echo "$0: pre-training a DBN of $nn_depth x $hid_dim RBMs in $dir"
echo "$0:   train set $data ($(wc -l < $data/feats.scp) utterances)"

if [ -e $dir/${nn_depth}.dbn ]; then
  ln -sfn ${nn_depth}.dbn $dir/final.dbn
  echo "$0: $dir/${nn_depth}.dbn exists, skipping"
  exit 0
fi
mkdir -p $dir/log

###### FEATURES ######
cp $data/feats.scp $dir/train_sorted.scp
# shuffle the utterance list (seeded), so each randomizer buffer mixes speakers
awk -v seed=$seed 'BEGIN{srand(seed)} {printf "%.10f\t%s\n", rand(), $0}' $dir/train_sorted.scp | \
  sort -k1,1 | cut -f2- > $dir/train.scp

if [ -n "$feature_transform" ]; then  # import the settings that came with it
  D=$(dirname $feature_transform)
  [ -e $D/cmvn_opts ] && cmvn_opts=$(cat $D/cmvn_opts)
  [ -e $D/delta_opts ] && delta_opts=$(cat $D/delta_opts)
  echo "$0: importing feature settings from $D: cmvn_opts '$cmvn_opts' delta_opts '$delta_opts'"
fi
if [ -n "$cmvn_opts" ]; then
  for f in $data/cmvn.scp $data/utt2spk; do
    [ -f $f ] || { echo "$0: no such file $f (needed by --cmvn-opts '$cmvn_opts')" >&2; exit 1; }
  done
fi
# the feature chain, described once: these two files (steps/nnet/train.sh imports them with
# --feature-transform) and the pipeline the tools read as pipeline:$dir/feats_tr.json
echo "$cmvn_opts" > $dir/cmvn_opts
echo "$delta_opts" > $dir/delta_opts
make-feature-pipeline.py --print-args=false --opts-from=$dir --utt-list=$dir/train.scp \
  $data $dir/feats_tr.json 2>$dir/log/feats_pipeline.log
feats_tr="pipeline:$dir/feats_tr.json"

###### FEATURE TRANSFORM ######
if [ -n "$feature_transform" ]; then
  echo "$0: importing the feature transform $feature_transform"
  ft=$dir/imported_$(basename $feature_transform)
  cp $feature_transform $ft
else
  ft=$dir/tr_splice${splice}_cmvn-g.nnet
  if [ ! -f $ft ]; then
    echo "$0: feature transform: splice +/-$splice, global CMVN from $(head -n 10000 $dir/train.scp | wc -l) utterances"
    make-feature-transform.py --splice=$splice --max-utts=10000 "$feats_tr" $ft \
      2>$dir/log/feature_transform.log || \
      { echo "$0: building the feature transform failed, see $dir/log/feature_transform.log" >&2; exit 1; }
  fi
fi
ln -sfn $(basename $ft) $dir/final.feature_transform
feature_transform=$dir/final.feature_transform
num_fea=$(nnet-info.py --print-args=false $feature_transform 2>/dev/null | awk '/^output-dim/{print $2}')
echo "$0: DBN input dim $num_fea (output of $feature_transform)"

###### PRE-TRAINING ######
# the RBM trainer: one process, or --num-workers MPI ranks that mix their RBMs
rbm_train=rbm-train-cd1-frmshuff.py; task_opts=
if [ "$num_workers" -gt 1 ]; then
  rbm_train="rbm-train-cd1-mpi.py --average-every=$average_every --watchdog-timeout=$watchdog_timeout"
  if [ -f $data/utt2num_frames ]; then
    rbm_train="$rbm_train --utt2num-frames=$data/utt2num_frames"
  fi
  task_opts="--num-tasks $num_workers"
  echo "$0: training each RBM on $num_workers MPI ranks, mixing every $average_every minibatches"
fi
for depth in $(seq 1 $nn_depth); do
  RBM=$dir/$depth.rbm
  if [ -f $RBM ]; then
    echo "$0: RBM $RBM already trained, skipping"
  elif [ $depth -eq 1 ]; then
    # usually Gaussian-Bernoulli: lower learning rate, twice the iterations
    num_iter=$rbm_iter; lrate=$rbm_lrate
    if [ $input_vis_type = gauss ]; then num_iter=$((2 * rbm_iter)); lrate=$rbm_lrate_low; fi
    echo "$0: layer 1: $input_vis_type-bern RBM $num_fea -> $hid_dim (lrate $lrate, iters $num_iter)"
    echo "<Rbm> <InputDim> $num_fea <OutputDim> $hid_dim <VisibleType> $input_vis_type <HiddenType> bern <ParamStddev> $param_stddev_first" > $RBM.proto
    nnet-initialize.py --seed=$seed $RBM.proto $RBM.init 2>$dir/log/nnet-initialize.$depth.log
    $cmd $task_opts $dir/log/rbm.$depth.log \
      $rbm_train --learn-rate=$lrate --l2-penalty=$rbm_l2penalty \
        --num-iters=$num_iter --verbose=$verbose --seed=$seed --backend=$backend \
        --feature-transform=$feature_transform $rbm_extra_opts \
        $RBM.init "$feats_tr" $RBM || \
      { echo "$0: training RBM $depth failed, see $dir/log/rbm.$depth.log" >&2; exit 1; }
  else
    # Bernoulli-Bernoulli: the visible bias starts at logit(mean activation of the layer below)
    below="nnet-concat.py --print-args=false $feature_transform $dir/$((depth-1)).dbn - |"
    if [ ! -f $dir/$depth.cmvn ]; then
      nnet-activation-cmvn.py --backend=$backend --max-utts=10000 "$below" \
        "$feats_tr" $dir/$depth.cmvn 2>$dir/log/cmvn.$depth.log || \
        { echo "$0: activation stats for RBM $depth failed, see $dir/log/cmvn.$depth.log" >&2; exit 1; }
    fi
    echo "$0: layer $depth: bern-bern RBM $hid_dim -> $hid_dim (lrate $rbm_lrate, iters $rbm_iter)"
    echo "<Rbm> <InputDim> $hid_dim <OutputDim> $hid_dim <VisibleType> bern <HiddenType> bern <ParamStddev> $param_stddev <VisibleBiasCmvnFilename> $dir/$depth.cmvn" > $RBM.proto
    nnet-initialize.py --seed=$((seed + depth - 1)) $RBM.proto $RBM.init \
      2>$dir/log/nnet-initialize.$depth.log
    $cmd $task_opts $dir/log/rbm.$depth.log \
      $rbm_train --learn-rate=$rbm_lrate --l2-penalty=$rbm_l2penalty \
        --num-iters=$rbm_iter --verbose=$verbose --seed=$((seed + depth - 1)) --backend=$backend \
        --feature-transform="$below" $rbm_extra_opts \
        $RBM.init "$feats_tr" $RBM || \
      { echo "$0: training RBM $depth failed, see $dir/log/rbm.$depth.log" >&2; exit 1; }
  fi

  # the DBN stack: Affine + Sigmoid per RBM
  if [ ! -f $dir/$depth.dbn ]; then
    if [ $depth -eq 1 ]; then
      rbm-convert-to-nnet.py $RBM $dir/$depth.dbn 2>$dir/log/dbn.$depth.log
    else
      nnet-concat.py $dir/$((depth-1)).dbn "rbm-convert-to-nnet.py --print-args=false $RBM - |" \
        $dir/$depth.dbn 2>$dir/log/dbn.$depth.log
    fi
  fi
done
ln -sfn ${nn_depth}.dbn $dir/final.dbn

echo "$0: RBM pre-training progress (reconstruction Mse, line per layer):"
for depth in $(seq 1 $nn_depth); do
  echo "  layer $depth: $(grep -ho -m1 'AvgLoss:.*' $dir/log/rbm.$depth.log || true)"
  grep -h '^progress' $dir/log/rbm.$depth.log | sed 's/^/    /' || true
done
echo "$0: done, $dir/final.dbn -> ${nn_depth}.dbn, $dir/final.feature_transform"
