#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Writes the speaker-adapted features of a SAT GMM system to disk as a new data directory, as
# Kaldi's steps/nnet/make_fmllr_feats.sh (the DNN input of Kaldi's nnet1 Switchboard recipe):
# CMVN, splicing and final.mat of <gmm-dir> (or its deltas), then the per-speaker transforms
# <transform-dir>/trans.* of this data. <tgt-data-dir> gets feats.scp (archives in <fea-dir>)
# and the source's utt2spk, spk2utt, text and the rest; no cmvn.scp (the features are already
# normalised per speaker by the transforms).

# Begin configuration section.
nj=4                  # number of parallel jobs
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
transform_dir=        # directory with trans.* of <src-data-dir> (default: <gmm-dir>)
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 5 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <tgt-data-dir> <src-data-dir> <gmm-dir> <log-dir> <fea-dir>
 e.g.: $0 --transform-dir exp/tri3/decode_test data-fmllr-tri3/test data/test exp/tri3 \\
         data-fmllr-tri3/test/log data-fmllr-tri3/test/data
main options (for others, see top of script file)
  --nj <nj>                        # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>   # how to run jobs (default: $cmd)
  --transform-dir <dir>            # where trans.* of this data are (default: <gmm-dir>)
EOF
  exit 1
fi

data=$1
srcdata=$2
gmmdir=$3
logdir=$4
feadir=$5
[ -n "$transform_dir" ] || transform_dir=$gmmdir

for f in $srcdata/feats.scp $srcdata/cmvn.scp $srcdata/utt2spk $gmmdir/final.mdl \
         $transform_dir/trans.1; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

. utils/lock_dir.sh $data  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
mkdir -p $data $logdir $feadir
feadir=$(cd $feadir; pwd)  # absolute: feats.scp is read from anywhere
sdata=$srcdata/split$nj
[[ -d $sdata && $srcdata/feats.scp -ot $sdata ]] || utils/split_data.sh $srcdata $nj

# the source's files, without its features and CMVN statistics
for f in utt2spk spk2utt text segments wav.scp reco2file_and_channel utt2dur spk2gender stm glm; do
  [ -f $srcdata/$f ] && cp $srcdata/$f $data/$f
done
rm -f $data/feats.scp $data/cmvn.scp

export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
steps/make_feature_pipelines.sh --gmm-dir $gmmdir --transform-dir $transform_dir $srcdata $nj \
  $logdir >/dev/null
name=$(basename $data)
echo "$0: writing the fMLLR features of $srcdata ($gmmdir, transforms of $transform_dir) to $feadir"
$cmd JOB=1:$nj $logdir/make_fmllr_feats.JOB.log \
  copy-feats.py pipeline:$logdir/feats.JOB.json \
    ark,scp:$feadir/feats_fmllr_$name.JOB.ark,$feadir/feats_fmllr_$name.JOB.scp

for n in $(seq $nj); do
  cat $feadir/feats_fmllr_$name.$n.scp
done > $data/feats.scp.tmp
mv $data/feats.scp.tmp $data/feats.scp

n_in=$(wc -l < $srcdata/feats.scp)
n_out=$(wc -l < $data/feats.scp)
[ $n_out -eq $n_in ] || echo "$0: WARNING: $((n_in - n_out)) of $n_in utterances have no fMLLR features (see $logdir)"
echo "$0: done, $n_out utterances of $(feat-to-dim.py --print-args=false scp:$data/feats.scp - 2>/dev/null || echo '?')-dim features in $data"
