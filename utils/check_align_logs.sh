# Copyright 2026 nnetmix authors. Apache 2.0.
# Sourced by the alignment scripts (steps/align_si.sh, align_fmllr.sh) after $dir, $nj, $data and
# $job_failed are set. check_align_logs <name> reads gmm-align-compiled's counts from
# $dir/log/<name>.<n>.log, prints and writes "<failed> <total>" to $dir/num_failed.
# A job in which every utterance failed exits 1, as Kaldi's gmm-align-compiled does; that is
# only fatal here when no utterance at all was aligned. A job log without the final counts is a
# real failure (a crash, a bad input) and stops the script.

check_align_logs() {
  local n log counts done_utts=0 failed=0 total
  for n in $(seq $nj); do
    log=$dir/log/$1.$n.log
    counts=$(grep -o 'Done [0-9]*, errors on [0-9]*' $log | tail -n 1) || true
    if [ -z "$counts" ]; then
      echo "$0: alignment job $n failed, see $log:" >&2
      grep -h 'ERROR' $log | head -n 3 >&2 || true
      exit 1
    fi
    done_utts=$((done_utts + $(echo $counts | awk '{print $2}' | tr -d ,)))
    failed=$((failed + $(echo $counts | awk '{print $5}')))
  done
  grep -h 'Replaced [0-9]* instances of OOVs' $dir/log/$1.*.log || true
  total=$(wc -l < $data/utt2spk)
  echo "$0: $failed of $total utterances failed to align"
  echo "$failed $total" > $dir/num_failed
  if [ $done_utts -eq 0 ]; then
    echo "$0: no utterance could be aligned (see $dir/log/$1.*.log)" >&2
    exit 1
  fi
  $job_failed && echo "$0: (a job with no aligned utterance exited non-zero; continuing)"
  return 0
}
