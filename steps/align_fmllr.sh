#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Aligns a data directory with a speaker-adapted (SAT) GMM system, as Kaldi's
# steps/align_fmllr.sh: a first alignment with the alignment model (final.alimdl) on the
# speaker-independent features, per-speaker fMLLR transforms estimated from it, and the final
# alignment with final.mdl on the adapted features. Run from the recipe directory. Writes
# <align-dir>/{ali.JOB.gz,trans.JOB,final.mdl,final.alimdl,tree,num_jobs}: the alignments and
# transforms the DNN stages (and steps/nnet/make_fmllr_feats.sh) read.

# Begin configuration section.
nj=4                  # number of parallel jobs
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
stage=0               # 0 graphs, 1 first alignment, 2 fMLLR, 3 final alignment
use_graphs=false      # if true, use <src-dir>/fsts.JOB.gz (needs the same --nj as <src-dir>)
scale_opts="--transition-scale=1.0 --acoustic-scale=0.1 --self-loop-scale=0.1"  # alignment scales
beam=10               # alignment beam
retry_beam=40         # beam of the second try for an utterance that did not reach a final state
careful=false         # if true, 'careful' alignment (gmm-align-compiled --careful)
boost_silence=1.0     # factor by which to boost silence likelihoods in alignment
fmllr_update_type=full  # gmm-est-fmllr --fmllr-update-type (full|diag|offset|none)
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 4 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <data-dir> <lang-dir> <src-dir> <align-dir>
 e.g.: $0 data/train data/lang exp/tri3 exp/tri3_ali
main options (for others, see top of script file)
  --nj <nj>                             # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>        # how to run jobs (default: $cmd)
  --beam <beam>                         # alignment beam (default: $beam)
  --retry-beam <beam>                   # beam of the second try (default: $retry_beam)
  --boost-silence <factor>              # boost of silence likelihoods (default: $boost_silence)
  --fmllr-update-type <type>            # full|diag|offset|none (default: $fmllr_update_type)
  --use-graphs <true|false>             # use the training graphs of <src-dir> (default: $use_graphs)
  --stage <stage>                       # stage to (re)start from (default: $stage)
EOF
  exit 1
fi

data=$1
lang=$2
srcdir=$3
dir=$4

for f in $data/text $data/feats.scp $data/cmvn.scp $data/utt2spk $data/spk2utt $lang/oov.int \
         $lang/L.fst $lang/words.txt $lang/phones.txt $lang/phones/optional_silence.csl \
         $lang/phones/silence.csl $srcdir/tree $srcdir/final.mdl; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
. utils/check_align_logs.sh  # check_align_logs
oov=$(cat $lang/oov.int)
silphonelist=$(cat $lang/phones/silence.csl)
mkdir -p $dir/log
echo $nj > $dir/num_jobs
sdata=$data/split$nj
[[ -d $sdata && $data/feats.scp -ot $sdata ]] || utils/split_data.sh $data $nj

if ! cmp -s $lang/phones.txt $srcdir/phones.txt 2>/dev/null && [ -f $srcdir/phones.txt ]; then
  echo "$0: $lang/phones.txt and $srcdir/phones.txt differ (the lang and the model do not match)" >&2
  exit 1
fi
cp $lang/phones.txt $dir
cp $srcdir/tree $dir
cp -L $srcdir/final.mdl $dir/final.mdl
rm -f $dir/final.alimdl
[ -f $srcdir/final.alimdl ] && cp -L $srcdir/final.alimdl $dir/final.alimdl
[ -f $srcdir/final.occs ] && cp -L $srcdir/final.occs $dir/final.occs
for f in cmvn_opts delta_opts splice_opts final.mat full.mat; do
  rm -f $dir/$f
  [ -f $srcdir/$f ] && cp -L $srcdir/$f $dir/$f
done

export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# speaker-independent features (the model's deltas or LDA+MLLT), and the same with trans.JOB
steps/make_feature_pipelines.sh --gmm-dir $dir $data $nj $dir/si >/dev/null
sifeats="pipeline:$dir/si/feats.JOB.json"
feats="pipeline:$dir/feats.JOB.json"

# The alignment model (final.alimdl of train_sat.sh) aligns the speaker-independent features.
mdl=$dir/final.mdl
alimdl=$mdl
[ -f $dir/final.alimdl ] && alimdl=$dir/final.alimdl
sil=$(cat $lang/phones/optional_silence.csl)
alimdl_cmd="gmm-boost-silence.py --boost=$boost_silence $sil $alimdl - |"
mdl_cmd="gmm-boost-silence.py --boost=$boost_silence $sil $mdl - |"

if $use_graphs; then
  [ "$nj" == "$(cat $srcdir/num_jobs)" ] || \
    { echo "$0: --nj $nj differs from $srcdir/num_jobs ($(cat $srcdir/num_jobs))" >&2; exit 1; }
  [ -f $srcdir/fsts.1.gz ] || { echo "$0: no such file $srcdir/fsts.1.gz" >&2; exit 1; }
  graphdir=$srcdir
else
  graphdir=$dir
  if [ $stage -le 0 ]; then
    echo "$0: compiling training graphs"
    tra="ark:sym2int.pl --map-oov $oov -f 2- $lang/words.txt $sdata/JOB/text|"
    $cmd JOB=1:$nj $dir/log/compile_graphs.JOB.log \
      compile-train-graphs.py --read-disambig-syms=$lang/phones/disambig.int $dir/tree \
        $dir/final.mdl $lang/L.fst "$tra" "ark:|gzip -c >$dir/fsts.JOB.gz"
  fi
fi

job_failed=false
if [ $stage -le 1 ]; then
  echo "$0: aligning data in $data using $alimdl and speaker-independent features"
  $cmd JOB=1:$nj $dir/log/align_pass1.JOB.log \
    gmm-align-compiled.py $scale_opts --beam=$beam --retry-beam=$retry_beam --careful=$careful \
      "$alimdl_cmd" "ark:gunzip -c $graphdir/fsts.JOB.gz|" "$sifeats" \
      "ark:|gzip -c >$dir/pre_ali.JOB.gz" || job_failed=true
fi

if [ $stage -le 2 ]; then
  echo "$0: computing fMLLR transforms"
  if [ "$alimdl" != "$mdl" ]; then
    # Gaussian-level posteriors from the alignment model, statistics for the final model
    $cmd JOB=1:$nj $dir/log/fmllr.JOB.log \
      ali-to-post.py "ark:gunzip -c $dir/pre_ali.JOB.gz|" ark:- \| \
      weight-silence-post.py 0.0 $silphonelist $alimdl ark:- ark:- \| \
      gmm-post-to-gpost.py $alimdl "$sifeats" ark:- ark:- \| \
      gmm-est-fmllr-gpost.py --fmllr-update-type=$fmllr_update_type \
        --spk2utt=ark:$sdata/JOB/spk2utt $mdl "$sifeats" ark:- ark:$dir/trans.JOB
  else
    $cmd JOB=1:$nj $dir/log/fmllr.JOB.log \
      ali-to-post.py "ark:gunzip -c $dir/pre_ali.JOB.gz|" ark:- \| \
      weight-silence-post.py 0.0 $silphonelist $alimdl ark:- ark:- \| \
      gmm-est-fmllr.py --fmllr-update-type=$fmllr_update_type \
        --spk2utt=ark:$sdata/JOB/spk2utt $mdl "$sifeats" ark:- ark:$dir/trans.JOB
  fi
fi
steps/make_feature_pipelines.sh --gmm-dir $dir --transform-dir $dir $data $nj $dir >/dev/null

if [ $stage -le 3 ]; then
  echo "$0: doing final alignment"
  $cmd JOB=1:$nj $dir/log/align_pass2.JOB.log \
    gmm-align-compiled.py $scale_opts --beam=$beam --retry-beam=$retry_beam --careful=$careful \
      "$mdl_cmd" "ark:gunzip -c $graphdir/fsts.JOB.gz|" "$feats" "ark:|gzip -c >$dir/ali.JOB.gz" \
    || job_failed=true
  check_align_logs align_pass2  # failure counts into $dir/num_failed
fi
rm -f $dir/pre_ali.*.gz

echo "$0: done aligning data, alignments in $dir/ali.{1..$nj}.gz, transforms in $dir/trans.{1..$nj}"
