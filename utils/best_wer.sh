#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Prints the best (lowest) error rate among the WER lines on stdin, as Kaldi's utils/best_wer.sh:
# the line's rate first and its file name last.
#   grep WER exp/mono/decode_test/wer_* | utils/best_wer.sh
#   -> %WER 7.52 [ 75 / 997, 10 ins, 20 del, 45 sub ] exp/mono/decode_test/wer_10_0.0
# sclite "Sum/Avg" lines are understood too. The work is nnetmix/score/best.py.

if [ $# -ne 0 ]; then
  echo "Usage: grep WER <decode-dir>/wer_* | $0" >&2
  exit 1
fi
# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/best-wer.py" --prog="$0" "$@"
