"""Graphs, alignment, convert-ali and decoding with a context-dependent (triphone) tree through
nnetmix.hmm.h_transducer; for monophone trees the same code equals kaldi-hmm-gmm's output."""
from __future__ import annotations

import kaldi_hmm_gmm as khg  # noqa: I001 -- before kaldifst
import kaldifst
import numpy as np
import pytest
from helpers import (FIXTURES, ROOT, TINY_PHONES, TINY_WORDS, arcs_of, load_bin, one_gauss_model,
                     run_script, tiny_lexicon_fst, tiny_system, triphone_pdfs, triphone_tree)

from nnetmix.decode.graph import make_clg, make_h, make_hclga, make_lg
from nnetmix.hmm.convert_ali import change_reordering
from nnetmix.hmm.gmm_align import AlignOptions, align_utterance, scaled_transition_log_probs
from nnetmix.hmm.graphs import CdGraphCompiler, GraphCompilerOptions, TrainGraphCompiler
from nnetmix.hmm.h_transducer import HTransducerError, add_self_loops, get_h_transducer
from nnetmix.hmm.khg import (from_khg_transition_model, to_khg_context_dependency,
                             to_khg_transition_model)
from nnetmix.kaldi import (SequentialReader, TableWriter, TransitionModel, read_gmm_model,
                           read_tree, write_gmm_model, write_tree)

SIL, A, B = 1, 2, 3


def run(tool: str, *argv) -> int:
    return load_bin(tool).main(["--print-args=false", *map(str, argv)])


def finals_of(fst) -> list[float]:
    return [fst.final(s).value for s in range(fst.num_states)]


def assert_same_fst(a, b, tol: float = 0.0):
    """Same start, states, arcs in order and labels; weights equal within ``tol``."""
    assert (a.start, a.num_states) == (b.start, b.num_states)
    arcs_a, arcs_b = arcs_of(a), arcs_of(b)
    for s in arcs_a:
        assert [x[:2] + x[3:] for x in arcs_a[s]] == [x[:2] + x[3:] for x in arcs_b[s]], s
        np.testing.assert_allclose([x[2] for x in arcs_a[s]], [x[2] for x in arcs_b[s]],
                                   atol=tol, rtol=0)
    np.testing.assert_allclose(finals_of(a), finals_of(b), atol=tol, rtol=0)


@pytest.fixture(scope="module")
def mono():
    tm, tree, L, G = tiny_system()
    kc = to_khg_context_dependency(tree, tm.topo)
    return tm, tree, L, G, kc, to_khg_transition_model(tm, ctx_dep=kc)


@pytest.fixture(scope="module")
def tri():
    tm0, _tree0, _L, _G = tiny_system()
    tree = triphone_tree()
    return tree, TransitionModel.build(tree, tm0.topo)


# -- monophone trees: our H, self-loops and graphs equal kaldi-hmm-gmm's -----------------------
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_h_of_monophone_tree_equals_bindings(mono, scale):
    tm, tree, L, G, kc, ktm = mono
    _CLG, ilabels = make_clg(make_lg(L, G), [4, 5], 1, 0)
    ours, dis = get_h_transducer(ilabels, tree, tm, scale)
    ref, ref_dis = make_h(ilabels, kc, ktm, scale)
    assert dis == ref_dis
    assert arcs_of(ours) == arcs_of(ref) and finals_of(ours) == finals_of(ref)


def test_h_of_kaldi_yesno_tree_equals_bindings():
    """Kaldi's own trained yesno model and a disambiguation symbol in the windows. The
    bindings' transition model gets its trained probabilities back through mle_update, which
    moves them (by up to 1.3e-4 here), so the comparison uses the bindings' probabilities
    (``from_khg_transition_model``): then weights agree to 1e-6 (numpy's float32 exp/log
    against the C library's, in log(1 - p(self-loop))). With the model file's own
    probabilities, our self-loop weights are exactly its log-probabilities."""
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} not present")
    y = FIXTURES / "yesno"
    tree = read_tree(str(y / "tree"))
    tm, _am = read_gmm_model(str(y / "40.mdl"))
    kc = to_khg_context_dependency(tree, tm.topo)
    ktm = to_khg_transition_model(tm, ctx_dep=kc)
    L = kaldifst.StdVectorFst.read(str(y / "L_disambig.fst"))
    G = kaldifst.StdVectorFst.read(str(y / "G.fst"))
    CLG, ilabels = make_clg(make_lg(L, G), [7, 8], 1, 0)
    assert [-8] in ilabels
    tm_k = from_khg_transition_model(ktm)
    ours, dis = get_h_transducer(ilabels, tree, tm_k)
    ref, ref_dis = make_h(ilabels, kc, ktm)
    assert dis == ref_dis == [tm.num_transition_ids + 1]
    assert_same_fst(ours, ref, tol=1e-6)
    HCLGa = make_hclga(ref, CLG, ref_dis)
    want = khg.add_self_loops(trans_model=ktm, ifst=HCLGa, self_loop_scale=0.1,
                              disambig_syms=[], reorder=True)
    assert_same_fst(add_self_loops(tm_k, HCLGa, 0.1), want, tol=1e-6)
    got = add_self_loops(tm, HCLGa, 0.1)
    assert_same_fst(got, want, tol=2e-4)
    loops = [(t, w) for arcs in arcs_of(got).values() for t, _o, w, _d in arcs
             if t and tm.tid_is_selfloop[t]]
    assert loops and all(w == np.float32(-tm.log_probs[t] * np.float32(0.1)) for t, w in loops)


@pytest.mark.parametrize("reorder", [True, False])
@pytest.mark.parametrize("scale", [0.1, 1.0])
def test_self_loops_equal_bindings(mono, reorder, scale):
    tm, tree, L, G, kc, ktm = mono
    CLG, ilabels = make_clg(make_lg(L, G), [4, 5], 1, 0)
    Ha, dis = make_h(ilabels, kc, ktm)
    HCLGa = make_hclga(Ha, CLG, dis)
    ours = add_self_loops(tm, HCLGa, scale, reorder)
    ref = khg.add_self_loops(trans_model=ktm, ifst=HCLGa, self_loop_scale=scale,
                             disambig_syms=[], reorder=reorder)
    assert arcs_of(ours) == arcs_of(ref) and finals_of(ours) == finals_of(ref)
    with pytest.raises(HTransducerError, match="already has self-loops"):
        add_self_loops(tm, ours, scale, reorder)


@pytest.mark.parametrize("opts", [GraphCompilerOptions(), GraphCompilerOptions(1.0, 0.1),
                                  GraphCompilerOptions(1.0, 1.0, reorder=False)])
def test_our_training_graphs_equal_bindings_on_monophone_tree(mono, opts):
    tm, tree, _L, _G, _kc, _ktm = mono
    lex = tiny_lexicon_fst()
    for words in ([1], [1, 2], [2, 2, 1]):
        ref = TrainGraphCompiler(tree, tm, lex, [], opts).compile(words)
        ours = CdGraphCompiler(tree, tm, lex, [], opts).compile(words)
        assert arcs_of(ours) == arcs_of(ref) and finals_of(ours) == finals_of(ref)


# -- a triphone tree ---------------------------------------------------------------------------
def test_triphone_tree_and_model(tri):
    tree, tm = tri
    assert (tree.N, tree.P, tree.num_pdfs, tm.num_pdfs) == (3, 1, 11, 11)
    assert triphone_pdfs([A, B]) == [[1, 3, 5], [7, 8, 9]]
    assert triphone_pdfs([B, SIL, A]) == [[6, 8, 9], [0, 0, 0], [1, 3, 4]]
    with pytest.raises(HTransducerError, match="tree expects 3"):
        get_h_transducer([[], [A]], tree, tm)


def _planted(tm, pdf_seq, durs):
    """(T, pdfs) log-likelihoods where the planted pdf of each frame is clearly best."""
    truth = np.repeat(pdf_seq, durs)
    rng = np.random.default_rng(len(truth))
    ll = rng.normal(-60.0, 5.0, (len(truth), tm.num_pdfs))
    ll[np.arange(len(truth)), truth] = -20.0
    return truth, ll


def lexicon_with_disambig():
    """tiny_lexicon_fst with A's pronunciation ending in #1 (phone 5), as L_disambig.fst."""
    return kaldifst.compile("0\t2\t2\t1\t0.693147\n2\t0\t5\t0\n0\t1\t2\t1\t0.693147\n"
                            "0\t0\t3\t2\t0.693147\n0\t1\t3\t2\t0.693147\n1\t0\t1\t0\n"
                            "0\t0.0\n1\t0.0\n")


@pytest.mark.parametrize("disambig", [False, True])
@pytest.mark.parametrize("words,phones", [([1, 2], [A, B]), ([2, 1], [B, SIL, A]),
                                          ([1, 1, 2], [A, A, SIL, B])])
def test_triphone_graphs_align_to_the_transcript(tri, words, phones, disambig):
    tree, tm = tri
    lex, syms = (lexicon_with_disambig(), [4, 5]) if disambig else (tiny_lexicon_fst(), [])
    g = TrainGraphCompiler(tree, tm, lex, syms).compile(words)
    labels = {a[0] for arcs in arcs_of(g).values() for a in arcs}
    assert max(labels) <= tm.num_transition_ids  # H's disambiguation symbols are gone
    pdf_seq = [p for ph in triphone_pdfs(phones) for p in ph]
    truth, ll = _planted(tm, pdf_seq, [2 + i % 3 for i in range(len(pdf_seq))])
    trans = scaled_transition_log_probs(tm.log_probs.astype(np.float64),
                                        tm.tid2state.astype(np.int64), tm.tid_is_selfloop)
    res = align_utterance(g, ll, tm.tid2pdf, AlignOptions(), trans_log_probs=trans, key="u")
    assert res.ok and res.words == words
    np.testing.assert_array_equal(tm.tid2pdf[res.alignment], truth)
    assert [int(tm.tid2phone[s[0]]) for s in tm.split_to_phones(res.alignment)] == phones
    assert tm.is_reordered(res.alignment)


def _write_system(d, tree, tm, dim=6):
    d.mkdir(parents=True, exist_ok=True)
    am = one_gauss_model(tm.num_pdfs, dim)
    write_tree(str(d / "tree"), tree)
    write_gmm_model(str(d / "final.mdl"), tm, am)
    return am


def _feats(am, tm_pdfs, durs, seed=0):
    rng = np.random.default_rng(seed)
    rows = [am[int(p)].means[0] + 0.3 * rng.normal(size=am.dim) for p in np.repeat(tm_pdfs,
                                                                                    durs)]
    return np.array(rows, dtype=np.float32)


UTTS = {"u1": ([1, 2], [A, B]), "u2": ([2, 1], [B, SIL, A]), "u3": ([2, 2], [B, B])}


@pytest.mark.parametrize("compact", [False, True])
def test_compile_train_graphs_and_align_tools_with_triphone_tree(tri, tmp_path, compact,
                                                                 monkeypatch):
    import nnetmix.hmm.align_tools as align_tools
    # compact: each graph relabelled to its own transition-ids (what a big model takes)
    monkeypatch.setattr(align_tools, "_COMPACT_TIDS", 0 if compact else 10 ** 9)
    tree, tm = tri
    am = _write_system(tmp_path / "tri", tree, tm)
    tiny_lexicon_fst().write(str(tmp_path / "L.fst"))
    (tmp_path / "text.int").write_text("".join(f"{k} {' '.join(map(str, w))}\n"
                                               for k, (w, _p) in UTTS.items()))
    with TableWriter(f"ark:{tmp_path}/feats.ark", "mat") as w:
        for k, (_w, phones) in UTTS.items():
            pdfs = [p for ph in triphone_pdfs(phones) for p in ph]
            w[k] = _feats(am, pdfs, [3 + i % 2 for i in range(len(pdfs))])
    d = tmp_path / "tri"
    assert run("compile-train-graphs.py", d / "tree", d / "final.mdl", tmp_path / "L.fst",
               f"ark:{tmp_path}/text.int", f"ark:{tmp_path}/fsts") == 0
    assert run("gmm-align-compiled.py", d / "final.mdl", f"ark:{tmp_path}/fsts",
               f"ark:{tmp_path}/feats.ark", f"ark:{tmp_path}/ali") == 0
    with SequentialReader(f"ark:{tmp_path}/ali", "ivec") as r:
        alis = dict(r)
    assert sorted(alis) == sorted(UTTS)
    for k, (_w, phones) in UTTS.items():
        split = tm.split_to_phones(alis[k])
        assert [int(tm.tid2phone[s[0]]) for s in split] == phones
        pdfs = [[int(tm.tid2pdf[t]) for t in s] for s in split]
        assert [sorted(set(p)) for p in pdfs] == [sorted(set(p)) for p in triphone_pdfs(phones)]


# -- convert-ali --------------------------------------------------------------------------------
def _mono_alignment(tm, phones, durs):
    """A reordered monophone alignment: per HMM state its forward transition, then self-loops
    (silence goes 0 -> 1 -> 2 -> end)."""
    ali = []
    for phone, ds in zip(phones, durs):
        for h, d in enumerate(ds):
            tids = [t for t in range(1, tm.num_transition_ids + 1)
                    if tm.tid2phone[t] == phone and tm.tid2hmm_state[t] == h]
            loop = [t for t in tids if tm.tid_is_selfloop[t]][0]
            nxt = [t for t in tids if not tm.tid_is_selfloop[t]
                   and tm.topo.topology_for_phone(phone)[h].transitions[tm.tid2index[t]][0]
                   == h + 1][0]
            ali += [nxt] + [loop] * (d - 1)
    return np.array(ali, dtype=np.int32)


def _mono_and_tri(mono, tri, tmp_path):
    """tiny_system's monophone and triphone systems written to tmp_path/{mono,tri}/{final.mdl,
    tree}; returns their transition models."""
    _write_system(tmp_path / "mono", mono[1], mono[0])
    _write_system(tmp_path / "tri", tri[0], tri[1])
    return mono[0], tri[1]


@pytest.mark.parametrize("reorder", [True, False])
def test_convert_ali_monophone_to_triphone(mono, tri, tmp_path, reorder):
    tm0, tm = _mono_and_tri(mono, tri, tmp_path)
    seqs = {"u1": ([A, B], [[2, 3, 1], [1, 4, 2]]),
            "u2": ([B, SIL, A, A], [[1, 1, 1], [3, 2, 2], [2, 2, 2], [1, 2, 5]])}
    with TableWriter(f"ark:{tmp_path}/mono.ali", "ivec") as w:
        for k, (phones, durs) in seqs.items():
            w[k] = _mono_alignment(tm0, phones, durs)
    assert run("convert-ali.py", f"--reorder={str(reorder).lower()}",
               tmp_path / "mono" / "final.mdl", tmp_path / "tri" / "final.mdl",
               tmp_path / "tri" / "tree", f"ark:{tmp_path}/mono.ali",
               f"ark:{tmp_path}/tri.ali") == 0
    with SequentialReader(f"ark:{tmp_path}/tri.ali", "ivec") as r:
        out = dict(r)
    for k, (phones, durs) in seqs.items():
        ali = out[k]
        assert len(ali) == sum(map(sum, durs))
        if not reorder:
            assert not tm.is_reordered(ali)
            ali = change_reordering(tm, ali)
        np.testing.assert_array_equal(tm.tid2hmm_state[ali],
                                      np.concatenate([np.repeat(np.arange(3), d) for d in durs]))
        assert [int(tm.tid2phone[s[0]]) for s in tm.split_to_phones(ali)] == phones
        want = np.concatenate([np.repeat(p, d) for p, d in zip(triphone_pdfs(phones), durs)])
        np.testing.assert_array_equal(tm.tid2pdf[ali], want)


def test_convert_ali_refuses_alignments_from_another_model(mono, tri, tmp_path, capfd):
    tm0, tm = _mono_and_tri(mono, tri, tmp_path)
    with TableWriter(f"ark:{tmp_path}/bad.ali", "ivec") as w:
        w["ok1"] = _mono_alignment(tm0, [A], [[1, 1, 1]])
        w["bad2"] = np.array([1, 2, 999], dtype=np.int32)
    rc = run("convert-ali.py", tmp_path / "mono" / "final.mdl", tmp_path / "tri" / "final.mdl",
             tmp_path / "tri" / "tree", f"ark:{tmp_path}/bad.ali", f"ark:{tmp_path}/out.ali")
    err = [ln for ln in capfd.readouterr().err.splitlines() if ln.startswith("ERROR")]
    assert rc != 0 and len(err) == 1
    assert "bad.ali" in err[0] and "bad2" in err[0] and "999" in err[0]
    assert not (tmp_path / "out.ali").exists()


# -- mkgraph.sh and decoding --------------------------------------------------------------------
def test_mkgraph_and_decode_with_triphone_tree(tri, tmp_path):
    tree, tm = tri
    _tm0, _tree0, L, G = tiny_system()
    lang = tmp_path / "lang"
    (lang / "phones").mkdir(parents=True)
    L.write(str(lang / "L_disambig.fst"))
    G.write(str(lang / "G.fst"))
    (lang / "words.txt").write_text(TINY_WORDS)
    (lang / "phones.txt").write_text(TINY_PHONES)
    (lang / "phones" / "disambig.int").write_text("4\n5\n")
    (lang / "phones" / "silence.csl").write_text("1\n")
    am = _write_system(tmp_path / "tri", tree, tm)
    (tmp_path / "utils").symlink_to(ROOT / "utils")
    proc = run_script(["utils/mkgraph.sh", "--mono", "lang", "tri", "tri/graph"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "deprecated and ignored" in proc.stdout
    assert (lang / "tmp" / "CLG_3_1.fst").is_file() and (lang / "tmp" / "ilabels_3_1").is_file()
    assert (tmp_path / "tri" / "graph" / "num_pdfs").read_text().strip() == "11"
    want = {"u1": ([1, 2], [A, B]), "u2": ([2, 1, 1], [B, SIL, A, A]), "u3": ([2], [B])}
    with TableWriter(f"ark:{tmp_path}/feats.ark", "mat") as w:
        for k, (_w, phones) in want.items():
            pdfs = [p for ph in triphone_pdfs(phones) for p in ph]
            w[k] = _feats(am, pdfs, [2 + (i * 7) % 4 for i in range(len(pdfs))], seed=3)
    g = tmp_path / "tri" / "graph"
    assert run("gmm-latgen-faster.py", "--beam=13", "--lattice-beam=6",
               f"--word-symbol-table={g}/words.txt", tmp_path / "tri" / "final.mdl",
               g / "HCLG.fst", f"ark:{tmp_path}/feats.ark", f"ark:{tmp_path}/lat",
               f"ark,t:{tmp_path}/words.txt") == 0
    got = {ln.split()[0]: [int(x) for x in ln.split()[1:]]
           for ln in (tmp_path / "words.txt").read_text().splitlines()}
    assert got == {k: w for k, (w, _p) in want.items()}


def test_compile_train_graphs_with_a_tree_from_another_model(mono, tri, tmp_path, capfd):
    tm0 = mono[0]
    tree, _tm = tri
    d = tmp_path / "mixed"
    _write_system(d, tree, tm0)  # a triphone tree beside a monophone model
    tiny_lexicon_fst().write(str(tmp_path / "L.fst"))
    (tmp_path / "text.int").write_text("u1 1 2\n")
    rc = run("compile-train-graphs.py", d / "tree", d / "final.mdl", tmp_path / "L.fst",
             f"ark:{tmp_path}/text.int", f"ark:{tmp_path}/fsts")
    err = [ln for ln in capfd.readouterr().err.splitlines() if ln.startswith("ERROR")]
    assert rc != 0 and len(err) == 1
    assert "final.mdl" in err[0] and "u1" in err[0] and "do not match" in err[0]
    assert not (tmp_path / "fsts").exists()


def test_convert_ali_phone_map_and_truncated_alignment(mono, tri, tmp_path, capfd):
    tm0, tm = _mono_and_tri(mono, tri, tmp_path)
    (tmp_path / "map").write_text("1 1\n2 3\n3 2\n")
    full = _mono_alignment(tm0, [A, B], [[2, 1, 1], [1, 1, 3]])
    with TableWriter(f"ark:{tmp_path}/in.ali", "ivec") as w:
        w["cut"] = full[:-3]  # b's last state missing: no final transition
        w["whole"] = full
    assert run("convert-ali.py", f"--phone-map={tmp_path}/map", tmp_path / "mono" / "final.mdl",
               tmp_path / "tri" / "final.mdl", tmp_path / "tri" / "tree",
               f"ark:{tmp_path}/in.ali", f"ark:{tmp_path}/out.ali") == 0
    err = capfd.readouterr().err
    assert "Could not convert alignment for key cut" in err
    assert "Succeeded converting alignments for 1 files, failed for 1" in err
    with SequentialReader(f"ark:{tmp_path}/out.ali", "ivec") as r:
        out = dict(r)
    assert list(out) == ["whole"]
    ali = out["whole"]
    assert [int(tm.tid2phone[s[0]]) for s in tm.split_to_phones(ali)] == [B, A]
    want = np.concatenate([np.repeat(p, d) for p, d in zip(triphone_pdfs([B, A]),
                                                           [[2, 1, 1], [1, 1, 3]])])
    np.testing.assert_array_equal(tm.tid2pdf[ali], want)


# -- convert-ali --frame-subsampling-factor ------------------------------------------------------
def test_new_phone_lengths_by_hand():
    from nnetmix.hmm.convert_ali import new_phone_lengths
    # boundaries 0, 5, 9, 16 -> (t + 2) // 3 = 0, 2, 3, 6: lengths 2, 1, 3
    assert new_phone_lengths([1, 1, 1], [5, 4, 7], 2, 3) == [2, 1, 3]
    # phone 0 needs 3: the nearest spare frame is phone 2's (1 frame away on the right)
    assert new_phone_lengths([3, 1, 1], [5, 4, 7], 2, 3) == [3, 1, 2]
    # the middle phone needs 2: left and right are both 0 frames away -> the right one gives
    assert new_phone_lengths([1, 2, 1], [5, 4, 7], 2, 3) == [2, 2, 2]
    # lengths 2, 2, 0, 1: phone 2 needs 2 and the right has none to spare; the left gives
    assert new_phone_lengths([1, 1, 2, 1], [6, 6, 1, 2], 0, 3) == [1, 1, 2, 1]
    # a tie at 1 frame away goes right, then only the left has a spare frame
    assert new_phone_lengths([1, 1, 3, 1, 1], [3, 1, 1, 1, 2], 0, 1) == [2, 1, 3, 1, 1]
    assert new_phone_lengths([3, 3], [4, 4], 2, 3) is None   # 3 frames for 6 needed
    assert new_phone_lengths([1, 1], [4, 5], 0, 1) == [4, 5]


def _check_path(tm, seg, reordered):
    """The phone segment is a path through its HMM from state 0 to the final state."""
    seg = np.asarray(seg, dtype=np.int32)
    if reordered:
        seg = change_reordering(tm, seg)
    entry = tm.topo.topology_for_phone(int(tm.tid2phone[seg[0]]))
    h = 0
    for tid in seg.tolist():
        assert tm.tid2hmm_state[tid] == h
        h = entry[h].transitions[tm.tid2index[tid]][0]
    assert h == len(entry) - 1


@pytest.mark.parametrize("reorder", [True, False])
def test_convert_ali_frame_subsampling(mono, tri, tmp_path, reorder, capfd):
    tm0, tm = _mono_and_tri(mono, tri, tmp_path)
    seqs = {"u1": ([A, B], [[3, 4, 2], [2, 5, 3]]),
            "u2": ([B, SIL, A, A], [[2, 3, 4], [4, 3, 3], [3, 3, 3], [2, 3, 5]]),
            "short": ([A, B], [[1, 1, 1], [1, 1, 2]])}   # 7 frames: 3 at rate 1/3, 6 needed
    with TableWriter(f"ark:{tmp_path}/mono.ali", "ivec") as w:
        for k, (phones, durs) in seqs.items():
            w[k] = _mono_alignment(tm0, phones, durs)
    args = [tmp_path / "mono" / "final.mdl", tmp_path / "tri" / "final.mdl",
            tmp_path / "tri" / "tree", f"ark:{tmp_path}/mono.ali"]
    for repeat in ("false", "true"):
        assert run("convert-ali.py", f"--reorder={str(reorder).lower()}",
                   "--frame-subsampling-factor=3", f"--repeat-frames={repeat}", *args,
                   f"ark:{tmp_path}/tri.{repeat}.ali") == 0
        err = capfd.readouterr().err
        assert "Failed to produce suitable phone lengths" in err
        assert "Succeeded converting alignments for 2 files, failed for 1" in err
    with SequentialReader(f"ark:{tmp_path}/tri.false.ali", "ivec") as r:
        sub = dict(r)
    with SequentialReader(f"ark:{tmp_path}/tri.true.ali", "ivec") as r:
        rep = dict(r)
    assert sorted(sub) == sorted(rep) == ["u1", "u2"]
    for k in sub:
        phones, durs = seqs[k]
        T = sum(map(sum, durs))
        assert len(sub[k]) == (T + 2) // 3       # subsample-feats' length
        assert len(rep[k]) == T                  # repeated back to the input's length
        # the subsampled alignment, and each of the interleaved shifts, is a valid triphone
        # alignment of the same phones with the tree's pdfs in context
        for ali in [sub[k]] + [rep[k][j::3] for j in range(3)]:
            if tm.tid_is_selfloop[ali].any():        # (no self-loop: either order)
                assert tm.is_reordered(ali) == reorder
            segs = tm.split_to_phones(ali)
            assert [int(tm.tid2phone[s[0]]) for s in segs] == phones
            for seg, pdfs in zip(segs, triphone_pdfs(phones)):
                _check_path(tm, seg, reorder)
                assert set(tm.tid2pdf[seg].tolist()) == set(pdfs)
        # repeat-frames' first shift (F-1) is the plain subsampled conversion's time axis
        assert len(rep[k][0::3]) == len(sub[k])


def test_convert_ali_refuses_zero_subsampling_factor(mono, tri, tmp_path, capfd):
    tm0, tm = _mono_and_tri(mono, tri, tmp_path)
    with TableWriter(f"ark:{tmp_path}/in.ali", "ivec") as w:
        w["u"] = _mono_alignment(tm0, [A], [[1, 1, 1]])
    assert run("convert-ali.py", "--frame-subsampling-factor=0", tmp_path / "mono" / "final.mdl",
               tmp_path / "tri" / "final.mdl", tmp_path / "tri" / "tree",
               f"ark:{tmp_path}/in.ali", f"ark:{tmp_path}/out.ali") != 0
    assert "--frame-subsampling-factor=0: must be >= 1" in capfd.readouterr().err
    assert not (tmp_path / "out.ali").exists()


def test_convert_ali_to_another_topology_draws_paths(mono, caplog, monkeypatch):
    """A phone whose HMM differs in the new model (here 2 states instead of 3) gets a path of
    its old length through the new HMM, with Kaldi's one warning."""
    from nnetmix.hmm.convert_ali import convert_alignment
    from nnetmix.kaldi.context_dep import monophone_context_dependency
    from nnetmix.kaldi.hmm_topology import default_topology
    # the warning is given once per process, as Kaldi's: start this test unwarned
    monkeypatch.setitem(convert_alignment.__globals__, "_warned_topology", [])
    tm0 = mono[0]
    topo2 = default_topology([1, 2, 3], [1], 2, 3)
    tree2 = monophone_context_dependency([1, 2, 3], topo2.phone_to_num_pdf_classes())
    tm2 = TransitionModel.build(tree2, topo2)
    durs = [[2, 3, 1], [3, 3, 3], [1, 1, 1]]
    ali = _mono_alignment(tm0, [A, SIL, B], durs)
    with caplog.at_level("WARNING"):
        out = convert_alignment(tm0, tm2, tree2, ali, reorder=True,
                                rng=np.random.default_rng(5))
    assert "Topology mismatch detected; automatically converting" in caplog.text
    segs = tm2.split_to_phones(out)
    assert [int(tm2.tid2phone[s[0]]) for s in segs] == [A, SIL, B]
    assert [len(s) for s in segs] == [sum(d) for d in durs]
    for seg in segs:
        _check_path(tm2, seg, True)
    # silence keeps its topology: its transition-ids are mapped, not drawn
    sil0 = ali[sum(durs[0]):sum(durs[0]) + sum(durs[1])]
    np.testing.assert_array_equal(tm2.tid2hmm_state[segs[1]], tm0.tid2hmm_state[sil0])
