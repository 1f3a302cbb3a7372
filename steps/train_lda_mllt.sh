#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Triphone GMM-HMM training on LDA+MLLT features (Kaldi's tri2), as Kaldi's
# steps/train_lda_mllt.sh: spliced frames (±3 by default) are projected to $dim dimensions by LDA
# estimated on the pdfs of <ali-dir>'s alignments (silence left out), a tree is built on them as
# in train_deltas.sh, and on the passes in $mllt_iters an MLLT (semi-tied covariance) transform is
# estimated, composed into the feature transform and applied to the model's means. Run from the
# recipe directory. Writes <exp-dir>/final.mdl, final.mat (the composed LDA+MLLT transform, used
# by every later script through splice_opts and final.mat), full.mat, tree, ali.JOB.gz and log/.

# Begin configuration section.
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
stage=-5              # stage to start from (-5 LDA, -4 tree stats, -3 tree, -2 convert, -1 graphs, 1.. passes)
scale_opts="--transition-scale=1.0 --acoustic-scale=0.1 --self-loop-scale=0.1"  # alignment scales
realign_iters="10 20 30"  # passes that realign
mllt_iters="2 4 6 12" # passes that estimate MLLT
dim=40                # dimension after LDA
randprune=4.0         # acc-lda and gmm-acc-mllt --rand-prune (speeds up accumulation)
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
splice_opts=          # options to splice-feats.py (default: <ali-dir>'s, else ±3 frames)
context_opts=         # e.g. "--context-width=5 --central-position=2" for quinphones
config=               # name of config file
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 6 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <num-leaves> <tot-gauss> <data-dir> <lang-dir> <ali-dir> <exp-dir>
 e.g.: $0 2500 15000 data/train data/lang exp/tri1_ali exp/tri2
main options (for others, see top of script file)
  --cmd <utils/run.py|queue cmd>        # how to run jobs (default: $cmd)
  --num-iters <n>                       # number of training passes (default: $num_iters)
  --realign-iters <"n n ...">           # passes that realign (default: "$realign_iters")
  --mllt-iters <"n n ...">              # passes that estimate MLLT (default: "$mllt_iters")
  --dim <n>                             # dimension after LDA (default: $dim)
  --splice-opts <opts>                  # splice-feats options (default: "--left-context=3 --right-context=3")
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
         $lang/phones/optional_silence.csl $lang/phones/silence.csl; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
if ! cmp -s $lang/phones.txt $alidir/phones.txt && [ -f $alidir/phones.txt ]; then
  echo "$0: $lang/phones.txt and $alidir/phones.txt differ (the lang and the alignments do not match)" >&2
  exit 1
fi

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
if [ $stage -le -5 ] && [ -f $dir/final.mdl ]; then
  echo "$0: $dir/final.mdl exists, skipping (remove it, or use --stage N, to train again)"
  exit 0
fi

numgauss=$numleaves
incgauss=$(( (totgauss - numgauss) / max_iter_inc ))  # per-pass increase of #Gauss
oov=$(cat $lang/oov.int)
ciphonelist=$(cat $lang/phones/context_indep.csl)
silphonelist=$(cat $lang/phones/silence.csl)
nj=$(cat $alidir/num_jobs)  # the alignments are split as <ali-dir>'s data
mkdir -p $dir/log
echo $nj > $dir/num_jobs
sdata=$data/split$nj
[[ -d $sdata && $data/feats.scp -ot $sdata ]] || utils/split_data.sh $data $nj
cp $lang/phones.txt $dir

# The feature options: given, else <ali-dir>'s (Kaldi keeps them in the directories).
[ -n "$cmvn_opts" ] || cmvn_opts=$(cat $alidir/cmvn_opts 2>/dev/null || true)
[ -n "$splice_opts" ] || splice_opts=$(cat $alidir/splice_opts 2>/dev/null || true)
[ -n "$splice_opts" ] || splice_opts="--left-context=3 --right-context=3"  # Kaldi's wsj/swbd
$norm_vars && cmvn_opts="--norm-vars=true $cmvn_opts"
cmvn_opts=${cmvn_opts:---norm-means=true}
echo "$cmvn_opts" > $dir/cmvn_opts
echo "$splice_opts" > $dir/splice_opts  # keep track of frame-splicing options
echo "$context_opts" > $dir/context_opts
rm -f $dir/delta_opts  # LDA features: no deltas

export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# spliced features (the input of LDA) and the features of pass x (spliced, then <n>.mat)
steps/make_feature_pipelines.sh --cmvn-opts "$cmvn_opts" --splice-opts "$splice_opts" \
  $data $nj $dir/spliced >/dev/null
splicedfeats="pipeline:$dir/spliced/feats.JOB.json"
use_transform() {  # the pass features go through $dir/$1.mat from now on
  steps/make_feature_pipelines.sh --cmvn-opts "$cmvn_opts" --splice-opts "$splice_opts" \
    --transform $dir/$1.mat $data $nj $dir >/dev/null
  cur_lda_iter=$1
}
feats="pipeline:$dir/feats.JOB.json"

. utils/gmm_pass_summary.sh  # now, summarize: one line per pass in $dir/log/summary.log
. utils/gmm_triphone_stages.sh  # the tree, model, graph and pass stages shared by tri1-tri3
[ $stage -le -5 ] && rm -f $dir/log/summary.log

if [ $stage -le -5 ] && [ ! -f $dir/0.mat ]; then
  echo "$0: accumulating LDA statistics"
  $cmd JOB=1:$nj $dir/log/lda_acc.JOB.log \
    ali-to-post.py "ark:gunzip -c $alidir/ali.JOB.gz|" ark:- \| \
    weight-silence-post.py 0.0 $silphonelist $alidir/final.mdl ark:- ark:- \| \
    acc-lda.py --rand-prune=$randprune $alidir/final.mdl "$splicedfeats" ark:- $dir/lda.JOB.acc
  $cmd $dir/log/lda_est.log \
    est-lda.py --write-full-matrix=$dir/full.mat --dim=$dim $dir/0.mat $dir/lda.*.acc
  rm $dir/lda.*.acc
fi
# the transform of the last MLLT pass before --stage (0.mat: LDA only)
cur_lda_iter=0
for x in $mllt_iters; do
  [ $x -lt $stage ] && [ -f $dir/$x.mat ] && cur_lda_iter=$x
done
use_transform $cur_lda_iter

if [ $stage -le -4 ]; then
  tree_stats
fi

if [ $stage -le -3 ]; then
  tree_and_model
fi

if [ $stage -le -2 ]; then
  convert_alignments
fi

if [ $stage -le -1 ]; then
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
    if echo $mllt_iters | grep -w $x >/dev/null; then
      echo "$0: estimating MLLT"
      $cmd JOB=1:$nj $dir/log/macc.$x.JOB.log \
        ali-to-post.py "ark:gunzip -c $dir/ali.JOB.gz|" ark:- \| \
        weight-silence-post.py 0.0 $silphonelist $dir/$x.mdl ark:- ark:- \| \
        gmm-acc-mllt.py --rand-prune=$randprune $dir/$x.mdl "$feats" ark:- $dir/$x.JOB.macc
      $cmd $dir/log/mupdate.$x.log est-mllt.py $dir/$x.mat.new $dir/$x.*.macc
      $cmd $dir/log/transform_means.$x.log \
        gmm-transform-means.py $dir/$x.mat.new $dir/$x.mdl $dir/$x.mdl
      $cmd $dir/log/compose_transforms.$x.log \
        compose-transforms.py $dir/$x.mat.new $dir/$cur_lda_iter.mat $dir/$x.mat
      rm $dir/$x.*.macc $dir/$x.mat.new
      use_transform $x
    fi
    acc_and_update $x $t0
  fi
  [ $x -le $max_iter_inc ] && numgauss=$((numgauss + incgauss))
  x=$((x + 1))
done

( cd $dir; rm -f final.mdl final.occs final.mat; ln -s $x.mdl final.mdl; ln -s $x.occs final.occs
  ln -s $cur_lda_iter.mat final.mat )

training_done "LDA+MLLT triphone" $x
