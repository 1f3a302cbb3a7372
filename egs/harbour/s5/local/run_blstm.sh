#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Issue 19's networks on the harbour task, as RESULTS.md reports them: seed 002's DBLSTM scaled to
# the 2-core machine (2 layers of 256 + 256 cells, projections of 128, on tri3's fMLLR features
# and alignments) trained with CSC-BPTT 21-64+21 on one worker, then with model averaging and
# with BMUF on each --workers count, every one decoded in the same chunks with a 32-frame overlap
# (seed 002's), then stage 12 (RESULTS.md: each BLSTM against the sigmoid DNN, each multi-worker
# BLSTM against the one-worker BLSTM). Each run is ./run.sh --stage 10 --stop-stage 11 with the
# options below, in its own directory (exp/dnn_fmllr_blstm2x256[_wN[_bmuf]]); a run that is done
# is skipped and a killed one resumes after its last epoch, so this script can simply be run
# again. Needs stages 0-9 (the fMLLR features of stage 9) and the sigmoid DNN of stages 10-11.
#
#   local/run_blstm.sh                       # the 1-worker BLSTM, then MA and BMUF at 2 and 4 workers
#   local/run_blstm.sh --workers "2"         # only 1 and 2 workers
#   local/run_blstm.sh --results false       # no stage 12 at the end
#
# About an hour a run on the 2-core machine (RESULTS.md has each run's epoch times).

# Begin configuration section.
workers="2 4"          # MPI worker counts to train with model averaging and with BMUF (1 always runs)
results=true           # run stage 12 (fingerprint, RESULTS.md) at the end
run_opts=              # more ./run.sh options for every run (e.g. --rnn-layers 5)
# End configuration section.

. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail
if [ $# -ne 0 ]; then
  echo "Usage: $0 [--workers \"2 4\"] [--results true|false] [--run-opts \"<run.sh options>\"]" >&2
  exit 1
fi

csc="--chunk-size=64 --chunk-left-context=21 --chunk-right-context=21"
decode="--chunk-size 64 --chunk-left-context 21 --chunk-right-context 21 --chunk-overlap 32"
# run.sh's directory name: exp/dnn_[fmllr_]blstm<layers>x<cells>[_wN][_tag]
input=fmllr layers=2 cells=256
set -- $run_opts
while [ $# -gt 1 ]; do
  case $1 in
    --dnn-input) input=$2 ;; --rnn-layers) layers=$2 ;; --rnn-cell-dim) cells=$2 ;;
  esac; shift
done
run() {
  # run <suffix> <run.sh options>: skipped when stage 11 finished in that directory
  local dir=exp/dnn_$([ $input == mfcc ] || echo fmllr_)blstm${layers}x${cells}$1; shift
  if [ -f $dir/stage_seconds/11 ]; then
    echo "$0: $dir is trained and decoded (remove $dir/stage_seconds/11 to decode it again)"
    return
  fi
  ./run.sh --stage 10 --stop-stage 11 --dnn-type blstm --rnn-train-opts "$csc" \
    --rnn-decode-opts "$decode" $run_opts "$@"
}

run ""
for n in $workers; do
  run _w$n --rnn-num-workers $n                                             # model averaging
  run _w${n}_bmuf --rnn-num-workers $n --dnn-opts "--bmuf true" --dnn-tag bmuf   # BMUF
done
if $results; then
  ./run.sh --stage 12
fi
