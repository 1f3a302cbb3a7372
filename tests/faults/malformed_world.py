"""One small system of every Kaldi file kind a bin/ tool reads, built through the real tools:
features (ark, scp), CMVN stats, transcripts, a monophone model and tree, L/G/LG/CLG/Ha/HCLG,
training graphs, alignments, posteriors, lattices, GMM and tree statistics, an LDA matrix, an
nnet1 model, an RBM, wavs, an ARPA LM. tests/faults/test_malformed_inputs.py damages copies of
these files (cut short, empty, garbage) and feeds them back to each tool."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from helpers import (TINY_PHONES, TINY_WORDS, load_bin, tiny_net, tiny_rbm, tiny_system,
                     write_feats_ark, write_wav)

from nnetmix.hmm.gmm_tools import write_model
from nnetmix.kaldi.context_dep import write_tree
from nnetmix.kaldi.diag_gmm import DiagGmm
from nnetmix.kaldi.objects import write_object

__all__ = ["build_world", "DIM"]

DIM = 13
ARPA = """\\data\\
ngram 1=4
ngram 2=3

\\1-grams:
-0.6\t</s>
-99\t<s>\t-0.3
-0.5\tYES\t-0.2
-0.5\tNO\t-0.2

\\2-grams:
-0.3\t<s> A
-0.4\tYES B
-0.2\tNO </s>

\\end\\
"""
UTTS = sorted((f"spk{i % 2}-utt{i}", ["A", "B", "A"][: 1 + i % 3]) for i in range(6))


def _run(tool: str, *argv) -> None:
    rc = load_bin(tool).main(["--print-args=false", *map(str, argv)])
    assert rc == 0, f"{tool} {argv}: exit {rc}"


def build_world(d: Path) -> Path:
    """Write the files into ``d`` and return it."""
    rng = np.random.default_rng(34)
    write_feats_ark(d / "feats.ark", UTTS, dim=DIM)
    _run("copy-feats.py", f"ark:{d}/feats.ark", f"ark,scp:{d}/feats2.ark,{d}/feats.scp")
    _run("copy-feats.py", "--compress=true", f"ark:{d}/feats.ark", f"ark:{d}/featsc.ark")
    _run("copy-feats.py", f"ark:{d}/feats.ark", f"ark,t:{d}/featst.ark")
    (d / "utt2spk").write_text("".join(f"{k} {k.split('-')[0]}\n" for k, _ in UTTS))
    spk = sorted({k.split("-")[0] for k, _ in UTTS})
    (d / "spk2utt").write_text("".join(
        f"{s} {' '.join(k for k, _ in UTTS if k.startswith(s + '-'))}\n" for s in spk))
    _run("compute-cmvn-stats.py", f"--spk2utt=ark:{d}/spk2utt", f"ark:{d}/feats.ark",
         f"ark:{d}/cmvn.ark")
    words = {"A": 1, "B": 2}
    (d / "text.int").write_text("".join(f"{k} {' '.join(str(words[w]) for w in ws)}\n"
                                        for k, ws in UTTS))
    (d / "text").write_text("".join(f"{k} {' '.join(ws)}\n" for k, ws in UTTS))
    (d / "words.txt").write_text(TINY_WORDS)
    (d / "phones.txt").write_text(TINY_PHONES)
    (d / "disambig.int").write_text("4\n5\n")
    (d / "silence.csl").write_text("1\n")
    # monophone system: model with one Gaussian per pdf, tree, L (with #0), G, graphs
    tm, tree, L, G = tiny_system()
    write_model(str(d / "0.mdl"), tm, [DiagGmm.from_means_vars(
        [1.0], rng.normal(size=(1, DIM)), np.ones((1, DIM))) for _ in range(tm.num_pdfs)])
    _run("copy-transition-model.py", d / "0.mdl", d / "0.tm")
    write_tree(str(d / "tree"), tree)
    (d / "topo").write_text(tm.topo.to_text())
    L.write(str(d / "L.fst"))
    G.write(str(d / "G.fst"))
    _run("compile-train-graphs.py", f"--read-disambig-syms={d}/disambig.int", d / "tree",
         d / "0.mdl", d / "L.fst", f"ark:{d}/text.int", f"ark:{d}/fsts.ark")
    _run("align-equal-compiled.py", f"ark:{d}/fsts.ark", f"ark:{d}/feats.ark", f"ark:{d}/ali.ark")
    _run("ali-to-post.py", f"ark:{d}/ali.ark", f"ark:{d}/post.ark")
    _run("copy-int-vector.py", f"ark:{d}/ali.ark", f"ark:|gzip -c >{d}/ali.gz")
    _run("ali-to-pdf.py", d / "0.mdl", f"ark:{d}/ali.ark", f"ark:{d}/pdf.ark")
    _run("ali-to-post.py", f"ark:{d}/pdf.ark", f"ark:{d}/pdfpost.ark")  # nnet targets
    _run("post-to-weights.py", f"ark:{d}/post.ark", f"ark:{d}/weights.ark")
    # decoding graph through mkgraph's tools
    _run("make-lg.py", d / "L.fst", d / "G.fst", d / "LG.fst")
    _run("fstcomposecontext.py", "--context-size=1", "--central-position=0",
         f"--read-disambig-syms={d}/disambig.int", f"--write-disambig-syms={d}/disambig_ilabels.int",
         d / "ilabels", d / "LG.fst", d / "CLG.fst")
    _run("make-h-transducer.py", f"--disambig-syms-out={d}/disambig_tid.int", d / "ilabels",
         d / "tree", d / "0.mdl", d / "Ha.fst")
    _run("make-hclga.py", d / "Ha.fst", d / "CLG.fst", d / "disambig_tid.int", d / "HCLGa.fst")
    _run("add-self-loops.py", "--self-loop-scale=0.1", d / "0.mdl", d / "HCLGa.fst",
         d / "HCLG.fst")
    _run("gmm-latgen-faster.py", "--beam=20", "--lattice-beam=8", d / "0.mdl", d / "HCLG.fst",
         f"ark:{d}/feats.ark", f"ark:{d}/lat.ark")
    _run("lattice-copy.py", f"ark:{d}/lat.ark", f"ark:|gzip -c >{d}/lat.gz")
    # statistics and transforms
    _run("gmm-acc-stats-ali.py", d / "0.mdl", f"ark:{d}/feats.ark", f"ark:{d}/ali.ark",
         d / "0.acc")
    _run("acc-tree-stats.py", d / "0.mdl", f"ark:{d}/feats.ark", f"ark:{d}/ali.ark",
         d / "treeacc")
    _run("acc-lda.py", d / "0.mdl", f"ark:{d}/feats.ark", f"ark:{d}/post.ark", d / "lda.acc")
    _run("est-lda.py", "--dim=5", d / "lda.mat", d / "lda.acc")
    _run("gmm-acc-mllt.py", d / "0.mdl", f"ark:{d}/feats.ark", f"ark:{d}/post.ark",
         d / "mllt.acc")
    _run("est-mllt.py", d / "mllt.mat", d / "mllt.acc")
    _run("compute-cmvn-stats.py", f"ark:{d}/feats.ark", d / "cmvn_global.mat")
    _run("gmm-est.py", f"--write-occs={d}/0.occs", d / "0.mdl", d / "0.acc", d / "1.mdl")
    _run("gmm-post-to-gpost.py", d / "0.mdl", f"ark:{d}/feats.ark", f"ark:{d}/post.ark",
         f"ark:{d}/gpost.ark")
    write_object(str(d / "xform.mat"), np.hstack([np.eye(DIM), np.zeros((DIM, 1))]), "mat")
    (d / "sets.int").write_text("1\n2\n3\n")
    (d / "roots.txt").write_text("shared split 1\nshared split 2\nshared split 3\n")
    (d / "questions.int").write_text("1\n2 3\n")
    _run("compile-questions.py", d / "topo", d / "questions.int", d / "questions.qst")
    # networks, audio, language model
    tiny_net(rng, dim=DIM, hid=8, num_classes=tm.num_pdfs).write(str(d / "final.nnet"))
    tiny_rbm(rng, vis=DIM, hid=4, vis_type="gauss").write(str(d / "rbm.nnet"))
    for i, (k, _) in enumerate(UTTS[:2]):
        write_wav(d / f"{k}.wav", 4000, seed=i)
    (d / "wav.scp").write_text("".join(f"{k} {d}/{k}.wav\n" for k, _ in UTTS[:2]))
    _run("nnet-forward.py", d / "final.nnet", f"ark:{d}/feats.ark", f"ark:{d}/probs.ark")
    (d / "nnet.proto").write_text(
        f"<NnetProto>\n<AffineTransform> <InputDim> {DIM} <OutputDim> 4 <BiasMean> 0 "
        "<BiasRange> 0 <ParamStddev> 0.1\n<Softmax> <InputDim> 4 <OutputDim> 4\n</NnetProto>\n")
    for name, layer in (("lstm", "<LstmProjected> <InputDim> 13 <OutputDim> 6 <CellDim> 8"),
                        ("blstm", "<BlstmProjected> <InputDim> 13 <OutputDim> 6 <CellDim> 4")):
        (d / f"{name}.proto").write_text(
            f"{layer}\n<AffineTransform> <InputDim> 6 <OutputDim> {tm.num_pdfs} <BiasMean> 0 "
            f"<BiasRange> 0\n<Softmax> <InputDim> {tm.num_pdfs} <OutputDim> {tm.num_pdfs}\n")
        _run("nnet-initialize.py", d / f"{name}.proto", d / f"{name}.nnet")
    (d / "segments").write_text(f"seg1 {UTTS[0][0]} 0.0 0.1\nseg2 {UTTS[1][0]} 0.05 0.2\n")
    data = d / "data"
    data.mkdir()
    for f in ("text", "utt2spk", "spk2utt", "feats.scp"):
        (data / f).write_text((d / f).read_text())
    (d / "lm.arpa").write_text(ARPA)
    (d / "lm_text").write_text("A B\nB A A\n")
    return d
