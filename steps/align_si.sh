#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Aligns a data directory with a speaker-independent GMM system (delta or LDA+MLLT features), as Kaldi's
# steps/align_si.sh: training graphs from the transcripts, then gmm-align-compiled, in $nj jobs.
# Run from the recipe directory. Writes <align-dir>/{ali.JOB.gz,final.mdl,tree,num_jobs}.

# Begin configuration section.
nj=4                  # number of parallel jobs
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
use_graphs=false      # if true, use <src-dir>/fsts.JOB.gz (needs the same --nj as <src-dir>)
scale_opts="--transition-scale=1.0 --acoustic-scale=0.1 --self-loop-scale=0.1"  # alignment scales
beam=10               # alignment beam
retry_beam=40         # beam of the second try for an utterance that did not reach a final state
careful=false         # if true, 'careful' alignment (gmm-align-compiled --careful)
boost_silence=1.0     # factor by which to boost silence likelihoods in alignment
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 4 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <data-dir> <lang-dir> <src-dir> <align-dir>
 e.g.: $0 data/train data/lang exp/mono exp/mono_ali
main options (for others, see top of script file)
  --nj <nj>                             # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>        # how to run jobs (default: $cmd)
  --beam <beam>                         # alignment beam (default: $beam)
  --retry-beam <beam>                   # beam of the second try (default: $retry_beam)
  --boost-silence <factor>              # boost of silence likelihoods (default: $boost_silence)
  --use-graphs <true|false>             # use the training graphs of <src-dir> (default: $use_graphs)
EOF
  exit 1
fi

data=$1
lang=$2
srcdir=$3
dir=$4

for f in $data/text $data/feats.scp $data/cmvn.scp $data/utt2spk $lang/oov.int $lang/L.fst \
         $lang/words.txt $lang/phones.txt $lang/phones/optional_silence.csl \
         $srcdir/tree $srcdir/final.mdl; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
if [ -f $dir/.done ] && [ "$(cat $dir/num_jobs 2>/dev/null)" == "$nj" ] && \
   [ $dir/.done -nt $srcdir/final.mdl ] && [ $dir/.done -nt $data/feats.scp ]; then
  echo "$0: $dir/ali.*.gz exist and are newer than $srcdir/final.mdl, skipping"
  exit 0
fi
rm -f $dir/.done

. utils/check_align_logs.sh  # check_align_logs
oov=$(cat $lang/oov.int)
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
[ -f $srcdir/final.occs ] && cp -L $srcdir/final.occs $dir/final.occs
for f in cmvn_opts delta_opts splice_opts final.mat full.mat; do
  rm -f $dir/$f
  [ -f $srcdir/$f ] && cp -L $srcdir/$f $dir/$f
done

# One BLAS thread per job (see bin/gmm-align-compiled.py): parallelism comes from the jobs.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# each job's feature chain: the model's (deltas, or LDA+MLLT with final.mat), as Kaldi's
steps/make_feature_pipelines.sh --gmm-dir $dir $data $nj $dir >/dev/null
feats="pipeline:$dir/feats.JOB.json"

mdl=$dir/final.mdl
if [ "$boost_silence" != 1.0 ] && [ "$boost_silence" != 1 ]; then
  mdl="gmm-boost-silence.py --boost=$boost_silence $(cat $lang/phones/optional_silence.csl) $dir/final.mdl - |"
fi

echo "$0: aligning data in $data using model from $srcdir, putting alignments in $dir"
rm -f $dir/ali.*.gz
job_failed=false
if $use_graphs; then
  [ "$nj" == "$(cat $srcdir/num_jobs)" ] || \
    { echo "$0: --nj $nj differs from $srcdir/num_jobs ($(cat $srcdir/num_jobs))" >&2; exit 1; }
  [ -f $srcdir/fsts.1.gz ] || { echo "$0: no such file $srcdir/fsts.1.gz" >&2; exit 1; }
  $cmd JOB=1:$nj $dir/log/align.JOB.log \
    gmm-align-compiled.py $scale_opts --beam=$beam --retry-beam=$retry_beam --careful=$careful \
      "$mdl" "ark:gunzip -c $srcdir/fsts.JOB.gz|" "$feats" "ark:|gzip -c >$dir/ali.JOB.gz" \
    || job_failed=true
else
  tra="ark:sym2int.pl --map-oov $oov -f 2- $lang/words.txt $sdata/JOB/text|"
  $cmd JOB=1:$nj $dir/log/align.JOB.log \
    compile-train-graphs.py --read-disambig-syms=$lang/phones/disambig.int $dir/tree \
      $dir/final.mdl $lang/L.fst "$tra" ark:- \| \
    gmm-align-compiled.py $scale_opts --beam=$beam --retry-beam=$retry_beam --careful=$careful \
      "$mdl" ark:- "$feats" "ark:|gzip -c >$dir/ali.JOB.gz" \
    || job_failed=true
fi

check_align_logs align  # failure counts into $dir/num_failed; exits when nothing aligned

touch $dir/.done
echo "$0: done aligning data, alignments in $dir/ali.{1..$nj}.gz"
