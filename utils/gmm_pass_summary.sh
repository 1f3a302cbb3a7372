# Copyright 2026 nnetmix authors. Apache 2.0.
# Sourced by the GMM training scripts (steps/train_mono.sh, train_deltas.sh, train_lda_mllt.sh,
# train_sat.sh) after $dir is set: defines now() and summarize <pass> <start-time>, which reads
# the pass's logs ($dir/log/update.<pass>.log, align.<pass>.*.log) and appends one line to
# $dir/log/summary.log and stdout.

now() { date +%s.%N; }

# One line per pass in log/summary.log and on stdout: what gmm-est logged (avg log-likelihood per
# frame of the stats, frames) and, on realignment passes, gmm-align-compiled's failure counts.
summarize() {
  local x=$1 t0=$2 line like frames gauss ali
  line=$(grep -o 'Overall avg like per frame = [-0-9.e+]* over [0-9.e+]* frames' \
           $dir/log/update.$x.log | tail -n 1) || true
  like=$(echo "$line" | awk '{print $7}')
  frames=$(echo "$line" | awk '{print $9}')
  gauss=$(grep -o 'split #Gauss from [0-9]* to [0-9]*' $dir/log/update.$x.log | awk '{print $NF}') || true
  [ -n "$gauss" ] || gauss=$(gmm-info.py --print-args=false $dir/$((x+1)).mdl 2>/dev/null | awk '/gaussians/ {print $NF}')
  ali=$(cat $dir/log/align.$x.*.log 2>/dev/null |
        grep -o 'Done [0-9]*, errors on [0-9]*\|Success: done [0-9]*\|Computed [0-9]* alignments; [0-9]* lacked features, [0-9]* had' |
        awk '$1 == "Done" {d += $2; e += $5; n++} $1 == "Success:" {d += $3; n++}
             $1 == "Computed" {d += $2; e += $4 + $7; n++}
             END {if (n) printf " aligned %d, failed %d,", d, e}') || true
  line=$(awk -v x=$x -v l="$like" -v f="$frames" -v g="$gauss" -v a="$ali" -v t0=$t0 -v t1=$(now) \
    'BEGIN {printf "pass %d: avg-like-per-frame %s over %s frames, gauss %s,%s %.1f s", x, l, f, g, a, t1 - t0}')
  echo "$line" >> $dir/log/summary.log
  echo "$0: $line"
}
