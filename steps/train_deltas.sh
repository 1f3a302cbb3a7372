#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Triphone GMM-HMM training on delta features (Kaldi's tri1), as Kaldi's steps/train_deltas.sh:
# tree statistics from the alignments of <ali-dir>, questions by phone clustering plus
# extra_questions, a decision tree with <num-leaves> leaves, a model from the tree statistics,
# the alignments converted to it, then passes of accumulation, update and mixing up to
# <tot-gauss> Gaussians with realignment on $realign_iters. Run from the recipe directory.
# Writes <exp-dir>/{1..num_iters}.mdl, final.mdl, tree, questions.qst, fsts.JOB.gz, ali.JOB.gz
# and log/, with one line per pass in log/summary.log.

# Begin configuration section.
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
stage=-4              # stage to start from (-3 tree stats, -2 tree, -1 convert, 0 graphs, 1.. passes)
scale_opts="--transition-scale=1.0 --acoustic-scale=0.1 --self-loop-scale=0.1"  # alignment scales
realign_iters="10 20 30"  # passes that realign
num_iters=35          # number of training passes
max_iter_inc=25       # last pass to increase the number of Gaussians on
beam=10               # alignment beam
retry_beam=40         # beam of the second try
careful=false         # if true, 'careful' alignment (gmm-align-compiled --careful)
boost_silence=1.0     # factor by which to boost silence likelihoods in alignment
power=0.25            # exponent to determine the number of Gaussians from occupation counts
cluster_thresh=-1     # build-tree --cluster-thresh (-1: as --thresh)
norm_vars=false       # deprecated, prefer --cmvn-opts "--norm-vars=false"
cmvn_opts=            # options to apply-cmvn.py (default: those of <ali-dir>)
delta_opts=           # options to add-deltas.py (default: those of <ali-dir>, else Kaldi's)
context_opts=         # e.g. "--context-width=5 --central-position=2" for quinphones
questions_opts=       # compile-questions.py options, e.g. "--context-positions=0,1" (no right context)
config=               # name of config file
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 6 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <num-leaves> <tot-gauss> <data-dir> <lang-dir> <ali-dir> <exp-dir>
 e.g.: $0 2000 10000 data/train data/lang exp/mono_ali exp/tri1
main options (for others, see top of script file)
  --cmd <utils/run.py|queue cmd>        # how to run jobs (default: $cmd)
  --num-iters <n>                       # number of training passes (default: $num_iters)
  --realign-iters <"n n ...">           # passes that realign (default: "$realign_iters")
  --boost-silence <factor>              # boost of silence likelihoods in alignment (default: $boost_silence)
  --context-opts <opts>                 # tree context, e.g. "--context-width=5 --central-position=2"
  --cluster-thresh <t>                  # build-tree --cluster-thresh (default: $cluster_thresh)
  --stage <stage>                       # stage to (re)start from (default: $stage)
EOF
  exit 1
fi

numleaves=$1
totgauss=$2
data=$3
lang=$4
alidir=$5
dir=$6

for f in $alidir/final.mdl $alidir/ali.1.gz $data/feats.scp $data/cmvn.scp $data/text \
         $data/utt2spk $lang/phones.txt $lang/topo $lang/L.fst $lang/oov.int \
         $lang/phones/context_indep.csl $lang/phones/sets.int $lang/phones/roots.int \
         $lang/phones/extra_questions.int $lang/phones/disambig.int \
         $lang/phones/optional_silence.csl; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
if ! cmp -s $lang/phones.txt $alidir/phones.txt && [ -f $alidir/phones.txt ]; then
  echo "$0: $lang/phones.txt and $alidir/phones.txt differ (the lang and the alignments do not match)" >&2
  exit 1
fi

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
if [ $stage -le -4 ] && [ -f $dir/final.mdl ]; then
  echo "$0: $dir/final.mdl exists, skipping (remove it, or use --stage N, to train again)"
  exit 0
fi

numgauss=$numleaves
incgauss=$(( (totgauss - numgauss) / max_iter_inc ))  # per-pass increase of #Gauss
oov=$(cat $lang/oov.int)
ciphonelist=$(cat $lang/phones/context_indep.csl)
nj=$(cat $alidir/num_jobs)  # the alignments are split as <ali-dir>'s data
mkdir -p $dir/log
echo $nj > $dir/num_jobs
sdata=$data/split$nj
[[ -d $sdata && $data/feats.scp -ot $sdata ]] || utils/split_data.sh $data $nj
cp $lang/phones.txt $dir

# The feature options: given, else <ali-dir>'s (Kaldi keeps them in the directories).
[ -n "$cmvn_opts" ] || cmvn_opts=$(cat $alidir/cmvn_opts 2>/dev/null || true)
[ -n "$delta_opts" ] || delta_opts=$(cat $alidir/delta_opts 2>/dev/null || true)
$norm_vars && cmvn_opts="--norm-vars=true $cmvn_opts"
echo "$cmvn_opts" > $dir/cmvn_opts
echo "$delta_opts" > $dir/delta_opts
echo "$context_opts" > $dir/context_opts

export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
steps/make_feature_pipelines.sh --cmvn-opts "${cmvn_opts:---norm-means=true}" \
  --delta-opts "${delta_opts:---delta-order=2}" $data $nj $dir >/dev/null
feats="pipeline:$dir/feats.JOB.json"

. utils/gmm_pass_summary.sh  # now, summarize: one line per pass in $dir/log/summary.log
. utils/gmm_triphone_stages.sh  # the tree, model, graph and pass stages shared by tri1-tri3
[ $stage -le -4 ] && rm -f $dir/log/summary.log

if [ $stage -le -3 ]; then
  tree_stats
fi

if [ $stage -le -2 ]; then
  tree_and_model
fi

if [ $stage -le -1 ]; then
  convert_alignments
fi

if [ $stage -le 0 ]; then
  compile_graphs
fi

x=1
while [ $x -lt $num_iters ]; do
  if [ $stage -le $x ]; then
    echo "$0: training pass $x"
    t0=$(now)
    if echo $realign_iters | grep -w $x >/dev/null; then
      realign $x
    fi
    acc_and_update $x $t0
  fi
  [ $x -le $max_iter_inc ] && numgauss=$((numgauss + incgauss))
  x=$((x + 1))
done

( cd $dir; rm -f final.mdl final.occs; ln -s $x.mdl final.mdl; ln -s $x.occs final.occs )

training_done "triphone" $x
