#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Computes log mel filterbank features for a data directory, as Kaldi's steps/make_fbank.sh.
# Run from the recipe directory. The work is shared with steps/make_mfcc.sh (--feat-type fbank),
# so the two cannot drift apart (a segments file is handled there too); this script keeps
# Kaldi's name and options.

# Begin configuration section.
nj=4                          # number of parallel jobs
cmd=utils/run.py              # how to run jobs (run.pl convention; see cmd.sh)
fbank_config=conf/fbank.conf  # config passed to compute-fbank-feats.py
write_utt2num_frames=true     # if true, write <data-dir>/utt2num_frames
write_utt2dur=true            # if true, write <data-dir>/utt2dur
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <data-dir> [<log-dir> [<fbank-dir>] ]
 e.g.: $0 data/train exp/make_fbank/train fbank
Note: <log-dir> defaults to <data-dir>/log, and <fbank-dir> defaults to <data-dir>/data.
With <data-dir>/segments, wav.scp lists recordings and the utterances are cut out of them.
Options:
  --fbank-config <config-file>         # config passed to compute-fbank-feats.py (default: $fbank_config)
  --nj <nj>                            # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>       # how to run jobs (default: $cmd)
  --write-utt2num-frames <true|false>  # if true, write utt2num_frames (default: $write_utt2num_frames)
  --write-utt2dur <true|false>         # if true, write utt2dur (default: $write_utt2dur)
EOF
  exit 1
fi

exec steps/make_mfcc.sh --feat-type fbank --mfcc-config "$fbank_config" --nj "$nj" \
  --cmd "$cmd" --write-utt2num-frames "$write_utt2num_frames" --write-utt2dur "$write_utt2dur" "$@"
