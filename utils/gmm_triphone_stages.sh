# Copyright 2026 nnetmix authors. Apache 2.0.
# Sourced by the triphone training scripts (steps/train_deltas.sh, train_lda_mllt.sh,
# train_sat.sh): the stages they share, as Kaldi's scripts run them, on the globals those scripts
# set ($dir $alidir $lang $data $sdata $nj $cmd $feats $context_opts $ciphonelist $numleaves
# $numgauss $cluster_thresh $oov $scale_opts $beam $retry_beam $careful $boost_silence $power;
# $questions_opts if set).
# utils/gmm_pass_summary.sh must be sourced first (summarize).

# Tree statistics of <ali-dir>'s alignments on the current features ($dir/treeacc).
tree_stats() {
  echo "$0: accumulating tree stats"
  $cmd JOB=1:$nj $dir/log/acc_tree.JOB.log \
    acc-tree-stats.py $context_opts --ci-phones=$ciphonelist $alidir/final.mdl "$feats" \
      "ark:gunzip -c $alidir/ali.JOB.gz|" $dir/JOB.treeacc
  $cmd $dir/log/sum_tree_acc.log sum-tree-stats.py $dir/treeacc $dir/*.treeacc
  rm $dir/*.treeacc
}

# Questions (phone clustering plus extra_questions), the tree, and 1.mdl mixed up to $numgauss.
tree_and_model() {
  echo "$0: getting questions for tree-building, via clustering"
  $cmd $dir/log/questions.log \
    cluster-phones.py $context_opts $dir/treeacc $lang/phones/sets.int $dir/questions.int
  cat $lang/phones/extra_questions.int >> $dir/questions.int
  $cmd $dir/log/compile_questions.log \
    compile-questions.py $context_opts ${questions_opts:-} $lang/topo $dir/questions.int \
      $dir/questions.qst
  echo "$0: building the tree"
  $cmd $dir/log/build_tree.log \
    build-tree.py $context_opts --verbose=1 --max-leaves=$numleaves \
      --cluster-thresh=$cluster_thresh $dir/treeacc $lang/phones/roots.int \
      $dir/questions.qst $lang/topo $dir/tree
  $cmd $dir/log/init_model.log \
    gmm-init-model.py --write-occs=$dir/1.occs $dir/tree $dir/treeacc $lang/topo $dir/1.mdl
  if grep -q 'no stats' $dir/log/init_model.log; then  # e.g. a noise phone never aligned
    echo "$0: some leaves had no statistics (see $dir/log/init_model.log)" >&2
  fi
  $cmd $dir/log/mixup.log gmm-mixup.py --mix-up=$numgauss $dir/1.mdl $dir/1.occs $dir/1.mdl
  rm $dir/treeacc
}

# <ali-dir>'s alignments through the new tree: used until the first realignment.
convert_alignments() {
  echo "$0: converting alignments from $alidir to use current tree"
  $cmd JOB=1:$nj $dir/log/convert.JOB.log \
    convert-ali.py $alidir/final.mdl $dir/1.mdl $dir/tree \
      "ark:gunzip -c $alidir/ali.JOB.gz|" "ark:|gzip -c >$dir/ali.JOB.gz"
}

compile_graphs() {
  echo "$0: compiling graphs of transcripts"
  $cmd JOB=1:$nj $dir/log/compile_graphs.JOB.log \
    compile-train-graphs.py --read-disambig-syms=$lang/phones/disambig.int $dir/tree $dir/1.mdl \
      $lang/L.fst "ark:sym2int.pl --map-oov $oov -f 2- $lang/words.txt < $sdata/JOB/text|" \
      "ark:|gzip -c >$dir/fsts.JOB.gz"
}

# realign <pass>: alignments of $dir/<pass>.mdl (silence boosted) on the current features.
realign() {
  echo "$0: aligning data"
  local mdl="gmm-boost-silence.py --boost=$boost_silence $(cat $lang/phones/optional_silence.csl) $dir/$1.mdl - |"
  $cmd JOB=1:$nj $dir/log/align.$1.JOB.log \
    gmm-align-compiled.py $scale_opts --beam=$beam --retry-beam=$retry_beam \
      --careful=$careful "$mdl" "ark:gunzip -c $dir/fsts.JOB.gz|" "$feats" \
      "ark:|gzip -c >$dir/ali.JOB.gz"
}

# acc_and_update <pass> <start-time>: statistics, <pass+1>.mdl mixed up to $numgauss, the
# summary line; <pass>.mdl and its statistics are removed.
acc_and_update() {
  local x=$1
  $cmd JOB=1:$nj $dir/log/acc.$x.JOB.log \
    gmm-acc-stats-ali.py $dir/$x.mdl "$feats" "ark:gunzip -c $dir/ali.JOB.gz|" $dir/$x.JOB.acc
  $cmd $dir/log/update.$x.log \
    gmm-est.py --mix-up=$numgauss --power=$power --write-occs=$dir/$((x+1)).occs \
      $dir/$x.mdl "gmm-sum-accs.py - $dir/$x.*.acc|" $dir/$((x+1)).mdl
  rm -f $dir/$x.mdl $dir/$x.*.acc $dir/$x.occs
  sed -i "/^pass $x:/d" $dir/log/summary.log 2>/dev/null || true
  summarize $x $2
}

# training_done <what> <last-pass>: the closing line.
training_done() {
  local leaves
  leaves=$(tree-info.py --print-args=false $dir/tree 2>/dev/null | awk '/num-pdfs/ {print $2}') || true
  echo "$0: done training the $1 system in $dir (${leaves:-?} leaves, $num_iters passes;" \
       "final.mdl -> $2.mdl; see $dir/log/summary.log)"
}
