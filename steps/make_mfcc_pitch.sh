#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Computes MFCC features with Kaldi pitch pasted after them (13 + 3 dims with the default
# configs), as Kaldi's steps/make_mfcc_pitch.sh. Run from the recipe directory. The work is
# shared with steps/make_mfcc.sh (--pitch true), segments files included; this script keeps
# Kaldi's name and options.

# Begin configuration section.
nj=4                          # number of parallel jobs
cmd=utils/run.py              # how to run jobs (run.pl convention; see cmd.sh)
mfcc_config=conf/mfcc.conf    # config passed to compute-mfcc-feats.py
pitch_config=conf/pitch.conf  # config passed to compute-and-process-kaldi-pitch-feats.py
paste_length_tolerance=2      # frames by which the MFCC and pitch may differ
write_utt2num_frames=true     # if true, write <data-dir>/utt2num_frames
write_utt2dur=true            # if true, write <data-dir>/utt2dur
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  cat >&2 <<EOF2
Usage: $0 [options] <data-dir> [<log-dir> [<mfcc-dir>] ]
 e.g.: $0 data/train exp/make_mfcc/train mfcc
Note: <log-dir> defaults to <data-dir>/log, and <mfcc-dir> defaults to <data-dir>/data.
Options:
  --mfcc-config <config-file>          # config passed to compute-mfcc-feats.py (default: $mfcc_config)
  --pitch-config <config-file>         # config passed to compute-and-process-kaldi-pitch-feats.py (default: $pitch_config)
  --paste-length-tolerance <n>         # frames the MFCC and pitch may differ by (default: $paste_length_tolerance)
  --nj <nj>                            # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>       # how to run jobs (default: $cmd)
  --write-utt2num-frames <true|false>  # if true, write utt2num_frames (default: $write_utt2num_frames)
  --write-utt2dur <true|false>         # if true, write utt2dur (default: $write_utt2dur)
EOF2
  exit 1
fi

exec steps/make_mfcc.sh --pitch true --mfcc-config "$mfcc_config" --pitch-config "$pitch_config" \
  --paste-length-tolerance "$paste_length_tolerance" --nj "$nj" --cmd "$cmd" \
  --write-utt2num-frames "$write_utt2num_frames" --write-utt2dur "$write_utt2dur" "$@"
