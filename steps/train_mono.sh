#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Flat start and monophone GMM-HMM training with delta-delta features and per-speaker CMN, as
# Kaldi's steps/train_mono.sh (same options, schedule and outputs). Run from the recipe directory.
# Writes <exp-dir>/{0..num_iters}.mdl, final.mdl, tree, fsts.JOB.gz, ali.JOB.gz and log/, with one
# line per pass in log/summary.log (avg log-likelihood per frame, Gaussians, alignment failures).

# Begin configuration section.
nj=4                  # number of parallel jobs
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
scale_opts="--transition-scale=1.0 --acoustic-scale=0.1 --self-loop-scale=0.1"  # alignment scales
num_iters=40          # number of iterations of training
max_iter_inc=30       # last iteration to increase the number of Gaussians on
totgauss=1000         # target number of Gaussians
careful=false         # if true, 'careful' alignment (gmm-align-compiled --careful)
boost_silence=1.0     # factor by which to boost silence likelihoods in alignment
realign_iters="1 2 3 4 5 6 7 8 9 10 12 14 16 18 20 23 26 29 32 35 38"  # passes that realign
initial_beam=6        # alignment beam of pass 1 (Kaldi's beam=6; retry beam is 4x the beam)
regular_beam=10       # alignment beam after pass 1
config=               # name of config file
stage=-4              # stage to start from (-4 init, -3 graphs, -2/-1 equal alignment, 0.. passes)
power=0.25            # exponent to determine the number of Gaussians from occupation counts
norm_vars=false       # deprecated, prefer --cmvn-opts "--norm-vars=false"
cmvn_opts=            # extra options to apply-cmvn.py
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <data-dir> <lang-dir> <exp-dir>
 e.g.: $0 data/train data/lang exp/mono
main options (for others, see top of script file)
  --config <config-file>                # config containing options
  --nj <nj>                             # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>        # how to run jobs (default: $cmd)
  --num-iters <n>                       # number of training passes (default: $num_iters)
  --totgauss <n>                        # target number of Gaussians (default: $totgauss)
  --boost-silence <factor>              # boost of silence likelihoods in alignment (default: $boost_silence)
  --stage <stage>                       # stage to (re)start from (default: $stage)
EOF
  exit 1
fi

data=$1
lang=$2
dir=$3

for f in $data/feats.scp $data/cmvn.scp $data/text $data/utt2spk $lang/oov.int $lang/topo \
         $lang/L.fst $lang/words.txt $lang/phones.txt $lang/phones/sets.int \
         $lang/phones/disambig.int $lang/phones/optional_silence.csl; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
utils/validate_data_dir.sh --no-wav $data  # features and text are what training reads

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
if [ $stage -le -4 ] && [ -f $dir/final.mdl ]; then
  echo "$0: $dir/final.mdl exists, skipping (remove it, or use --stage N, to train again)"
  exit 0
fi

oov_sym=$(cat $lang/oov.int)
mkdir -p $dir/log
echo $nj > $dir/num_jobs
sdata=$data/split$nj
[[ -d $sdata && $data/feats.scp -ot $sdata ]] || utils/split_data.sh $data $nj
cp $lang/phones.txt $dir

$norm_vars && cmvn_opts="--norm-vars=true $cmvn_opts"
echo $cmvn_opts > $dir/cmvn_opts  # keep track of options to CMVN.

# One BLAS thread per job (see bin/gmm-align-compiled.py): parallelism comes from the $nj jobs.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# each job's feature chain, described once: per-speaker CMVN, then deltas (Kaldi's defaults
# when the options are empty), read by the tools as pipeline:$dir/feats.JOB.json
steps/make_feature_pipelines.sh --cmvn-opts "${cmvn_opts:---norm-means=true}" \
  --delta-opts "--delta-order=2" $data $nj $dir >/dev/null
feats="pipeline:$dir/feats.JOB.json"
example_feats="$(echo "$feats" | sed s/JOB/1/g)"
sil_phones=$(cat $lang/phones/optional_silence.csl)

. utils/gmm_pass_summary.sh  # now, summarize: one line per pass in $dir/log/summary.log

if [ $stage -le -4 ]; then
  rm -f $dir/log/summary.log
fi

if [ $stage -le -3 ]; then
  echo "$0: Initializing monophone system."
  feat_dim=$(feat-to-dim.py "$example_feats" - 2>/dev/null) || feat_dim=
  if [ -z "$feat_dim" ]; then
    feat-to-dim.py "$example_feats" - || true
    echo "$0: error getting the feature dimension from $example_feats" >&2
    exit 1
  fi
  $cmd JOB=1 $dir/log/init.log \
    gmm-init-mono.py --shared-phones=$lang/phones/sets.int \
      "--train-feats=ark:subset-feats.py --n=10 $feats ark:- |" $lang/topo $feat_dim \
      $dir/0.mdl $dir/tree
fi

numgauss=$(gmm-info.py --print-args=false $dir/0.mdl | awk '/gaussians/ {print $NF}')
incgauss=$(( (totgauss - numgauss) / max_iter_inc ))  # per-iteration increase of #Gauss

if [ $stage -le -2 ]; then
  echo "$0: Compiling training graphs"
  $cmd JOB=1:$nj $dir/log/compile_graphs.JOB.log \
    compile-train-graphs.py --read-disambig-syms=$lang/phones/disambig.int $dir/tree $dir/0.mdl \
      $lang/L.fst "ark:sym2int.pl --map-oov $oov_sym -f 2- $lang/words.txt < $sdata/JOB/text|" \
      "ark:|gzip -c >$dir/fsts.JOB.gz"
  cat $dir/log/compile_graphs.*.log | grep -h 'replacing\|Replaced' || true
fi

if [ $stage -le -1 ]; then
  echo "$0: Aligning data equally (pass 0)"
  t0=$(now)
  $cmd JOB=1:$nj $dir/log/align.0.JOB.log \
    align-equal-compiled.py "ark:gunzip -c $dir/fsts.JOB.gz|" "$feats" ark:- \| \
    gmm-acc-stats-ali.py $dir/0.mdl "$feats" ark:- $dir/0.JOB.acc
  echo $t0 > $dir/.pass0_start
fi

# The --min-gaussian-occupancy=3 of the first update matters: without it rare phones are not
# estimated and never align properly later (Kaldi's comment).
if [ $stage -le 0 ]; then
  t0=$(cat $dir/.pass0_start 2>/dev/null || now)
  $cmd $dir/log/update.0.log \
    gmm-est.py --min-gaussian-occupancy=3 --mix-up=$numgauss --power=$power \
      $dir/0.mdl "gmm-sum-accs.py - $dir/0.*.acc|" $dir/1.mdl
  rm -f $dir/0.*.acc $dir/.pass0_start
  sed -i '/^pass 0:/d' $dir/log/summary.log 2>/dev/null || true
  summarize 0 $t0
fi

beam=$initial_beam
x=1
while [ $x -lt $num_iters ]; do
  if [ $stage -le $x ]; then
    echo "$0: Pass $x"
    t0=$(now)
    if echo $realign_iters | grep -w $x >/dev/null; then
      echo "$0: Aligning data"
      mdl=$dir/$x.mdl
      if [ "$boost_silence" != 1.0 ] && [ "$boost_silence" != 1 ]; then
        mdl="gmm-boost-silence.py --boost=$boost_silence $sil_phones $dir/$x.mdl - |"
      fi
      $cmd JOB=1:$nj $dir/log/align.$x.JOB.log \
        gmm-align-compiled.py $scale_opts --beam=$beam --retry-beam=$((beam * 4)) \
          --careful=$careful "$mdl" "ark:gunzip -c $dir/fsts.JOB.gz|" "$feats" \
          "ark:|gzip -c >$dir/ali.JOB.gz"
    fi
    $cmd JOB=1:$nj $dir/log/acc.$x.JOB.log \
      gmm-acc-stats-ali.py $dir/$x.mdl "$feats" "ark:gunzip -c $dir/ali.JOB.gz|" $dir/$x.JOB.acc
    $cmd $dir/log/update.$x.log \
      gmm-est.py --write-occs=$dir/$((x+1)).occs --mix-up=$numgauss --power=$power \
        $dir/$x.mdl "gmm-sum-accs.py - $dir/$x.*.acc|" $dir/$((x+1)).mdl
    rm -f $dir/$x.*.acc
    sed -i "/^pass $x:/d" $dir/log/summary.log 2>/dev/null || true
    summarize $x $t0
  fi
  if [ $x -le $max_iter_inc ]; then
    numgauss=$((numgauss + incgauss))
  fi
  beam=$regular_beam
  x=$((x + 1))
done

( cd $dir; rm -f final.mdl final.occs; ln -s $x.mdl final.mdl; [ -f $x.occs ] && ln -s $x.occs final.occs || true )

failed=$(grep -h 'failed [0-9]*' $dir/log/summary.log | tail -n 1 | sed 's/.*failed \([0-9]*\).*/\1/')
echo "$0: done training the monophone system in $dir ($num_iters passes; final.mdl -> $x.mdl;" \
     "${failed:-0} utterances failed to align in the last alignment pass; see $dir/log/summary.log)"
