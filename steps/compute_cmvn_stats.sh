#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Computes per-speaker CMVN statistics for a data directory with features, writing
# <cmvn-dir>/cmvn_<name>.{ark,scp} and <data-dir>/cmvn.scp, as Kaldi's steps/compute_cmvn_stats.sh.
# Run from the recipe directory. Skips the work when cmvn.scp already covers every speaker.

# Begin configuration section.
fake=false   # if true, write stats that do no normalization (mean 0, variance 1)
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <data-dir> [<log-dir> [<cmvn-dir>] ]
 e.g.: $0 data/train exp/make_mfcc/train mfcc
Note: <log-dir> defaults to <data-dir>/log, and <cmvn-dir> defaults to <data-dir>/data.
Options:
  --fake <true|false>   # fake cmvn stats that do no normalization (default: $fake)
EOF
  exit 1
fi

data=$1
logdir=${2:-$data/log}
cmvndir=${3:-$data/data}
name=$(basename "$data")

for f in $data/feats.scp $data/spk2utt; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done

. utils/lock_dir.sh $data  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
if [ -f $data/cmvn.scp ] && [ $data/cmvn.scp -nt $data/feats.scp ] && \
   cmp -s <(cut -d' ' -f1 $data/cmvn.scp) <(cut -d' ' -f1 $data/spk2utt); then
  echo "$0: $data/cmvn.scp exists and covers all $(wc -l < $data/spk2utt) speakers, skipping"
  exit 0
fi

mkdir -p $cmvndir $logdir
cmvndir=$(cd $cmvndir && pwd)
rm -f $data/cmvn.scp

if ! compute-cmvn-stats.py --fake=$fake --spk2utt=ark:$data/spk2utt scp:$data/feats.scp \
     ark,scp:$cmvndir/cmvn_$name.ark,$cmvndir/cmvn_$name.scp 2> $logdir/cmvn_$name.log; then
  echo "$0: error computing CMVN stats, see $logdir/cmvn_$name.log" >&2
  exit 1
fi

cp $cmvndir/cmvn_$name.scp $data/cmvn.scp

nc=$(wc -l < $data/cmvn.scp)
ns=$(wc -l < $data/spk2utt)
if [ $nc -ne $ns ]; then
  echo "$0: warning: it seems not all of the speakers got cmvn stats ($nc != $ns)"
  [ $nc -eq 0 ] && exit 1
fi

echo "$0: done, CMVN stats for $nc speakers of $name in $data/cmvn.scp"
