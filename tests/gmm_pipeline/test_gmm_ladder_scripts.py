"""Kaldi's GMM ladder end to end on a tiny synthetic data directory, run as a recipe runs it:
train_mono.sh -> align_si.sh -> train_deltas.sh (tri1) -> align_si.sh -> train_lda_mllt.sh (tri2)
-> align_si.sh -> train_sat.sh (tri3) -> align_fmllr.sh -> nnet/make_fmllr_feats.sh, and
mkgraph.sh + decode_fmllr.sh on the triphone graph (few passes each: the scripts' plumbing, the
files they leave and what later stages read, not accuracy)."""
from __future__ import annotations

import gzip
import os

import numpy as np
import pytest
from helpers import (FIXTURES, ROOT, check_alignment, copy_as_kaldi_gmm_dir,
                     copy_as_kaldi_graph_dir, make_feats_data_dir, make_lang, make_utts, run_script)

from nnetmix.decode.latio import iter_compact_lattices
from nnetmix.decode.lattice import best_path
from nnetmix.feat import open_features
from nnetmix.kaldi import SequentialReader, read_gmm_model, read_object
from nnetmix.kaldi.context_dep import read_tree

pytestmark = pytest.mark.slow

UTTS = make_utts(60, seed=11)   # 3 speakers of 20 utterances, about 1000 frames each
PASSES = ["--num-iters", "4", "--realign-iters", "3"]


def run(args, cwd):
    proc = run_script([str(a) for a in args], cwd=cwd)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def read_alis(path) -> dict:
    with SequentialReader(f"ark:gunzip -c {path}|", "ivec") as r:
        return {k: np.asarray(a) for k, a in r}


@pytest.fixture(scope="module")
def ladder(tmp_path_factory):
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} not present")
    d = tmp_path_factory.mktemp("ladder")
    for x in ("steps", "utils"):
        os.symlink(ROOT / x, d / x)
    (d / "local").mkdir()
    (d / "local/score.sh").symlink_to(ROOT / "local/score.sh")
    lang = make_lang(FIXTURES, d / "data/lang")
    # what prepare_lang.sh writes for trees and graphs (yesno: SIL K EH L OW N)
    phones = lang / "phones"
    (phones / "roots.int").write_text("".join(f"shared split {p}\n" for p in range(1, 7)))
    (phones / "extra_questions.int").write_text("1\n2 3 4 5 6\n")
    for name in ("context_indep.csl", "silence.csl"):
        (phones / name).write_text("1\n")
    (phones / "silence.int").write_text("1\n")
    for f in ("L_disambig.fst", "G.fst"):
        (lang / f).write_bytes((FIXTURES / "yesno" / f).read_bytes())
    make_feats_data_dir(d / "data/train", UTTS)
    out = {}
    out["mono"] = run(["steps/train_mono.sh", "--nj", "3", "--num-iters", "6", "--totgauss",
                       "60", "--max-iter-inc", "3", "--realign-iters", "1 3 5", "data/train",
                       "data/lang", "exp/mono"], d)
    run(["steps/align_si.sh", "--nj", "3", "data/train", "data/lang", "exp/mono",
         "exp/mono_ali"], d)
    out["tri1"] = run(["steps/train_deltas.sh", *PASSES, 24, 80, "data/train", "data/lang",
                       "exp/mono_ali", "exp/tri1"], d)
    run(["steps/align_si.sh", "--nj", "3", "data/train", "data/lang", "exp/tri1",
         "exp/tri1_ali"], d)
    out["tri2"] = run(["steps/train_lda_mllt.sh", *PASSES, "--mllt-iters", "2", "--dim", "12",
                       24, 80, "data/train", "data/lang", "exp/tri1_ali", "exp/tri2"], d)
    run(["steps/align_si.sh", "--nj", "3", "data/train", "data/lang", "exp/tri2",
         "exp/tri2_ali"], d)
    out["tri3"] = run(["steps/train_sat.sh", *PASSES, "--fmllr-iters", "2", 24, 80,
                       "data/train", "data/lang", "exp/tri2_ali", "exp/tri3"], d)
    out["ali"] = run(["steps/align_fmllr.sh", "--nj", "3", "data/train", "data/lang",
                      "exp/tri3", "exp/tri3_ali"], d)
    return d, out


def test_trees_are_context_dependent(ladder):
    # (the features do not depend on the context, so the trees stay small: leaves are merged
    # back and rounded to a multiple of 8; tests/hmm/test_hmm_tree.py plants context splits)
    d, out = ladder
    for sys in ("tri1", "tri2", "tri3"):
        tree = read_tree(str(d / "exp" / sys / "tree"))
        assert (tree.N, tree.P) == (3, 1)
        tm, am = read_gmm_model(str(d / "exp" / sys / "final.mdl"))
        assert am.num_pdfs <= 24 and am.num_pdfs % 8 == 0
        assert int(tm.tid2pdf.max()) + 1 == am.num_pdfs
        assert (d / "exp" / sys / "log/summary.log").read_text().count("pass ") == 3
        assert "done training the" in out[sys] and "leaves, 4 passes" in out[sys]


def test_lda_mllt_transform_and_feature_chain(ladder):
    d, _ = ladder
    mat = np.asarray(read_object(str(d / "exp/tri2/final.mat"), "mat"))
    assert mat.shape == (12, 13 * 7)                      # ±3 frames of 13, to 12 dims
    assert os.readlink(d / "exp/tri2/final.mat") == "2.mat"  # LDA composed with pass 2's MLLT
    assert (d / "exp/tri2/splice_opts").read_text().split() == ["--left-context=3",
                                                                "--right-context=3"]
    assert not (d / "exp/tri2/delta_opts").exists()
    _, am = read_gmm_model(str(d / "exp/tri2/final.mdl"))
    assert am.dim == 12
    # the alignment directory carries the transform, so later stages see LDA features
    assert (d / "exp/tri2_ali/final.mat").read_bytes() == (d / "exp/tri2/final.mat").read_bytes()


def test_sat_transforms_alimdl_and_fmllr_alignments(ladder):
    d, out = ladder
    spks = sorted({k.split("-")[0] for k, _ in UTTS})
    trans = {}
    for n in (1, 2, 3):
        with SequentialReader(f"ark:{d}/exp/tri3/trans.{n}", "mat") as r:
            trans.update({k: np.asarray(m) for k, m in r})
    assert sorted(trans) == spks
    assert all(m.shape == (12, 13) for m in trans.values())
    assert any(np.abs(m[:, :12] - np.eye(12)).max() > 1e-3 for m in trans.values())
    tm, am = read_gmm_model(str(d / "exp/tri3/final.mdl"))
    _, ali_am = read_gmm_model(str(d / "exp/tri3/final.alimdl"))
    assert [len(g.weights) for g in ali_am] == [len(g.weights) for g in am]
    assert "using transforms from" not in out["tri3"]   # tri2_ali has none: estimated
    assert "0 of 60 utterances failed to align" in out["ali"]
    alis = {}
    for n in (1, 2, 3):
        alis.update(read_alis(d / f"exp/tri3_ali/ali.{n}.gz"))
    assert len(alis) == 60
    words = dict(UTTS)
    prons = {"YES": [2, 3, 6], "NO": [4, 5]}
    for key, ali in alis.items():
        got = [p for p in check_alignment(tm, ali) if p != 1]
        assert got == [p for w in words[key] for p in prons[w]]


def test_fmllr_features_for_the_dnn(ladder, monkeypatch):
    d, _ = ladder
    run(["steps/nnet/make_fmllr_feats.sh", "--nj", "3", "--transform-dir", "exp/tri3_ali",
         "data-fmllr/train", "data/train", "exp/tri3", "data-fmllr/train/log",
         "data-fmllr/train/data"], d)
    tgt = d / "data-fmllr/train"
    assert not (tgt / "cmvn.scp").exists()
    assert (tgt / "utt2spk").read_text() == (d / "data/train/utt2spk").read_text()
    with SequentialReader(f"scp:{tgt}/feats.scp", "mat") as r:
        feats = dict(r)
    assert len(feats) == 60 and {m.shape[1] for m in feats.values()} == {12}
    # the same matrices as the alignment directory's own feature chain (paths relative to d)
    monkeypatch.chdir(d)
    with open_features(f"pipeline:{d}/exp/tri3_ali/feats.1.json") as r:
        for k, m in r:
            assert np.asarray(m).tobytes() == np.asarray(feats[k]).tobytes()


def test_triphone_graph_and_fmllr_decoding(ladder):
    d, _ = ladder
    run(["utils/mkgraph.sh", "data/lang", "exp/tri3", "exp/tri3/graph"], d)
    out = run(["steps/decode_fmllr.sh", "--nj", "3", "--decoder", "faster", "--scoring-opts",
               "--min-lmwt 9 --max-lmwt 11", "exp/tri3/graph", "data/train",
               "exp/tri3/decode_train"], d)
    dec = d / "exp/tri3/decode_train"
    for n in (1, 2, 3):
        assert (dec / f"lat.{n}.gz").is_file() and (dec / f"trans.{n}").is_file()
        assert gzip.open(dec / f"lat.{n}.gz").read(1)
    si = d / "exp/tri3/decode_train.si"
    assert (si / "lat.1.gz").is_file()
    assert "decode.sh --nj 3 --cmd utils/run.py --decoder faster --model exp/tri3/final.alimdl" in out
    best = [line for line in out.splitlines() if "best: %WER" in line]
    assert len(best) == 2                                     # the si pass and the final one
    wer = float(best[-1].split("%WER")[1].split()[0])
    assert wer < 5.0, out   # (0 errors at the time of writing)


def test_kaldi_tri3_directory_for_the_dnn_steps(ladder):
    """A Kaldi user's exp/tri3, exp/tri3_ali and graph (only the files Kaldi's train_sat.sh,
    align_fmllr.sh and mkgraph.sh write; HCLG.fst a ConstFst; cmvn_opts Kaldi's default empty
    line) through make_fmllr_feats.sh, train.sh's alignment input and nnet/decode.sh: the same
    fMLLR features, targets and lattices as our own directories give."""
    d, _ = ladder
    run(["utils/mkgraph.sh", "data/lang", "exp/tri3", "exp/tri3/graph"], d)
    k = d / "kaldi"
    copy_as_kaldi_gmm_dir(d / "exp/tri3", k / "tri3")
    copy_as_kaldi_gmm_dir(d / "exp/tri3_ali", k / "tri3_ali")
    copy_as_kaldi_graph_dir(d / "exp/tri3/graph", k / "tri3/graph")
    assert not list(k.rglob("*.json")) and not (k / "tri3/context_opts").exists()
    assert (k / "tri3/graph/HCLG.fst").read_bytes()[8:13] == b"const"
    feats = {}
    for name, gmm, ali in (("ours", "exp/tri3", "exp/tri3_ali"),
                           ("kaldi", "kaldi/tri3", "kaldi/tri3_ali")):
        run(["steps/nnet/make_fmllr_feats.sh", "--nj", "3", "--transform-dir", ali,
             f"fmllr-{name}/train", "data/train", gmm, f"fmllr-{name}/log",
             f"fmllr-{name}/data"], d)
        # per-speaker statistics, as the recipes add them (train.sh wants cmvn.scp whenever
        # --cmvn-opts is set; these options leave the features as they are)
        run(["steps/compute_cmvn_stats.sh", f"fmllr-{name}/train", f"fmllr-{name}/log",
             f"fmllr-{name}/data"], d)
        with SequentialReader(f"scp:{d}/fmllr-{name}/train/feats.scp", "mat") as r:
            feats[name] = {key: np.asarray(m) for key, m in r}
    assert len(feats["kaldi"]) == 60
    for key, m in feats["ours"].items():   # bit for bit: an empty cmvn_opts is apply-cmvn's default
        assert feats["kaldi"][key].tobytes() == m.tobytes(), key
    train = ["steps/nnet/train.sh", "--hid-layers", "1", "--hid-dim", "16", "--max-iters", "1",
             "--minibatch-size", "64", "--cmvn-opts", "--norm-means=false --norm-vars=false"]
    for name, ali in (("ours", "exp/tri3_ali"), ("kaldi", "kaldi/tri3_ali")):
        run([*train, f"fmllr-{name}/train", f"fmllr-{name}/train", "data/lang", ali, ali,
             f"exp/dnn_{name}"], d)
    for f in ("pdf_ali.tr.ark", "final.mdl", "tree", "ali_train_pdf.counts", "final.nnet"):
        assert (d / "exp/dnn_kaldi" / f).read_bytes() == (d / "exp/dnn_ours" / f).read_bytes(), f
    for name, graph in (("ours", "exp/tri3/graph"), ("kaldi", "kaldi/tri3/graph")):
        run(["steps/nnet/decode.sh", "--nj", "3", "--scoring-opts", "--min-lmwt 10 --max-lmwt 10",
             graph, f"fmllr-{name}/train", f"exp/dnn_{name}/decode"], d)
    ours, theirs = d / "exp/dnn_ours/decode", d / "exp/dnn_kaldi/decode"
    wer = [[x for x in (y / "wer_10_0.0").read_text().splitlines() if "WER" in x]
           for y in (ours, theirs)]
    assert wer[0] == wer[1] and len(wer[0]) == 1
    for n in (1, 2, 3):   # the same best paths through the const graph as through ours
        best = [{key: best_path(lat, 1.0, 0.1)[0] for key, lat in
                 iter_compact_lattices(f"ark:gunzip -c {x}/lat.{n}.gz|")} for x in (ours, theirs)]
        assert best[0] == best[1] and len(best[0]) == 20
