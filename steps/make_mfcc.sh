#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Computes MFCC, filterbank or PLP features, with or without Kaldi pitch pasted after them, for a
# data directory in $nj jobs and writes <data-dir>/feats.scp and utt2num_frames, as Kaldi's
# steps/make_mfcc.sh. Kaldi's make_fbank.sh, make_plp.sh, make_mfcc_pitch.sh and
# make_plp_pitch.sh are links to this script: the name it runs under sets --feat-type and
# --pitch, and each takes Kaldi's options (--fbank-config, --plp-config, --pitch-config). With a
# <data-dir>/segments file the utterances are cut out of the wav.scp recordings by
# extract-segments.py and piped to the feature tool as wave data, as Kaldi does.
# --compress true writes Kaldi compressed matrices through copy-feats.py, as Kaldi's default
# does (a quarter of the disk); ours is false, so the recipes' published fingerprints hold.
# Run from the recipe directory (egs/<corpus>/s5). Unlike Kaldi, finished features are kept:
# when feats.scp already covers every utterance with the same feature type and configs (kept in
# <data-dir>/conf), the script says so and exits 0.

# Begin configuration section.
nj=4                          # number of parallel jobs
cmd=utils/run.py              # how to run jobs (run.pl convention; see cmd.sh)
mfcc_config=conf/mfcc.conf    # config passed to compute-mfcc-feats.py
fbank_config=conf/fbank.conf  # config passed to compute-fbank-feats.py (make_fbank.sh)
plp_config=conf/plp.conf      # config passed to compute-plp-feats.py (make_plp*.sh)
feat_type=mfcc                # mfcc, fbank or plp (the script's name sets it)
pitch=false                   # true: paste Kaldi pitch after the features (*_pitch.sh set it)
pitch_config=conf/pitch.conf  # config passed to compute-and-process-kaldi-pitch-feats.py
paste_length_tolerance=2      # frames by which the features and the pitch may differ
write_utt2num_frames=true     # if true, write <data-dir>/utt2num_frames
write_utt2dur=true            # if true, write <data-dir>/utt2dur
compress=false                # if true, write compressed features (Kaldi's default: true)
# End configuration section.

case $(basename "$0") in  # the defaults of the script's other names; options still override
  make_fbank.sh) feat_type=fbank ;;
  make_plp.sh) feat_type=plp ;;
  make_mfcc_pitch.sh) pitch=true ;;
  make_plp_pitch.sh) feat_type=plp; pitch=true ;;
esac

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

case $feat_type in
  mfcc|fbank|plp) tool=compute-$feat_type-feats.py ;;
  *) echo "$0: --feat-type must be mfcc, fbank or plp, got '$feat_type'" >&2; exit 1 ;;
esac
config_var=${feat_type}_config
feat_config=${!config_var}

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  cat >&2 <<EOF
Usage: $0 [options] <data-dir> [<log-dir> [<$feat_type-dir>] ]
 e.g.: $0 data/train exp/make_$feat_type/train $feat_type
Note: <log-dir> defaults to <data-dir>/log, and <$feat_type-dir> defaults to <data-dir>/data.
With <data-dir>/segments, wav.scp lists recordings and each job runs
extract-segments.py | $tool on its part of the segments.
Options:
  $(printf '%-36s' "--$feat_type-config <config-file>") # config passed to $tool (default: $feat_config)
  --nj <nj>                            # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>       # how to run jobs (default: $cmd)
  --write-utt2num-frames <true|false>  # if true, write utt2num_frames (default: $write_utt2num_frames)
  --write-utt2dur <true|false>         # if true, write utt2dur (default: $write_utt2dur)
  --compress <true|false>              # write compressed features, as Kaldi's default (default: $compress)
  --pitch <true|false>                 # paste Kaldi pitch after the features (default: $pitch)
  --pitch-config <config-file>         # config passed to compute-and-process-kaldi-pitch-feats.py (default: $pitch_config)
  --paste-length-tolerance <n>         # frames the features and pitch may differ by (default: $paste_length_tolerance)
  --feat-type <mfcc|fbank|plp>         # the features (default: $feat_type, from the script's name)
EOF
  exit 1
fi

data=$1
logdir=${2:-$data/log}
mfccdir=${3:-$data/data}
name=$(basename "$data")

$pitch && name_tag=${feat_type}_pitch || name_tag=$feat_type
for f in $data/wav.scp $data/utt2spk $feat_config $($pitch && echo $pitch_config); do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
. utils/lock_dir.sh $data  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
# Idempotence (our change from Kaldi, which moves feats.scp to .backup and recomputes): when
# feats.scp covers every utterance, its archives exist, the requested lists are there and the
# configs kept beside it are the requested ones (no other feature type, pitch as asked, and
# conf/compress.conf, written only with --compress true, as asked), skip.
complete=true
kept=$(cd $data/conf 2>/dev/null && LC_ALL=C ls mfcc.conf fbank.conf plp.conf pitch.conf \
       2>/dev/null | xargs || true)
wanted=$(printf '%s\n' $feat_type.conf $($pitch && echo pitch.conf) | LC_ALL=C sort | xargs)
if [ -f $data/feats.scp ] && cmp -s <(cut -d' ' -f1 $data/feats.scp) <(cut -d' ' -f1 $data/utt2spk); then
  for ark in $(cut -d' ' -f2- $data/feats.scp | sed 's/:[0-9]*$//' | sort -u); do
    [ -f "$ark" ] || complete=false
  done
  if $write_utt2num_frames && [ ! -f $data/utt2num_frames ]; then complete=false; fi
  if $write_utt2dur && [ ! -f $data/utt2dur ]; then complete=false; fi
  [ "$kept" = "$wanted" ] && cmp -s $feat_config $data/conf/$feat_type.conf || complete=false
  if $pitch && ! cmp -s $pitch_config $data/conf/pitch.conf; then complete=false; fi
  was_compressed=false; [ -f $data/conf/compress.conf ] && was_compressed=true
  [ $was_compressed = $compress ] || complete=false
else
  complete=false
fi
if $complete; then
  echo "$0: $data/feats.scp exists and covers all $(wc -l < $data/utt2spk) utterances, skipping"
  exit 0
fi

# Not complete: what an earlier run left (feats.scp of the utterances that got features, their
# lists) is moved to $data/.backup, as Kaldi moves feats.scp there, so that the data directory
# validates and a rerun after the input is fixed (a missing wav restored) computes them all.
stale=$(for f in feats.scp utt2num_frames utt2dur cmvn.scp; do [ -f $data/$f ] && echo $f; done || true)
if [ -n "$stale" ]; then
  mkdir -p $data/.backup
  for f in $stale; do mv $data/$f $data/.backup/$f; done
  echo "$0: moving $(echo $stale) of $data to $data/.backup"
fi
utils/validate_data_dir.sh --no-text --no-feats $data

mkdir -p $mfccdir $logdir
mfccdir=$(cd $mfccdir && pwd)  # feats.scp holds absolute archive paths, as Kaldi's
rm -f $data/feats.scp $data/utt2num_frames $data/utt2dur $data/cmvn.scp
rm -f $data/conf/{mfcc,fbank,plp,pitch,compress}.conf

utils/split_data.sh $data $nj
sdata=$data/split$nj

extra_opts=()
if $write_utt2num_frames; then extra_opts+=("--write-num-frames=ark,t:$logdir/utt2num_frames.JOB"); fi
if $write_utt2dur; then extra_opts+=("--write-utt2dur=ark,t:$logdir/utt2dur.JOB"); fi

echo "$0: computing $name_tag features for $name in $nj jobs (logs in $logdir)"
out=ark,scp:$mfccdir/raw_${name_tag}_$name.JOB.ark,$mfccdir/raw_${name_tag}_$name.JOB.scp
# Compressed features go through copy-feats.py, as in Kaldi; uncompressed ones are written by
# the feature tool itself.
feat_out=$out
to_archive=()
if $compress; then
  feat_out=ark:-
  to_archive=(\| copy-feats.py --compress=true ark:- $out)
fi
if [ -f $data/segments ]; then
  # Kaldi's segments branch; each job's segments come from split_data.sh (speakers kept whole),
  # and scp,p: makes an unreadable recording a warning that skips its segments.
  echo "$0 [info]: segments file exists: using that."
  wav="extract-segments.py scp,p:$data/wav.scp $sdata/JOB/segments ark:- |"
  wav_in=ark:-
else
  wav=""
  wav_in=scp:$sdata/JOB/wav.scp
fi
if ! $pitch && [ -f $data/segments ]; then
  $cmd JOB=1:$nj $logdir/make_${name_tag}_${name}.JOB.log \
    extract-segments.py scp,p:$data/wav.scp $sdata/JOB/segments ark:- \| \
    $tool --verbose=2 --config=$feat_config "${extra_opts[@]}" ark:- $feat_out "${to_archive[@]}"
elif ! $pitch; then
  $cmd JOB=1:$nj $logdir/make_${name_tag}_${name}.JOB.log \
    $tool --verbose=2 --config=$feat_config "${extra_opts[@]}" $wav_in $feat_out "${to_archive[@]}"
else
  # As Kaldi's make_mfcc_pitch.sh: features and pitch side by side (paste-feats cuts them to
  # the shorter within --paste-length-tolerance frames), then copy-feats writes the archive and
  # the frame counts of the pasted features; durations come from the audio.
  feat_in="ark:$wav $tool --verbose=2 --config=$feat_config $wav_in ark:- |"
  pitch_in="ark,s,cs:$wav compute-and-process-kaldi-pitch-feats.py --verbose=2 --config=$pitch_config $wav_in ark:- |"
  copy_opts=()
  if $write_utt2num_frames; then copy_opts+=("--write-num-frames=ark,t:$logdir/utt2num_frames.JOB"); fi
  $cmd JOB=1:$nj $logdir/make_${name_tag}_${name}.JOB.log \
    paste-feats.py --length-tolerance=$paste_length_tolerance "$feat_in" "$pitch_in" ark:- \| \
    copy-feats.py --compress=$compress "${copy_opts[@]}" ark:- $out
  if $write_utt2dur; then
    wav_table=$wav_in
    [ -n "$wav" ] && wav_table="ark:$wav"
    $cmd JOB=1:$nj $logdir/utt2dur_${name}.JOB.log \
      wav-to-duration.py "$wav_table" ark,t:$logdir/utt2dur.JOB
  fi
fi

# Job n's utterances are a contiguous, sorted run, so joining in job order stays sorted.
for n in $(seq $nj); do cat $mfccdir/raw_${name_tag}_$name.$n.scp; done > $data/feats.scp
if $write_utt2num_frames; then
  for n in $(seq $nj); do cat $logdir/utt2num_frames.$n; done > $data/utt2num_frames
fi
if $write_utt2dur; then
  for n in $(seq $nj); do cat $logdir/utt2dur.$n; done > $data/utt2dur
fi
rm -f $logdir/utt2num_frames.* $logdir/utt2dur.*

# Keep the config beside the features, as Kaldi does, so later stages know how they were made.
mkdir -p $data/conf
cp $feat_config $data/conf/$feat_type.conf
if $pitch; then cp $pitch_config $data/conf/pitch.conf; fi
if $compress; then echo "--compress=true" > $data/conf/compress.conf; fi
frame_shift=$(sed -n 's/^--frame-shift=\([0-9.]*\).*/\1/p' $feat_config | tail -n 1)
awk -v ms="${frame_shift:-10}" 'BEGIN { printf "%.3f\n", ms / 1000 }' > $data/frame_shift

nf=$(wc -l < $data/feats.scp)
nu=$(wc -l < $data/utt2spk)
if [ $nf -ne $nu ]; then
  echo "$0: not all of the utterances got features ($nf != $nu); the job logs" \
       "$logdir/make_${name_tag}_${name}.*.log name the skipped ones; consider" \
       "utils/fix_data_dir.sh $data"
fi
if (( nf < nu - nu / 20 )); then
  echo "$0: less than 95% of the utterances got features ($nf of $nu); probably a serious" \
       "error, see $logdir/make_${name_tag}_${name}.*.log" >&2
  exit 1
fi

echo "$0: done, $name_tag features for $nf utterances of $name in $data/feats.scp"
