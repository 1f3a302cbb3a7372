#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Writes one feature pipeline per job of a split data directory (<data>/split<nj>/<n>):
# <dir>/feats.<n>.json, which the job's tools read as pipeline:<dir>/feats.JOB.json. The GMM
# scripts and steps/nnet/decode.sh describe their feature chain once with it.

# Begin configuration section.
cmvn_opts=      # options of apply-cmvn.py (empty: no CMVN)
delta_opts=     # options of add-deltas.py (empty: no deltas)
opts_from=      # take cmvn_opts and delta_opts from this (model) directory's files instead
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
  --opts-from <dir>      # the cmvn_opts and delta_opts files of this directory instead
EOT
  exit 1
fi

data=$1
nj=$2
dir=$3
sdata=$data/split$nj
[ -d $sdata/1 ] || { echo "$0: no such directory $sdata/1 (run utils/split_data.sh $data $nj)" >&2; exit 1; }
mkdir -p $dir/log
for n in $(seq $nj); do
  if [ -n "$opts_from" ]; then
    make-feature-pipeline.py --print-args=false --opts-from=$opts_from $sdata/$n $dir/feats.$n.json \
      2>$dir/log/feats_pipeline.$n.log
  else
    make-feature-pipeline.py --print-args=false --cmvn-opts="$cmvn_opts" --delta-opts="$delta_opts" \
      $sdata/$n $dir/feats.$n.json 2>$dir/log/feats_pipeline.$n.log
  fi || { echo "$0: writing the feature pipeline failed, see $dir/log/feats_pipeline.$n.log" >&2; exit 1; }
done
