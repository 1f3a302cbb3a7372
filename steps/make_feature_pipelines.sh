#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Writes one feature pipeline per job of a split data directory (<data>/split<nj>/<n>):
# <dir>/feats.<n>.json, which the job's tools read as pipeline:<dir>/feats.JOB.json. The GMM
# scripts and steps/nnet/decode.sh describe their feature chain once with it: CMVN, then deltas
# or splicing and an LDA/MLLT matrix, then per-speaker fMLLR transforms (Kaldi's trans.JOB).

# Begin configuration section.
cmvn_opts=      # options of apply-cmvn.py (empty: no CMVN)
delta_opts=     # options of add-deltas.py (empty: no deltas)
splice_opts=    # options of splice-feats.py (empty: no splicing)
transform=      # global transform after splicing, e.g. exp/tri2/final.mat (empty: none)
transform_dir=  # directory with per-speaker transforms trans.<n> (fMLLR; empty: none)
opts_from=      # take cmvn_opts, delta_opts, splice_opts and final.mat from this (model) directory
gmm_dir=        # the features of this GMM directory as Kaldi's scripts make them (see below)
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <data-dir> <num-jobs> <out-dir>
 e.g.: $0 --cmvn-opts "--norm-means=true" --delta-opts "--delta-order=2" data/train 4 exp/mono
main options
  --cmvn-opts <string>   # options of apply-cmvn.py (empty: no CMVN)
  --delta-opts <string>  # options of add-deltas.py (empty: no deltas)
  --splice-opts <string> # options of splice-feats.py (empty: no splicing)
  --transform <file>     # global transform after splicing, e.g. exp/tri2/final.mat
  --transform-dir <dir>  # per-speaker transforms <dir>/trans.<n> (fMLLR), applied last
  --opts-from <dir>      # the cmvn_opts, delta_opts, splice_opts and final.mat of this directory
  --gmm-dir <dir>        # as Kaldi's GMM scripts: CMVN (cmvn_opts, default --norm-means=true), then
                         # LDA if <dir>/final.mat exists (splice_opts, default ±4 frames, then
                         # final.mat), else deltas (delta_opts, default --delta-order=2)
EOT
  exit 1
fi

data=$1
nj=$2
dir=$3
sdata=$data/split$nj
[ -d $sdata/1 ] || { echo "$0: no such directory $sdata/1 (run utils/split_data.sh $data $nj)" >&2; exit 1; }
mkdir -p $dir/log
# The transforms of job n: trans.<n> when <transform-dir> was split as this data (its num_jobs
# is $nj), else all of its trans.* (Kaldi's align_fmllr.sh and decode_fmllr.sh do the same).
if [ -n "$transform_dir" ] && [ ! -f $transform_dir/trans.1 ]; then
  echo "$0: no such file $transform_dir/trans.1" >&2; exit 1
fi
trans_of() {
  [ -n "$transform_dir" ] || return 0
  if [ "$(cat $transform_dir/num_jobs 2>/dev/null)" == "$nj" ]; then
    echo "ark:$transform_dir/trans.$1"
  else
    echo "ark:cat $transform_dir/trans.*|"
  fi
}
for n in $(seq $nj); do
  if [ -n "$opts_from$gmm_dir" ]; then
    make-feature-pipeline.py --print-args=false --opts-from="$opts_from" --gmm-dir="$gmm_dir" \
      --spk-transforms="$(trans_of $n)" $sdata/$n $dir/feats.$n.json \
      2>$dir/log/feats_pipeline.$n.log
  else
    make-feature-pipeline.py --print-args=false --cmvn-opts="$cmvn_opts" --delta-opts="$delta_opts" \
      --splice-opts="$splice_opts" --transform="$transform" --spk-transforms="$(trans_of $n)" \
      $sdata/$n $dir/feats.$n.json 2>$dir/log/feats_pipeline.$n.log
  fi || { echo "$0: writing the feature pipeline failed, see $dir/log/feats_pipeline.$n.log" >&2; exit 1; }
done
