#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Decodes with a speaker-adapted (SAT) GMM system, as Kaldi's steps/decode_fmllr.sh: a
# speaker-independent pass with the alignment model (final.alimdl) into <decode-dir>.si,
# per-speaker fMLLR transforms from its lattice posteriors, a pass on the adapted features that
# keeps state-level lattices (lat.tmp.JOB.gz, --determinize-lattice=false), a second fMLLR
# estimate from them composed with the first, and, as Kaldi does, no third search: the
# state-level lattices are rescored with the final model on the final features
# (gmm-rescore-lattice) and determinized at the lattice beam (lattice-determinize-pruned).
# Writes <decode-dir>/lat.JOB.gz, trans.JOB (speaker transforms of this data) and wer_* scores.

# Begin configuration section.
nj=4                  # number of parallel jobs
cmd=utils/run.py      # how to run jobs (run.pl convention; see cmd.sh)
stage=0               # 0 si pass, 1 first fMLLR, 2 adapted pass, 3 second fMLLR, 4 rescoring, 5 score
first_beam=10.0       # beam of the speaker-independent pass
first_max_active=2000 # max-active of the speaker-independent pass
alignment_model=      # model of the speaker-independent pass (default: <src-dir>/final.alimdl)
adapt_model=          # model the transforms are estimated for (default: <src-dir>/final.mdl)
final_model=          # model the lattices are rescored with (default: <src-dir>/final.mdl)
si_dir=               # use the lattices of this speaker-independent decode instead of making them
acwt=0.083333         # acoustic scale of decoding and of the lattice posteriors
decoder=faster        # search: faster (Kaldi's LatticeFasterDecoder) or simple (steps/decode.sh)
max_active=7000       # maximum active states
min_active=200        # minimum active states
beam=13.0             # decoding beam
lattice_beam=6.0      # lattice generation beam
silence_weight=0.01   # weight of silence frames in fMLLR estimation
fmllr_update_type=full  # gmm-est-fmllr --fmllr-update-type (full|diag|offset|none)
skip_scoring=false    # if true, do not run local/score.sh
scoring_opts=         # options passed to local/score.sh
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <graph-dir> <data-dir> <decode-dir>
 e.g.: $0 exp/tri3/graph data/test exp/tri3/decode_test
where <decode-dir> is assumed to be a sub-directory of the directory where the model is.
Options:
  --nj <nj>                        # number of parallel jobs (default: $nj)
  --cmd <utils/run.py|queue cmd>   # how to run jobs (default: $cmd)
  --first-beam <float>             # beam of the speaker-independent pass (default: $first_beam)
  --alignment-model <model>        # speaker-independent model (default: <src-dir>/final.alimdl)
  --si-dir <dir>                   # an existing speaker-independent decode of this data
  --acwt <float>                   # acoustic scale (default: $acwt)
  --beam <float>                   # decoding beam (default: $beam)
  --decoder <faster|simple>        # search (default: $decoder)
  --lattice-beam <float>           # lattice beam (default: $lattice_beam)
  --silence-weight <float>         # weight of silence in fMLLR (default: $silence_weight)
  --fmllr-update-type <type>       # full|diag|offset|none (default: $fmllr_update_type)
  --scoring-opts <opts>            # options to local/score.sh
  --skip-scoring <true|false>      # skip scoring (default: $skip_scoring)
  --stage <stage>                  # stage to (re)start from (default: $stage)
EOT
  exit 1
fi

graphdir=$1
data=$2
dir=$3
srcdir=$(dirname $dir)  # the model directory
sdata=$data/split$nj
[ -n "$alignment_model" ] || alignment_model=$srcdir/final.alimdl
[ -f $alignment_model ] || alignment_model=$srcdir/final.mdl  # a system without one (Kaldi's)
[ -n "$adapt_model" ] || adapt_model=$srcdir/final.mdl
[ -n "$final_model" ] || final_model=$srcdir/final.mdl

for f in $graphdir/HCLG.fst $graphdir/words.txt $data/feats.scp $data/cmvn.scp $data/utt2spk \
         $data/spk2utt $graphdir/phones/silence.csl $alignment_model $adapt_model $final_model; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
silphonelist=$(cat $graphdir/phones/silence.csl)

if [ -z "$si_dir" ]; then  # the speaker-independent pass, into <decode-dir>.si
  si_dir=$dir.si
  if [ $stage -le 0 ]; then
    steps/decode.sh --nj $nj --cmd "$cmd" --decoder $decoder --model $alignment_model --beam $first_beam \
      --max-active $first_max_active --acwt $acwt --skip-scoring $skip_scoring \
      --scoring-opts "$scoring_opts" $graphdir $data $si_dir
  fi
fi
[ "$nj" == "$(cat $si_dir/num_jobs)" ] || \
  { echo "$0: --nj $nj differs from $si_dir/num_jobs ($(cat $si_dir/num_jobs))" >&2; exit 1; }
[ -f $si_dir/lat.1.gz ] || { echo "$0: no such file $si_dir/lat.1.gz" >&2; exit 1; }

. utils/lock_dir.sh $dir  # one job per directory (docs/troubleshooting.md "Locks: one job per directory")
mkdir -p $dir/log $dir/pass1
echo $nj > $dir/num_jobs
echo $nj > $dir/pass1/num_jobs
[[ -d $sdata && $data/feats.scp -ot $sdata ]] || utils/split_data.sh $data $nj
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# speaker-independent features (the model directory's deltas or LDA+MLLT)
steps/make_feature_pipelines.sh --gmm-dir $srcdir $data $nj $dir/si >/dev/null
sifeats="pipeline:$dir/si/feats.JOB.json"

if [ $stage -le 1 ]; then
  echo "$0: getting first-pass fMLLR transforms"
  $cmd JOB=1:$nj $dir/log/fmllr_pass1.JOB.log \
    lattice-to-post.py --acoustic-scale=$acwt "ark:gunzip -c $si_dir/lat.JOB.gz|" ark:- \| \
    weight-silence-post.py $silence_weight $silphonelist $alignment_model ark:- ark:- \| \
    gmm-post-to-gpost.py $alignment_model "$sifeats" ark:- ark:- \| \
    gmm-est-fmllr-gpost.py --fmllr-update-type=$fmllr_update_type \
      --spk2utt=ark:$sdata/JOB/spk2utt $adapt_model "$sifeats" ark:- ark:$dir/pass1/trans.JOB
fi
steps/make_feature_pipelines.sh --gmm-dir $srcdir --transform-dir $dir/pass1 $data $nj \
  $dir/pass1 >/dev/null
pass1feats="pipeline:$dir/pass1/feats.JOB.json"

# The main lattice generation pass. As in Kaldi, its lattices are not determinized: the final
# step rescores them, which needs the full state-level lattice.
if [ $stage -le 2 ]; then
  echo "$0: doing main lattice generation phase"
  $cmd JOB=1:$nj $dir/log/decode_pass1.JOB.log \
    gmm-latgen-faster.py --decoder=$decoder --max-active=$max_active --min-active=$min_active --beam=$beam \
      --lattice-beam=$lattice_beam --acoustic-scale=$acwt --determinize-lattice=false \
      --allow-partial=true --word-symbol-table=$graphdir/words.txt $adapt_model \
      $graphdir/HCLG.fst "$pass1feats" "ark:|gzip -c > $dir/lat.tmp.JOB.gz"
fi

if [ $stage -le 3 ]; then
  echo "$0: estimating fMLLR transforms a second time"
  $cmd JOB=1:$nj $dir/log/fmllr_pass2.JOB.log \
    lattice-determinize-pruned.py --acoustic-scale=$acwt --beam=4.0 \
      "ark:gunzip -c $dir/lat.tmp.JOB.gz|" ark:- \| \
    lattice-to-post.py --acoustic-scale=$acwt ark:- ark:- \| \
    weight-silence-post.py $silence_weight $silphonelist $adapt_model ark:- ark:- \| \
    gmm-est-fmllr.py --fmllr-update-type=$fmllr_update_type \
      --spk2utt=ark:$sdata/JOB/spk2utt $adapt_model "$pass1feats" ark:- ark:$dir/trans_tmp.JOB
  for n in $(seq $nj); do
    compose-transforms.py --b-is-affine=true ark:$dir/trans_tmp.$n ark:$dir/pass1/trans.$n \
      ark:$dir/trans.$n 2>$dir/log/compose_transforms.$n.log \
      || { echo "$0: error composing transforms, see $dir/log/compose_transforms.$n.log" >&2; exit 1; }
    rm $dir/trans_tmp.$n
  done
fi
steps/make_feature_pipelines.sh --gmm-dir $srcdir --transform-dir $dir $data $nj $dir >/dev/null
feats="pipeline:$dir/feats.JOB.json"

# Rescore the state-level lattices with the final adapted features and the final model, then
# prune and determinize them, ready for scoring and LM rescoring.
if [ $stage -le 4 ]; then
  echo "$0: doing a final pass of acoustic rescoring with $final_model"
  $cmd JOB=1:$nj $dir/log/acoustic_rescore.JOB.log \
    gmm-rescore-lattice.py $final_model "ark:gunzip -c $dir/lat.tmp.JOB.gz|" "$feats" ark:- \| \
    lattice-determinize-pruned.py --acoustic-scale=$acwt --beam=$lattice_beam ark:- \
      "ark:|gzip -c > $dir/lat.JOB.gz" '&&' rm $dir/lat.tmp.JOB.gz
fi

if [ $stage -le 5 ] && ! $skip_scoring; then
  [ -x local/score.sh ] || { echo "$0: not scoring because local/score.sh does not exist or" \
                                  "is not executable" >&2; exit 1; }
  echo "$0: scoring with local/score.sh"
  local/score.sh --cmd "$cmd" $scoring_opts $data $graphdir $dir
fi

echo "$0: done, lattices in $dir/lat.*.gz, transforms in $dir/trans.*$($skip_scoring || echo ", scores in $dir/wer_*")"
