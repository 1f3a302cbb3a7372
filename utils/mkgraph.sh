#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Builds the decoding graph HCLG.fst for a model from a lang directory with G.fst, as Kaldi's
# utils/mkgraph.sh: LG = min(det(L_disambig o G)) pushed, CLG with the tree's context, H from the
# tree and transition model, HCLG = min(rmeps(rmsymbols(det(H o CLG)))) plus self-loops.
# Run from the recipe directory. Any tree works: context width N and central position P come from
# tree-info (1 0 for a monophone, 3 1 for a triphone tree; CLG_N_P and ilabels_N_P as Kaldi's),
# H and the self-loops of other trees than monophones are our own (nnetmix/hmm/h_transducer.py);
# the rest is nnetmix/decode/graph.py (kaldifst, kaldi-hmm-gmm).

# Begin configuration section.
transition_scale=1.0    # scale of the non-self-loop transition probabilities
self_loop_scale=0.1     # scale of the self-loop probabilities (0.1 as Kaldi's default)
# End configuration section.

echo "$0 $@"  # Print the command line for logging.

# As Kaldi's mkgraph.sh: the context comes from the tree, so these old options are ignored.
args=()
for x in "$@"; do
  case "$x" in
    --mono|--left-biphone|--quinphone)
      echo "WARNING: the --mono, --left-biphone and --quinphone options are now deprecated and ignored." ;;
    *) args+=("$x") ;;
  esac
done
set -- ${args[@]+"${args[@]}"}

[ -f path.sh ] && . ./path.sh
. utils/parse_options.sh || exit 1
set -euo pipefail

if [ $# -ne 3 ]; then
  cat >&2 <<EOT
Usage: $0 [options] <lang-dir> <model-dir> <graph-dir>
 e.g.: $0 data/lang_test exp/mono exp/mono/graph
<lang-dir> holds G.fst, L_disambig.fst, words.txt, phones.txt and phones/; <model-dir> holds
final.mdl and tree. Intermediate LG/CLG go to <lang-dir>/tmp, as in Kaldi, and are reused.
Options:
  --self-loop-scale <scale>    # scale of self-loop probabilities (default: $self_loop_scale)
  --transition-scale <scale>   # scale of other transition probabilities (default: $transition_scale)
Note: the --mono, --left-biphone and --quinphone options are now deprecated and will be ignored.
EOT
  exit 1
fi

lang=$1
model_dir=$2
dir=$3
model=$model_dir/final.mdl
tree=$model_dir/tree

for f in $lang/L_disambig.fst $lang/G.fst $lang/phones.txt $lang/words.txt \
    $lang/phones/silence.csl $lang/phones/disambig.int $model $tree; do
  [ -f $f ] || { echo "$0: no such file $f" >&2; exit 1; }
done
# The phones must match; the #N disambiguation symbols may differ (a larger lexicon needs more),
# as Kaldi's utils/lang/check_phones_compatible.sh allows.
if [ -f $model_dir/phones.txt ] \
    && ! cmp -s <(grep -v '^#' $lang/phones.txt) <(grep -v '^#' $model_dir/phones.txt); then
  echo "$0: $lang/phones.txt and $model_dir/phones.txt differ in their phones (the model was" \
       "trained with another lang directory)" >&2
  exit 1
fi

if [ -s $dir/HCLG.fst ] && [ $dir/HCLG.fst -nt $model ] && [ $dir/HCLG.fst -nt $lang/G.fst ] \
    && [ $dir/HCLG.fst -nt $lang/L_disambig.fst ] && [ -f $dir/words.txt ] \
    && [ "$(cat $dir/.scales 2>/dev/null)" == "$transition_scale $self_loop_scale" ]; then
  echo "$0: $dir/HCLG.fst is newer than $model and $lang, skipping"
  exit 0
fi

N=$(tree-info.py --print-args=false $tree | awk '$1 == "context-width" { print $2 }')
P=$(tree-info.py --print-args=false $tree | awk '$1 == "central-position" { print $2 }')
[ -n "$N" ] && [ -n "$P" ] || { echo "$0: could not read the context width of $tree" >&2; exit 1; }

mkdir -p $lang/tmp $dir
lg=$lang/tmp/LG.fst
if [[ ! -s $lg || $lg -ot $lang/G.fst || $lg -ot $lang/L_disambig.fst ]]; then
  echo "$0: composing and optimizing LG"
  make-lg.py --print-args=false $lang/L_disambig.fst $lang/G.fst $lg
fi

clg=$lang/tmp/CLG_${N}_${P}.fst
ilabels=$lang/tmp/ilabels_${N}_${P}
if [[ ! -s $clg || $clg -ot $lg || ! -s $ilabels ]]; then
  echo "$0: composing with the context (context width $N, central position $P)"
  fstcomposecontext.py --print-args=false --context-size=$N --central-position=$P \
    --read-disambig-syms=$lang/phones/disambig.int \
    --write-disambig-syms=$lang/tmp/disambig_ilabels_${N}_${P}.int $ilabels $lg $clg
fi

if [[ ! -s $dir/Ha.fst || $dir/Ha.fst -ot $model || $dir/Ha.fst -ot $ilabels ]]; then
  echo "$0: making H"
  make-h-transducer.py --print-args=false --disambig-syms-out=$dir/disambig_tid.int \
    --transition-scale=$transition_scale $ilabels $tree $model $dir/Ha.fst
fi

if [[ ! -s $dir/HCLGa.fst || $dir/HCLGa.fst -ot $dir/Ha.fst || $dir/HCLGa.fst -ot $clg ]]; then
  echo "$0: composing and optimizing HCLGa"
  make-hclga.py --print-args=false $dir/Ha.fst $clg $dir/disambig_tid.int $dir/HCLGa.fst
fi

echo "$0: adding self-loops (scale $self_loop_scale)"
add-self-loops.py --print-args=false --self-loop-scale=$self_loop_scale --reorder=true \
  --tree=$tree $model $dir/HCLGa.fst $dir/HCLG.fst

# An empty FST is 66 bytes (header only) as OpenFst writes it.
if [ $(head -c 67 $dir/HCLG.fst | wc -c) -ne 67 ]; then
  echo "$0: it looks like the result in $dir/HCLG.fst is empty" >&2
  exit 1
fi
rm -f $dir/HCLGa.fst $dir/Ha.fst

# Keep the words, phones and silence lists with HCLG, so decoding and scoring need no lang dir.
cp $lang/words.txt $lang/phones.txt $dir/
mkdir -p $dir/phones
for f in word_boundary.int word_boundary.txt align_lexicon.int align_lexicon.txt \
    optional_silence.int optional_silence.txt optional_silence.csl disambig.int disambig.txt \
    silence.csl; do
  if [ -f $lang/phones/$f ]; then cp $lang/phones/$f $dir/phones/; fi
done
gmm-info.py --print-args=false $model | awk '/number of pdfs/ { print $NF }' > $dir/num_pdfs
echo "$transition_scale $self_loop_scale" > $dir/.scales

echo "$0: done, $dir/HCLG.fst ($(tree-info.py --print-args=false $tree | awk '$1 == "num-pdfs" { print $2 }') pdfs, context width $N)"
