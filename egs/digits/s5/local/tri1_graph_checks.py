#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Issue 17's consistency checks of a triphone system (RESULTS.md, tri1 section): do training and
decoding use the tree the same way?

1. ``ali``: every frame of the training alignments <exp-dir>/ali.*.gz has the pdf that the tree
   gives its phone in its context (the neighbouring phones of the alignment, 0 past either end),
   as acc-tree-stats, convert-ali and the context transducer should all see it.
2. ``decode``: the same for the best paths of <decode-dir>'s lattices (lattice-best-path at the
   decode's acoustic scale, 0.083333); frames that differ may only lie at the end of utterances
   whose search did not reach a final state (their last phone waits for a right context).
3. ``hclg``: the first --num-utts references of <data-dir>, aligned through the decoding graph
   restricted to the transcript (HCLG composed with the word string) and through the training
   graph (compile-train-graphs, transition probabilities added by gmm-align-compiled as in
   training): the two alignments must be identical.

Usage: local/tri1_graph_checks.py [--num-utts N] <lang-dir> <exp-dir> <data-dir> <decode-dir>
 e.g.: local/tri1_graph_checks.py data/lang exp/tri1_a data/heldout exp/tri1_a/decode_heldout
Prints one line per check and exits 1 if one fails.
"""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import glob
import os
import subprocess
import sys
import tempfile

# the nnetmix tree (egs/digits/s5/local -> ../../../..), in case nnetmix is not installed
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), *[".."] * 4))

import kaldi_hmm_gmm  # noqa: E402,F401,I001 -- before kaldifst
import kaldifst  # noqa: E402

from nnetmix.hmm.graphs import GraphWriter  # noqa: E402
from nnetmix.kaldi import SequentialReader, read_tree  # noqa: E402
from nnetmix.kaldi.fstfile import read_checked_fst  # noqa: E402
from nnetmix.kaldi.transition_model import read_transition_model  # noqa: E402


def context_mismatches(tm, tree, rspecifier: str) -> tuple[int, int, set]:
    """(frames, frames whose pdf is not the tree's for their phone in context, their keys)."""
    frames, bad, keys = 0, 0, set()
    with SequentialReader(rspecifier, "ivec") as reader:
        for key, ali in reader:
            segs = tm.split_to_phones(ali)
            phones = [int(tm.tid2phone[s[0]]) for s in segs]
            padded = [0] * tree.P + phones + [0] * (tree.N - tree.P - 1)
            for i, seg in enumerate(segs):
                entry = tm.topo.topology_for_phone(phones[i])
                for t in seg:
                    pdf_class = entry[int(tm.tid2hmm_state[t])].forward_pdf_class
                    frames += 1
                    if tree.compute_pdf(padded[i:i + tree.N], pdf_class) != tm.tid2pdf[t]:
                        bad += 1
                        keys.add(key)
    return frames, bad, keys


def partial_utterances(decode_dir: str) -> set:
    """Utterances whose search did not reach a final state, from the decode logs (the warning
    comes before the utterance's transcript line)."""
    out = set()
    for log in glob.glob(os.path.join(decode_dir, "log", "decode.*.log")):
        warned = False
        for line in open(log):
            if "did not reach end-state" in line:
                warned = True
            elif warned and line.split() and not line.startswith(("LOG", "WARNING", "#")):
                out.add(line.split()[0])
                warned = False
    return out


def run(cmd: str) -> None:
    subprocess.run(cmd, shell=True, check=True, stderr=subprocess.DEVNULL)


def hclg_vs_training_graph(lang, exp, data, num_utts, tmp) -> tuple[int, int]:
    """(utterances compared, utterances whose two alignments differ)."""
    keys = sorted(ln.split()[0] for ln in open(os.path.join(data, "text")))[:num_utts]
    words = {ln.split()[0]: int(ln.split()[1]) for ln in open(os.path.join(lang, "words.txt"))}
    text = {ln.split()[0]: ln.split()[1:] for ln in open(os.path.join(data, "text"))}
    hclg = read_checked_fst(os.path.join(exp, "graph", "HCLG.fst"))
    kaldifst.arcsort(hclg, "olabel")
    with open(f"{tmp}/text.int", "w") as f:
        for k in keys:
            f.write(k + " " + " ".join(str(words[w]) for w in text[k]) + "\n")
    with GraphWriter(f"ark:{tmp}/hclg.fsts") as writer:
        for k in keys:
            g = kaldifst.compose(hclg, kaldifst.make_linear_acceptor([words[w] for w in text[k]]))
            kaldifst.connect(g)
            writer.write(k, g)
    with open(f"{tmp}/feats.scp", "w") as f:
        for ln in open(os.path.join(data, "feats.scp")):
            if ln.split()[0] in set(keys):
                f.write(ln)
    mdl = os.path.join(exp, "final.mdl")
    feats = (f"ark,s,cs:apply-cmvn.py --print-args=false --utt2spk=ark:{data}/utt2spk "
             f"scp:{data}/cmvn.scp scp:{tmp}/feats.scp ark:- | "
             f"add-deltas.py --print-args=false ark:- ark:- |")
    run(f"compile-train-graphs.py --print-args=false --read-disambig-syms="
        f"{lang}/phones/disambig.int {exp}/tree {mdl} {lang}/L.fst ark:{tmp}/text.int "
        f"ark:{tmp}/train.fsts")
    align = "gmm-align-compiled.py --print-args=false --beam=200 --retry-beam=400"
    run(f"{align} --transition-scale=1.0 --self-loop-scale=0.1 {mdl} ark:{tmp}/train.fsts "
        f"'{feats}' ark,t:{tmp}/train.ali")
    run(f"{align} --transition-scale=0.0 --self-loop-scale=0.0 {mdl} ark:{tmp}/hclg.fsts "
        f"'{feats}' ark,t:{tmp}/hclg.ali")
    a = {ln.split()[0]: ln.split()[1:] for ln in open(f"{tmp}/train.ali")}
    b = {ln.split()[0]: ln.split()[1:] for ln in open(f"{tmp}/hclg.ali")}
    return len(keys), sum(a.get(k) != b.get(k) for k in keys)


def main() -> int:
    args = sys.argv[1:]
    num_utts = 40
    if len(args) >= 2 and args[0] == "--num-utts":
        num_utts, args = int(args[1]), args[2:]
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        return 1
    lang, exp, data, decode_dir = args
    tm = read_transition_model(os.path.join(exp, "final.mdl"))
    tree = read_tree(os.path.join(exp, "tree"))
    ok = True
    frames, bad, _ = context_mismatches(tm, tree, f"ark:gunzip -c {exp}/ali.*.gz|")
    print(f"ali: {bad} of {frames} training-alignment frames differ from the tree's pdf")
    ok &= bad == 0
    with tempfile.TemporaryDirectory() as tmp:
        run(f"lattice-best-path.py --print-args=false --acoustic-scale=0.083333 "
            f"'ark:gunzip -c {decode_dir}/lat.*.gz|' ark:{tmp}/best.tra ark:{tmp}/best.ali")
        frames, bad, keys = context_mismatches(tm, tree, f"ark:{tmp}/best.ali")
        partial = partial_utterances(decode_dir)
        print(f"decode: {bad} of {frames} best-path frames differ from the tree's pdf, in "
              f"{len(keys)} utterances, {len(keys - partial)} of them not partial "
              f"({len(partial)} partial)")
        ok &= not keys - partial
        n, differ = hclg_vs_training_graph(lang, exp, data, num_utts, tmp)
    print(f"hclg: {differ} of {n} references align differently through HCLG o W and the "
          "training graph")
    ok &= differ == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
