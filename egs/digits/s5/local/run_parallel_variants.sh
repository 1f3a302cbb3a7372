#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Trains and decodes the digits DNN (run.sh stages 8-9) with several numbers of MPI workers and
# mixing methods, then prints a markdown table (epochs, CV frame accuracy, WER, training time; the
# time goes to <dir>/stages67_seconds, the name nnetmix.train.runlog reads). Run from
# egs/digits/s5 once ./run.sh has finished stage 7 (stage 6 with --pretrain false). Each
# variant has its own exp/dnn_* directory and is skipped when done.
#
#   local/run_parallel_variants.sh                          # 1, 2, 4 workers; averaging and BMUF-NBM
#   local/run_parallel_variants.sh --workers "1 8" --variants "sgd ngsgd"
#
# A directory is named as run.sh names it: exp/dnn_<rbm|rand>_w<N>[_sgd][_bmuf] (no _sgd: NG-SGD).

# Begin configuration section.
workers="1 2 4"        # numbers of MPI workers
variants="ma bmuf"     # ma: all-reduce model averaging; bmuf: BMUF-NBM; sgd/ngsgd: the update rule under averaging
optimizer=ngsgd        # the update rule of the ma and bmuf variants (sgd or ngsgd)
pretrain=true          # RBM-initialised (true) or randomly initialised (false) DNNs
# End configuration section.

echo "$0 $@"
. ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

dirs=()
for v in $variants; do
  case $v in
    ma) opts=""; tag=""; opt=$optimizer ;;
    bmuf) opts="--bmuf true"; tag=bmuf; opt=$optimizer ;;
    sgd|ngsgd) opts=""; tag=""; opt=$v ;;
    *) echo "$0: unknown variant $v (ma, bmuf, sgd or ngsgd)" >&2; exit 1 ;;
  esac
  for n in $workers; do
    dir=exp/dnn_$($pretrain && echo rbm || echo rand)_w${n}
    [ $opt == ngsgd ] || dir=${dir}_$opt
    dir=${dir}${tag:+_$tag}
    if [ ! -f $dir/decode_test/scoring_done ]; then
      start=$(date +%s)
      ./run.sh --stage 8 --stop-stage 9 --pretrain $pretrain --dnn-num-workers $n \
        --dnn-optimizer $opt --dnn-opts "$opts" --dnn-tag "$tag"
      echo $(( $(date +%s) - start )) > $dir/stages67_seconds
      touch $dir/decode_test/scoring_done
    fi
    dirs+=($dir)
  done
done
python3 local/summarize_dnn.py "${dirs[@]}"
