#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Decodes a data directory with a DNN (nnet1) hybrid model, as Kaldi's steps/nnet/decode.sh:
# nnet-forward.py (features through <decode-dir>/feats.JOB.json, the model's cmvn_opts and
# delta_opts on each job's split; feature transform, pre-softmax outputs minus log-priors from
# ali_train_pdf.counts) piped into latgen-faster-mapped.py, lattices in <decode-dir>/lat.JOB.gz,
# then local/score.sh. The model directory is <decode-dir>/.. (or --srcdir). Run from the recipe dir.
# A recurrent network (train.sh --network-type lstm|blstm) is forwarded per utterance, or with
# --chunk-size N (and --chunk-left-context, --chunk-right-context, --chunk-overlap) in
# context-sensitive chunks, as a CSC-BPTT model was trained (seed 002: 64, 21, 21, overlap 32).

# Begin configuration section.
nj=4                  # number of parallel jobs
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
srcdir=               # the DNN directory (default: <decode-dir>/..)
nnet=                 # the network (default: <srcdir>/final.nnet)
model=                # the transition model (default: <srcdir>/final.mdl)
feature_transform=    # (default: <srcdir>/final.feature_transform)
class_frame_counts=   # pdf counts for the priors (default: <srcdir>/ali_train_pdf.counts)
prior_scale=1.0       # scale of the log-priors subtracted from the outputs
prior_cutoff=1e-10    # classes whose frame count is below this are never chosen (Kaldi's default;
                      # 1 disables the pdfs no training frame was aligned to, whose tiny prior
                      # otherwise boosts them by -log(0.5/frames))
no_softmax=true       # decode the pre-softmax activations (same lattices as log-posteriors)
backend=cpu           # compute backend of nnet-forward.py: cpu, cuda or auto
chunk_size=0          # recurrent networks: forward in chunks of N frames (0: whole utterances)
chunk_left_context=0  # with --chunk-size: left context frames run before each chunk
chunk_right_context=0 # with --chunk-size: right context frames run after each chunk
chunk_overlap=0       # with --chunk-size: frames shared by consecutive chunks (outputs averaged)
acwt=0.1              # acoustic scale used in decoding and lattice generation
beam=13.0             # decoding beam
lattice_beam=8.0      # lattice generation beam
max_active=7000       # maximum active states
min_active=200        # minimum active states
decoder=faster        # search: faster (Kaldi's LatticeFasterDecoder: max/min-active apply) or simple (beam only)
num_threads=1         # decoding threads per job: >1 runs latgen-faster-mapped-parallel.py (as Kaldi)
skip_scoring=false    # if true, do not run local/score.sh
scoring_opts="--min-lmwt 4 --max-lmwt 15"  # options passed to local/score.sh
stage=0               # 0: decode, 1: score
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <graph-dir> <data-dir> <decode-dir>
 e.g.: $0 exp/mono/graph data/test exp/dnn/decode_test
where <decode-dir> is a sub-directory of the DNN directory (or give --srcdir).
Options:
  --nj <nj>                        # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>   # how to run jobs (default: $cmd)
  --nnet <file>                    # network (default: <srcdir>/final.nnet)
  --acwt <float>                   # acoustic scale (default: $acwt)
  --beam <float>                   # decoding beam (default: $beam)
  --lattice-beam <float>           # lattice beam (default: $lattice_beam)
  --max-active <n>                 # max active states (default: $max_active)
  --decoder <faster|simple>        # search (default: $decoder)
  --num-threads <n>                # decoding threads per job (default: $num_threads)
  --prior-scale <float>            # scale of the log-priors (default: $prior_scale)
  --prior-cutoff <float>           # count below which a class is never chosen (default: $prior_cutoff)
  --scoring-opts <opts>            # options to local/score.sh (default: $scoring_opts)
  --skip-scoring <true|false>      # skip scoring (default: $skip_scoring)
  --backend <cpu|cuda|auto>        # compute backend (default: $backend)
  --chunk-size <n>                 # recurrent nets: chunks of n frames (default: $chunk_size = whole utterances)
  --chunk-left-context <n>         # context frames before each chunk (default: $chunk_left_context)
  --chunk-right-context <n>        # context frames after each chunk (default: $chunk_right_context)
  --chunk-overlap <n>              # frames shared by consecutive chunks (default: $chunk_overlap)
EOT
  exit 1
fi

graphdir=$1
data=$2
dir=$3
[ -z "$srcdir" ] && srcdir=$(dirname $dir)
sdata=$data/split$nj
[ -z "$nnet" ] && nnet=$srcdir/final.nnet
[ -z "$model" ] && model=$srcdir/final.mdl
[ -z "$feature_transform" ] && feature_transform=$srcdir/final.feature_transform
[ -z "$class_frame_counts" ] && class_frame_counts=$srcdir/ali_train_pdf.counts

for f in $graphdir/HCLG.fst $graphdir/words.txt $data/feats.scp $data/utt2spk $nnet $model \
    $feature_transform $class_frame_counts; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
utils/validate_data_dir.sh --no-text --no-wav $data

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
mkdir -p $dir/log
cmvn_opts=$(cat $srcdir/cmvn_opts 2>/dev/null || true)
delta_opts=$(cat $srcdir/delta_opts 2>/dev/null || true)

if [ $stage -le 0 ]; then
  if [ -f $dir/.done.decode ] && [ "$(cat $dir/num_jobs 2>/dev/null)" == "$nj" ] \
      && [ $dir/.done.decode -nt $nnet ] && [ $dir/.done.decode -nt $graphdir/HCLG.fst ]; then
    echo "$0: lattices in $dir are newer than $nnet and $graphdir/HCLG.fst, skipping decoding"
  else
    rm -f $dir/.done.decode
    utils/split_data.sh $data $nj
    echo $nj > $dir/num_jobs
    if [ -n "$cmvn_opts" ]; then
      [ -f $data/cmvn.scp ] || { echo "$0: no such file $data/cmvn.scp (cmvn_opts '$cmvn_opts')" >&2; exit 1; }
    fi
    # each job's feature chain: the model's cmvn_opts and delta_opts on its split of the data
    steps/make_feature_pipelines.sh --opts-from $srcdir $data $nj $dir >/dev/null
    feats="pipeline:$dir/feats.JOB.json"
    chunk_opts=
    [ $chunk_size -gt 0 ] && chunk_opts="--chunk-size=$chunk_size --chunk-left-context=$chunk_left_context --chunk-right-context=$chunk_right_context --chunk-overlap=$chunk_overlap"
    echo "$0: decoding $(wc -l < $data/feats.scp) utterances of $data with $nnet in $nj jobs (logs in $dir/log)"
    # more than one thread: the -parallel tool, and the job wrapper reserves the threads
    latgen=latgen-faster-mapped.py
    [ $num_threads -gt 1 ] && latgen="latgen-faster-mapped-parallel.py --num-threads=$num_threads"
    $cmd --num-threads $num_threads JOB=1:$nj $dir/log/decode.JOB.log \
      nnet-forward.py --backend=$backend --no-softmax=$no_softmax $chunk_opts \
        --feature-transform=$feature_transform --class-frame-counts=$class_frame_counts \
        --prior-scale=$prior_scale --prior-cutoff=$prior_cutoff $nnet "$feats" ark:- \| \
      $latgen --decoder=$decoder --max-active=$max_active --min-active=$min_active \
        --beam=$beam --lattice-beam=$lattice_beam --acoustic-scale=$acwt --allow-partial=true \
        --word-symbol-table=$graphdir/words.txt $model $graphdir/HCLG.fst ark:- \
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
