#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Decodes a data directory with a GMM model and a decoding graph, writing lattices
# <decode-dir>/lat.JOB.gz, then scores them with local/score.sh, as Kaldi's steps/decode.sh
# (delta or LDA+MLLT features, optionally fMLLR transforms from --transform-dir). The model is <decode-dir>/../final.mdl (or --model). Run from the recipe dir.

# Begin configuration section.
nj=4                  # number of parallel jobs
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
model=                # the model to decode with (default: <decode-dir>/../final.mdl)
transform_dir=        # directory with per-speaker fMLLR transforms trans.* of this data (optional)
acwt=0.083333         # acoustic scale used in decoding and lattice generation
beam=13.0             # decoding beam
lattice_beam=8.0      # lattice generation beam
max_active=7000       # maximum active states (histogram pruning; see gmm-latgen-faster.py)
min_active=200        # minimum active states
decoder=faster        # search: faster (Kaldi's LatticeFasterDecoder: max/min-active apply) or simple (beam only)
num_threads=1         # decoding threads per job: >1 runs gmm-latgen-faster-parallel.py (as Kaldi)
skip_scoring=false    # if true, do not run local/score.sh
scoring_opts=         # options passed to local/score.sh, e.g. "--min-lmwt 4 --max-lmwt 15"
stage=0               # 0: decode, 1: score
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <graph-dir> <data-dir> <decode-dir>
 e.g.: $0 exp/mono/graph data/test exp/mono/decode_test
where <decode-dir> is assumed to be a sub-directory of the directory where the model is.
Options:
  --nj <nj>                        # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>   # how to run jobs (default: $cmd)
  --model <model>                  # model to use (default: <decode-dir>/../final.mdl)
  --transform-dir <dir>            # per-speaker fMLLR transforms <dir>/trans.* of this data
  --acwt <float>                   # acoustic scale (default: $acwt)
  --beam <float>                   # decoding beam (default: $beam)
  --lattice-beam <float>           # lattice beam (default: $lattice_beam)
  --max-active <n>                 # max active states (default: $max_active)
  --decoder <faster|simple>        # search (default: $decoder)
  --num-threads <n>                # decoding threads per job (default: $num_threads)
  --scoring-opts <opts>            # options to local/score.sh
  --skip-scoring <true|false>      # skip scoring (default: $skip_scoring)
  --stage <stage>                  # 0: decode, 1: score (default: $stage)
EOT
  exit 1
fi

graphdir=$1
data=$2
dir=$3
srcdir=$(dirname $dir)  # the model directory
sdata=$data/split$nj
[ -z "$model" ] && model=$srcdir/final.mdl

for f in $graphdir/HCLG.fst $graphdir/words.txt $data/feats.scp $data/cmvn.scp $data/utt2spk \
    $model; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
utils/validate_data_dir.sh --no-text --no-wav $data

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
mkdir -p $dir/log

if [ $stage -le 0 ]; then
  if [ -f $dir/.done.decode ] && [ "$(cat $dir/num_jobs 2>/dev/null)" == "$nj" ] \
      && [ $dir/.done.decode -nt $model ] && [ $dir/.done.decode -nt $graphdir/HCLG.fst ]; then
    echo "$0: lattices in $dir are newer than $model and $graphdir/HCLG.fst, skipping decoding"
  else
    rm -f $dir/.done.decode
    utils/split_data.sh $data $nj
    echo $nj > $dir/num_jobs
    # each job's feature chain: the model directory's (deltas, or LDA+MLLT with final.mat),
    # then the per-speaker transforms of --transform-dir if given, as Kaldi's
    steps/make_feature_pipelines.sh --gmm-dir $srcdir --transform-dir "$transform_dir" \
      $data $nj $dir >/dev/null
    feats="pipeline:$dir/feats.JOB.json"
    echo "$0: decoding $(wc -l < $data/feats.scp) utterances of $data in $nj jobs (logs in $dir/log)"
    # more than one thread: the -parallel tool, and the job wrapper reserves the threads
    latgen=gmm-latgen-faster.py
    [ $num_threads -gt 1 ] && latgen="gmm-latgen-faster-parallel.py --num-threads=$num_threads"
    $cmd --num-threads $num_threads JOB=1:$nj $dir/log/decode.JOB.log \
      $latgen --decoder=$decoder --max-active=$max_active --min-active=$min_active \
        --beam=$beam --lattice-beam=$lattice_beam --acoustic-scale=$acwt --allow-partial=true \
        --word-symbol-table=$graphdir/words.txt $model $graphdir/HCLG.fst "$feats" \
        "ark:|gzip -c > $dir/lat.JOB.gz"
    touch $dir/.done.decode
  fi
fi

if [ $stage -le 1 ] && ! $skip_scoring; then
  [ -x local/score.sh ] || { echo "$0: not scoring because local/score.sh does not exist or" \
                                  "is not executable" >&2; exit 1; }
  echo "$0: scoring with local/score.sh"
  local/score.sh --cmd "$cmd" $scoring_opts $data $graphdir $dir
fi

echo "$0: done, lattices in $dir/lat.*.gz$($skip_scoring || echo ", scores in $dir/wer_*")"
