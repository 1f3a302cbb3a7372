#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Speaker-adaptive training with fMLLR (Kaldi's tri3), as Kaldi's steps/train_sat.sh: on the
# speaker-independent features of <ali-dir> (LDA+MLLT when it has final.mat, else deltas),
# per-speaker fMLLR transforms (from <ali-dir>'s trans.* when it has them, else estimated from
# its alignments), a tree and model as in train_deltas.sh on the adapted features, and on the
# passes in $fmllr_iters new transforms estimated and composed with the old. Last, the
# alignment model final.alimdl: the final model's Gaussians re-estimated on the
# speaker-independent features (decode_fmllr.sh's first pass). Run from the recipe directory.
# Writes <exp-dir>/final.mdl, final.alimdl, trans.JOB (per-speaker d x (d+1) matrices, Kaldi's
# format), final.mat (copied), tree, ali.JOB.gz and log/.

# Begin configuration section.
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
stage=-5              # stage to start from (-5 fMLLR, -4 tree stats, -3 tree, -2 convert, -1 graphs, 1.. passes)
scale_opts="--transition-scale=1.0 --acoustic-scale=0.1 --self-loop-scale=0.1"  # alignment scales
realign_iters="10 20 30"  # passes that realign
fmllr_iters="2 4 6 12"    # passes that estimate fMLLR transforms
fmllr_update_type=full    # gmm-est-fmllr --fmllr-update-type (full|diag|offset|none)
silence_weight=0.0        # weight of silence frames in fMLLR estimation
num_iters=35          # number of training passes
max_iter_inc=25       # last pass to increase the number of Gaussians on
beam=10               # alignment beam
retry_beam=40         # beam of the second try
careful=false         # if true, 'careful' alignment (gmm-align-compiled --careful)
boost_silence=1.0     # factor by which to boost silence likelihoods in alignment
power=0.2             # exponent to determine the number of Gaussians from occupation counts
cluster_thresh=-1     # build-tree --cluster-thresh (-1: as --thresh)
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
 e.g.: $0 2500 15000 data/train data/lang exp/tri2_ali exp/tri3
main options (for others, see top of script file)
  --cmd <utils/run.py|queue cmd>        # how to run jobs (default: $cmd)
  --num-iters <n>                       # number of training passes (default: $num_iters)
  --realign-iters <"n n ...">           # passes that realign (default: "$realign_iters")
  --fmllr-iters <"n n ...">             # passes that estimate fMLLR (default: "$fmllr_iters")
  --fmllr-update-type <type>            # full|diag|offset|none (default: $fmllr_update_type)
  --silence-weight <w>                  # weight of silence frames in fMLLR (default: $silence_weight)
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

# The speaker-independent features are <ali-dir>'s: its cmvn_opts, and LDA (splice_opts and
# final.mat) when it has final.mat, else delta_opts (Kaldi's feat_type).
for f in cmvn_opts delta_opts splice_opts final.mat full.mat; do
  rm -f $dir/$f
  [ -f $alidir/$f ] && cp -L $alidir/$f $dir/$f
done
echo "$context_opts" > $dir/context_opts
if [ -f $dir/final.mat ]; then
  echo "$0: speaker-independent features: LDA+MLLT ($alidir/final.mat)"
else
  echo "$0: speaker-independent features: deltas"
fi

export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
steps/make_feature_pipelines.sh --gmm-dir $dir $data $nj $dir/si >/dev/null
sifeats="pipeline:$dir/si/feats.JOB.json"
use_transforms() {  # the pass features go through <dir>/trans.JOB from now on
  steps/make_feature_pipelines.sh --gmm-dir $dir --transform-dir $1 $data $nj $dir >/dev/null
}
feats="pipeline:$dir/feats.JOB.json"

. utils/gmm_pass_summary.sh  # now, summarize: one line per pass in $dir/log/summary.log
. utils/gmm_triphone_stages.sh  # the tree, model, graph and pass stages shared by tri1-tri3
[ $stage -le -5 ] && rm -f $dir/log/summary.log

# Initial fMLLR transforms: <ali-dir>'s, else estimated from its alignments; after a pass of
# $fmllr_iters before --stage, the composed ones in <exp-dir>.
if [ -f $alidir/trans.1 ]; then
  echo "$0: using transforms from $alidir"
  cur_trans_dir=$alidir
else
  if [ $stage -le -5 ]; then
    echo "$0: obtaining initial fMLLR transforms since not present in $alidir"
    $cmd JOB=1:$nj $dir/log/fmllr.0.JOB.log \
      ali-to-post.py "ark:gunzip -c $alidir/ali.JOB.gz|" ark:- \| \
      weight-silence-post.py $silence_weight $silphonelist $alidir/final.mdl ark:- ark:- \| \
      gmm-est-fmllr.py --fmllr-update-type=$fmllr_update_type --spk2utt=ark:$sdata/JOB/spk2utt \
        $alidir/final.mdl "$sifeats" ark:- ark:$dir/trans.JOB
  fi
  cur_trans_dir=$dir
fi
for x in $fmllr_iters; do
  [ $x -lt $stage ] && cur_trans_dir=$dir
done
use_transforms $cur_trans_dir

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
    if echo $fmllr_iters | grep -w $x >/dev/null; then
      echo "$0: estimating fMLLR transforms"
      # a transform on top of the current one; the two are composed
      $cmd JOB=1:$nj $dir/log/fmllr.$x.JOB.log \
        ali-to-post.py "ark:gunzip -c $dir/ali.JOB.gz|" ark:- \| \
        weight-silence-post.py $silence_weight $silphonelist $dir/$x.mdl ark:- ark:- \| \
        gmm-est-fmllr.py --fmllr-update-type=$fmllr_update_type --spk2utt=ark:$sdata/JOB/spk2utt \
          $dir/$x.mdl "$feats" ark:- ark:$dir/tmp_trans.JOB
      for n in $(seq $nj); do
        compose-transforms.py --b-is-affine=true ark:$dir/tmp_trans.$n \
          ark:$cur_trans_dir/trans.$n ark:$dir/composed_trans.$n 2>$dir/log/compose_transforms.$x.$n.log \
          || { echo "$0: error composing transforms, see $dir/log/compose_transforms.$x.$n.log" >&2; exit 1; }
        mv $dir/composed_trans.$n $dir/trans.$n
        rm $dir/tmp_trans.$n
      done
      cur_trans_dir=$dir
      use_transforms $dir
    fi
    acc_and_update $x $t0
  fi
  [ $x -le $max_iter_inc ] && numgauss=$((numgauss + incgauss))
  x=$((x + 1))
done

if [ $stage -le $x ]; then
  # The alignment model: the final model's Gaussians, with statistics of the speaker-independent
  # features under the posteriors of the adapted ones (Gaussian for Gaussian the same model).
  echo "$0: estimating the alignment model (final.alimdl)"
  $cmd JOB=1:$nj $dir/log/acc_alimdl.JOB.log \
    ali-to-post.py "ark:gunzip -c $dir/ali.JOB.gz|" ark:- \| \
    gmm-acc-stats-twofeats.py $dir/$x.mdl "$feats" "$sifeats" ark:- $dir/$x.JOB.acc
  $cmd $dir/log/est_alimdl.log \
    gmm-est.py --power=$power --remove-low-count-gaussians=false $dir/$x.mdl \
      "gmm-sum-accs.py - $dir/$x.*.acc|" $dir/$x.alimdl
  rm $dir/$x.*.acc
fi

( cd $dir; rm -f final.mdl final.occs final.alimdl; ln -s $x.mdl final.mdl; ln -s $x.occs final.occs
  ln -s $x.alimdl final.alimdl )

training_done "SAT triphone" $x
