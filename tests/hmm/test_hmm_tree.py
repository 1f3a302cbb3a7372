"""Tree building (acc-tree-stats, sum-tree-stats, cluster-phones, compile-questions, build-tree,
gmm-init-model, gmm-mixup, draw-tree): Kaldi's file layouts against hand-written bytes, the split
gain against a hand computation, a known split found on synthetic statistics, --max-leaves, bad
input, and the whole chain on Kaldi's yesno alignments."""
import struct

import numpy as np
import pytest
from helpers import FIXTURES, load_bin

from nnetmix.errors import FormatError, UsageError
from nnetmix.hmm.tree_build import BuildTreeOptions, Roots, build_tree
from nnetmix.hmm.tree_cluster import Points, cluster_bottom_up, refine_clusters
from nnetmix.hmm.tree_questions import (Questions, QuestionsForKey, compile_questions,
                                        read_int_lists, read_questions)
from nnetmix.hmm.tree_stats import (AccTreeStatsOptions, TreeStats, accumulate_tree_stats,
                                    read_tree_stats, write_tree_stats)
from nnetmix.kaldi import SequentialReader, TableWriter
from nnetmix.kaldi.context_dep import SplitEventMap, TableEventMap, read_tree
from nnetmix.kaldi.diag_gmm import AmDiagGmm, DiagGmm, read_gmm_model, write_gmm_model
from nnetmix.kaldi.hmm_topology import read_topology_text, write_topology
from nnetmix.kaldi.objects import read_object
from nnetmix.kaldi.transition_model import TransitionModel, read_transition_model

YESNO = FIXTURES / "yesno"
LOG_2PI = np.log(2 * np.pi)

ONE_STATE_TOPO = """<Topology>
<TopologyEntry>
<ForPhones>
1 2 3 4 5
</ForPhones>
<State> 0 <PdfClass> 0 <Transition> 0 0.5 <Transition> 1 0.5 </State>
<State> 1 </State>
</TopologyEntry>
</Topology>
"""


def _i32(x):
    return b"\x04" + struct.pack("<i", x)


def _u32(x):
    return b"\xfc" + struct.pack("<I", x)


def _stats_from_frames(groups):
    """TreeStats from {event: frames} by direct sums (the reference for the accumulator)."""
    events = sorted(groups)
    return TreeStats(events, np.array([len(groups[e]) for e in events], float),
                     np.stack([groups[e].sum(0) for e in events]),
                     np.stack([(groups[e] ** 2).sum(0) for e in events]),
                     np.full(len(events), 0.01, np.float32))


def _hand_objf(frames):
    """Log-likelihood of frames under their own ML diagonal Gaussian."""
    n, d = frames.shape
    var = frames.var(0)
    return -0.5 * n * (d * LOG_2PI + np.log(var).sum() + d)


def _questions_asked(em, out=None):
    """(key, yes-set) of every SplitEventMap in a tree."""
    out = set() if out is None else out
    if isinstance(em, SplitEventMap):
        out.add((em.key, em.yes_set))
        _questions_asked(em.yes, out)
        _questions_asked(em.no, out)
    elif isinstance(em, TableEventMap):
        for child in em.table:
            _questions_asked(child, out)
    return out


# -- file layouts ---------------------------------------------------------------------------------
def test_tree_stats_are_kaldis_bytes(tmp_path):
    """WriteBuildTreeStats of one GaussClusterable, written out by hand from Kaldi's code."""
    ev = ((-1, 0), (0, 0), (1, 2), (2, 3))
    st = TreeStats([ev], np.array([2.0]), np.array([[1.0, 3.0]]), np.array([[1.0, 5.0]]),
                   np.array([0.01], np.float32))
    body = (b"BTS " + _u32(1) + b"EV " + _u32(4)
            + b"".join(_i32(k) + _i32(v) for k, v in ev)
            + b"TGCL " + b"\x08" + struct.pack("<d", 2.0) + b"\x04" + struct.pack("<f", 0.01)
            + b"DM " + _i32(2) + _i32(2) + np.array([1.0, 3.0, 1.0, 5.0]).tobytes())
    assert st.to_bytes(True) == body
    text = b"BTS 1 EV 4 -1 0 0 0 1 2 2 3 \nT GCL 2 0.01  [\n  1 3 \n  1 5 ]\n\n"
    assert st.to_bytes(False) == text
    for binary, name in ((True, "b.acc"), (False, "t.acc")):
        write_tree_stats(str(tmp_path / name), st, binary)
        back = read_tree_stats(str(tmp_path / name))
        assert back.events == [ev] and back.x2.tolist() == [[1.0, 5.0]]
        assert back.to_bytes(binary) == (body if binary else text)
    assert (tmp_path / "b.acc").read_bytes() == b"\0B" + body


def test_questions_are_kaldis_bytes(tmp_path):
    q = Questions({-1: QuestionsForKey([(0,)], 0, 2), 0: QuestionsForKey([(1,), (1, 2)], 0, 2)})
    ivec = lambda v: b"\x04" + struct.pack("<i", len(v)) + np.array(v, "<i4").tobytes()  # noqa
    opts = b"<RefineClustersOptions> " + _i32(0) + _i32(2) + b"</RefineClustersOptions> "
    body = (b"<Questions> <Key> " + _i32(-1) + b"<QuestionsForKey> " + _i32(1) + ivec([0])
            + opts + b"</QuestionsForKey> <Key> " + _i32(0) + b"<QuestionsForKey> " + _i32(2)
            + ivec([1]) + ivec([1, 2]) + opts + b"</QuestionsForKey> </Questions> ")
    assert q.to_bytes(True) == body
    text = (b"<Questions> <Key> -1 <QuestionsForKey> 1 [ 0 ]\n<RefineClustersOptions> 0 2 "
            b"</RefineClustersOptions> </QuestionsForKey> <Key> 0 <QuestionsForKey> 2 [ 1 ]\n"
            b"[ 1 2 ]\n<RefineClustersOptions> 0 2 </RefineClustersOptions> </QuestionsForKey> "
            b"</Questions> ")
    assert q.to_bytes(False) == text
    for binary in (True, False):
        path = tmp_path / f"q{binary}"
        path.write_bytes((b"\0B" if binary else b"") + q.to_bytes(binary))
        assert read_questions(str(path)) == q


def test_compile_questions_sets_every_key(tmp_path):
    topo = read_topology_text(ONE_STATE_TOPO.replace("<State> 0 <PdfClass> 0",
                                                     "<State> 0 <PdfClass> 0"))
    q = compile_questions(topo, [[3, 1], [2, 4, 5], [1, 2, 3], [1, 3]], "questions.int",
                          context_width=3, num_iters_refine=0, leftmost_questions_truncate=2)
    assert q.keys() == [-1, 0, 1, 2]
    assert q[1].questions == [(1, 2, 3), (1, 3), (2, 4, 5)]    # sorted, duplicate removed
    assert q[0].questions == [(1, 2, 3), (1, 3)]               # --leftmost-questions-truncate
    assert q[-1].questions == []                               # one pdf-class: nothing to ask
    with pytest.raises(FormatError, match=r"questions.int: questions do not cover phones 5"):
        compile_questions(topo, [[1, 2], [3, 4]], "questions.int")
    with pytest.raises(FormatError, match=r"questions.int: questions ask about phones 9"):
        compile_questions(topo, [[1, 2, 3, 4, 5], [9]], "questions.int")


# -- the split gain -------------------------------------------------------------------------------
def test_split_gain_equals_hand_computation():
    """One leaf, key 0 with values 1 and 2: the gain of the question [1] is the log-likelihood
    of the two halves under their own Gaussians minus that of the union under one."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=(40, 3)) + [2.0, 0.0, 1.0]
    b = rng.normal(size=(25, 3)) * [1.0, 2.0, 0.5]
    st = _stats_from_frames({((-1, 0), (0, 1), (1, 4)): a, ((-1, 0), (0, 2), (1, 4)): b})
    from nnetmix.hmm.tree_build import _SplitContext
    q = Questions({0: QuestionsForKey([(1,), (2, 3)], 0, 2), 1: QuestionsForKey([(4,)], 0, 2)})
    ctx = _SplitContext(st, q, [-1, 0, 1])
    gain, yes = ctx.best_split_for_key(np.arange(2), 0)
    expect = _hand_objf(a) + _hand_objf(b) - _hand_objf(np.vstack([a, b]))
    assert gain == pytest.approx(expect, rel=1e-9) and expect > 0
    assert yes == (1,)
    assert ctx.best_split_for_key(np.arange(2), 1) == (0.0, ())   # one value: no split
    # refinement from a useless question finds the same split
    q2 = Questions({0: QuestionsForKey([(3,)], 5, 2)})
    gain2, yes2 = _SplitContext(st, q2, [-1, 0, 1]).best_split_for_key(np.arange(2), 0)
    assert gain2 == pytest.approx(expect, rel=1e-9) and yes2 in ((1,), (0, 2))


def test_bottom_up_merges_cheapest_pairs_first():
    rng = np.random.default_rng(1)
    frames = [rng.normal(size=(50, 2)) + m for m in ([0, 0], [0.1, 0], [5, 5], [5.1, 5])]
    pts = Points(np.array([50.0] * 4), np.stack([f.sum(0) for f in frames]),
                 np.stack([(f ** 2).sum(0) for f in frames]), 0.01)
    (assign,), change = cluster_bottom_up([pts], min_clust=2)
    assert assign.tolist() == [0, 0, 1, 1] and change < 0
    merged = [np.vstack(frames[:2]), np.vstack(frames[2:])]
    expect = sum(_hand_objf(m) for m in merged) - sum(_hand_objf(f) for f in frames)
    assert change == pytest.approx(expect, rel=1e-9)
    wrong = np.array([0, 1, 0, 1])
    assert refine_clusters(pts, wrong, 2) > 0 and len(set(wrong[:2])) == 1


# -- build-tree on synthetic statistics -----------------------------------------------------------
def _synthetic_stats(rng):
    """Phones 1-5 with one pdf-class; phone 3's frames depend on whether the left phone is in
    {1, 2}; nothing else depends on context."""
    groups = {}
    for c in range(1, 6):
        for left in range(1, 6):
            for right in range(1, 6):
                mean = np.array([c * 3.0, -c, 0.5 * c])
                if c == 3 and left in (1, 2):
                    mean = mean + 4.0
                groups[((-1, 0), (0, left), (1, c), (2, right))] = \
                    rng.normal(size=(60, 3)) + mean
    return _stats_from_frames(groups)


@pytest.fixture(scope="module")
def synthetic():
    topo = read_topology_text(ONE_STATE_TOPO)
    stats = _synthetic_stats(np.random.default_rng(2))
    phone_qs = [(1,), (2,), (3,), (4,), (5,), (1, 2), (3, 4, 5), (1, 2, 3), (4, 5)]
    q = Questions({k: QuestionsForKey(phone_qs, 0, 2) for k in (0, 1, 2)})
    q.by_key[-1] = QuestionsForKey([], 0, 2)
    roots = Roots([[p] for p in range(1, 6)], [True] * 5, [True] * 5)
    return topo, stats, q, roots


def test_build_tree_finds_the_known_split(synthetic, caplog):
    topo, stats, q, roots = synthetic
    opts = BuildTreeOptions(max_leaves=6, thresh=0.0, cluster_thresh=0.0, round_num_leaves=False)
    with caplog.at_level("INFO"):
        tree = build_tree(stats, roots, q, topo, opts)
    assert "DoDecisionTreeSplit: split 1 times, #leaves now 6" in caplog.text
    assert tree.num_pdfs == 6
    pdf = {(left, c): tree.compute_pdf([left, c, 4], 0) for left in range(1, 6)
           for c in range(1, 6)}
    assert pdf[(1, 3)] == pdf[(2, 3)] != pdf[(4, 3)] == pdf[(5, 3)] == pdf[(3, 3)]
    for c in (1, 2, 4, 5):   # the other phones are one leaf whatever the context
        assert len({pdf[(left, c)] for left in range(1, 6)}) == 1
    assert all(tree.compute_pdf([2, 3, r], 0) == pdf[(2, 3)] for r in range(1, 6))


def test_context_positions_keep_the_tree_off_a_position(synthetic):
    """compile-questions --context-positions=1,2: no left-context question, so the known split
    (phone 3 after 1 or 2) cannot be made; the tree still splits where it may."""
    topo, stats, _q, roots = synthetic
    phone_qs = [[1], [2], [3], [4], [5], [1, 2], [3, 4, 5], [1, 2, 3], [4, 5]]
    q = compile_questions(topo, phone_qs, "q.int", context_positions=[1, 2])
    assert q.keys() == [-1, 1, 2]
    opts = BuildTreeOptions(max_leaves=8, thresh=0.0, cluster_thresh=0.0, round_num_leaves=False)
    tree = build_tree(stats, roots, q, topo, opts)
    assert len({tree.compute_pdf([left, 3, 4], 0) for left in range(1, 6)}) == 1
    full = build_tree(stats, roots, compile_questions(topo, phone_qs, "q.int"), topo, opts)
    assert len({full.compute_pdf([left, 3, 4], 0) for left in range(1, 6)}) == 2
    with pytest.raises(UsageError, match="context position 3 is outside the context window 0..2"):
        compile_questions(topo, phone_qs, "q.int", context_positions=[0, 3])


@pytest.mark.parametrize("max_leaves", [5, 7, 9])
def test_build_tree_respects_max_leaves(synthetic, max_leaves):
    topo, stats, q, roots = synthetic
    opts = BuildTreeOptions(max_leaves=max_leaves, thresh=0.0, cluster_thresh=0.0,
                            round_num_leaves=False)
    assert build_tree(stats, roots, q, topo, opts).num_pdfs == max_leaves


def test_build_tree_thresh_clustering_and_rounding(synthetic, caplog):
    topo, stats, q, roots = synthetic
    # a threshold above every gain: no split at all
    assert build_tree(stats, roots, q, topo, BuildTreeOptions(thresh=1e12)).num_pdfs == 5
    # many splits (most on noise), then clustering back at the smallest split and rounding
    # to a multiple of 8 leaves
    with caplog.at_level("INFO"):
        tree = build_tree(stats, roots, q, topo, BuildTreeOptions(max_leaves=30, thresh=0.0))
    assert "Setting clustering threshold to smallest split" in caplog.text
    assert tree.num_pdfs % 8 == 0 and tree.num_pdfs <= 30
    assert tree.compute_pdf([1, 3, 4], 0) != tree.compute_pdf([4, 3, 4], 0)


# -- the tools on Kaldi's yesno alignments --------------------------------------------------------
@pytest.fixture(scope="module")
def yesno(tmp_path_factory):
    """Kaldi's yesno alignments with features that depend on phone, HMM state and, for the
    phone after silence, on the left context; topo from the model, one set/root per phone."""
    if not YESNO.is_dir():
        pytest.skip(f"no Kaldi fixtures at {YESNO}")
    d = tmp_path_factory.mktemp("tree")
    tm = read_transition_model(str(YESNO / "40.mdl"))
    write_topology(str(d / "topo"), tm.topo)
    rng = np.random.default_rng(4)
    means = rng.normal(size=(7, 5, 4)) * 3.0
    frames, alis = {}, {}
    with SequentialReader(f"ark:gunzip -c {YESNO / 'ali.1.gz'}|", "ivec") as r, \
            TableWriter(f"ark,scp:{d / 'feats.ark'},{d / 'feats.scp'}", "mat") as fw:
        for key, ali in r:
            segs = tm.split_to_phones(ali)
            phones = [int(tm.tid2phone[s[0]]) for s in segs]
            xs = []
            for i, s in enumerate(segs):
                left = phones[i - 1] if i else 0
                shift = 2.5 if left == 1 else 0.0
                xs.append(means[phones[i], tm.tid2hmm_state[s]] + shift
                          + rng.normal(size=(len(s), 4)))
            frames[key] = np.concatenate(xs).astype(np.float32)
            alis[key] = np.asarray(ali)
            fw.write(key, frames[key])
    (d / "sets.int").write_text("".join(f"{p}\n" for p in range(1, 7)))
    (d / "roots.int").write_text("".join(f"shared split {p}\n" for p in range(1, 7)))
    return d, tm, frames, alis


def test_acc_tree_stats_equals_a_frame_by_frame_reference(yesno, tmp_path):
    d, tm, frames, alis = yesno
    out = tmp_path / "acc"
    assert load_bin("acc-tree-stats.py").main(
        ["--ci-phones=1", str(YESNO / "40.mdl"), f"scp:{d / 'feats.scp'}",
         f"ark:gunzip -c {YESNO / 'ali.1.gz'}|", str(out)]) == 0
    got = read_tree_stats(str(out))
    ref = {}
    for key, ali in alis.items():   # the reference: one frame at a time
        segs = tm.split_to_phones(ali)
        phones = [int(tm.tid2phone[s[0]]) for s in segs]
        t = 0
        for i, s in enumerate(segs):
            window = [phones[j] if 0 <= j < len(phones) else 0 for j in (i - 1, i, i + 1)]
            for tid in s:
                st = tm.topo.topology_for_phone(phones[i])[tm.tid2hmm_state[tid]]
                pc = st.self_loop_pdf_class if tm.tid_is_selfloop[tid] else st.forward_pdf_class
                ctx = [(1, phones[i])] if phones[i] == 1 else list(enumerate(window))
                ref.setdefault(((-1, pc), *ctx), []).append(frames[key][t].astype(float))
                t += 1
    assert got.events == sorted(ref)
    for i, ev in enumerate(got.events):
        f = np.array(ref[ev])
        assert got.count[i] == len(f)
        np.testing.assert_allclose(got.x[i], f.sum(0), rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(got.x2[i], (f ** 2).sum(0), rtol=1e-10, atol=1e-9)
    # same statistics through the library call, and sum-tree-stats of two halves
    keys = sorted(frames)
    half = [accumulate_tree_stats(tm, [(frames[k], alis[k]) for k in part],
                                  AccTreeStatsOptions(ci_phones="1"))
            for part in (keys[:10], keys[10:])]
    for i, h in enumerate(half):
        write_tree_stats(str(tmp_path / f"h{i}"), h, binary=bool(i))
    assert load_bin("sum-tree-stats.py").main(
        [str(tmp_path / "sum"), str(tmp_path / "h0"), str(tmp_path / "h1")]) == 0
    summed = read_tree_stats(str(tmp_path / "sum"))
    assert summed.events == got.events
    np.testing.assert_allclose(summed.x2, got.x2, rtol=1e-6)   # h0 went through text


def test_tree_chain_on_yesno(yesno, tmp_path, capsys):
    """acc-tree-stats -> cluster-phones -> compile-questions -> build-tree -> gmm-init-model ->
    gmm-mixup; the tree and model read back, TransitionModel.build works on the tree."""
    d, tm, frames, alis = yesno
    t = tmp_path
    run = lambda tool, args: load_bin(tool).main([str(a) for a in args])  # noqa: E731
    assert run("acc-tree-stats.py", ["--ci-phones=1", YESNO / "40.mdl", f"scp:{d / 'feats.scp'}",
                                     f"ark:gunzip -c {YESNO / 'ali.1.gz'}|", t / "treeacc"]) == 0
    assert run("cluster-phones.py", [t / "treeacc", d / "sets.int", t / "questions.int"]) == 0
    questions = read_int_lists(str(t / "questions.int"))
    assert all([p] in questions for p in range(1, 7))          # the original sets come last
    assert len(questions[0]) > 1 and len(set(map(tuple, questions))) == len(questions)
    assert run("compile-questions.py", [d / "topo", t / "questions.int", t / "questions.qst"]) == 0
    assert run("build-tree.py", ["--verbose=1", "--max-leaves=24", t / "treeacc", d / "roots.int",
                                 t / "questions.qst", d / "topo", t / "tree"]) == 0
    err = capsys.readouterr().err
    assert "BuildTree: before building trees, map has 6 leaves." in err
    assert "DoDecisionTreeSplit: split" in err and "like-impr = " in err
    tree = read_tree(str(t / "tree"))
    assert (tree.N, tree.P) == (3, 1) and 6 < tree.num_pdfs <= 24
    assert ((0, (1,)) in _questions_asked(tree.to_pdf)
            or (0, (2, 3, 4, 5, 6)) in _questions_asked(tree.to_pdf))   # "is the left SIL?"
    assert run("gmm-init-model.py", [f"--write-occs={t / '1.occs'}", t / "tree", t / "treeacc",
                                     d / "topo", t / "1.mdl"]) == 0
    tm1, am = read_gmm_model(str(t / "1.mdl"))
    assert tm1 == TransitionModel.build(tree, tm.topo)
    assert am.num_pdfs == tree.num_pdfs and am.num_gauss == tree.num_pdfs
    occs = np.asarray(read_object(str(t / "1.occs"), "vec"))
    assert occs.sum() == sum(len(f) for f in frames.values())
    # one Gaussian per leaf: its mean is the mean of the frames the tree sends there
    stats = read_tree_stats(str(t / "treeacc"))
    from nnetmix.hmm.tree_build import split_stats_by_map
    leaf = split_stats_by_map(stats, tree.to_pdf)
    for pdf in (0, tree.num_pdfs - 1):
        sel = leaf == pdf
        mean = stats.x[sel].sum(0) / stats.count[sel].sum()
        np.testing.assert_allclose(am[pdf].means[0], mean, rtol=1e-5, atol=1e-5)
    # silence is context-independent (--ci-phones=1): its pdfs do not depend on context
    assert len({tree.compute_pdf([a, 1, b], 2) for a in range(1, 7) for b in range(1, 7)}) == 1
    assert run("gmm-mixup.py", ["--mix-up=40", t / "1.mdl", t / "1.occs", t / "2.mdl"]) == 0
    assert read_gmm_model(str(t / "2.mdl"))[1].num_gauss == 40
    assert run("draw-tree.py", [YESNO / "phones.txt", t / "tree"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith("digraph EventMap {\n0[label=\"Center = ?\"") and dot.endswith("}\n")


def test_draw_tree_of_kaldis_monophone_tree(capsys):
    if not YESNO.is_dir():
        pytest.skip(f"no Kaldi fixtures at {YESNO}")
    assert load_bin("draw-tree.py").main(["--query=2/EH", str(YESNO / "phones.txt"),
                                          str(YESNO / "tree")]) == 0
    dot = capsys.readouterr().out.splitlines()
    assert dot[:4] == ["digraph EventMap {", '0[label="Phone = ?", color=red, penwidth=3];',
                       "\t0 -> 1 [label=SIL, color=black, penwidth=1];",
                       '1[label="PdfClass = ?", color=black, penwidth=1];']
    red_leaves = [x for x in dot if "doublecircle" in x and "red" in x]
    tree = read_tree(str(YESNO / "tree"))
    assert red_leaves == [f"{red_leaves[0].split('[')[0]}[shape=doublecircle, label="
                          f"{tree.compute_pdf([3], 2)},color=red, penwidth=3];"]


# -- bad input ------------------------------------------------------------------------------------
def test_bad_roots_and_questions_are_one_line_errors(synthetic, tmp_path, capsys):
    topo, stats, q, roots = synthetic
    write_tree_stats(str(tmp_path / "acc"), stats)
    (tmp_path / "topo").write_text(ONE_STATE_TOPO)
    (tmp_path / "q.int").write_text("1 2\n3 4 5\n1\n2\n3\n4\n5\n")
    assert load_bin("compile-questions.py").main(
        [str(tmp_path / "topo"), str(tmp_path / "q.int"), str(tmp_path / "q.qst")]) == 0
    (tmp_path / "roots.int").write_text("shared split 1\nshared split 2 3\nshared split 4 9\n")
    out = tmp_path / "tree"
    args = [str(tmp_path / "acc"), str(tmp_path / "roots.int"), str(tmp_path / "q.qst"),
            str(tmp_path / "topo"), str(out)]
    capsys.readouterr()
    assert load_bin("build-tree.py").main(args) != 0
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ERROR")]
    assert len(err) == 1 and "roots.int:3: phone 9 is not in the topology" in err[0]
    assert not out.exists()
    (tmp_path / "roots.txt").write_text("shared split a\n")     # symbols, not integers
    assert load_bin("build-tree.py").main([*args[:1], str(tmp_path / "roots.txt"), *args[2:]]) != 0
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ERROR")]
    assert len(err) == 1 and "roots.txt:1: phones must be integers" in err[0]
    (tmp_path / "roots.int").write_text("shared split 1\nshared split 2 3\nshared split 4\n")
    assert load_bin("build-tree.py").main(args) != 0   # phone 5 is in the stats, no root
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ERROR")]
    assert len(err) == 1 and "Phone 5 appears in stats but is not listed in roots file" in err[0]
    (tmp_path / "short.int").write_text("1 2\n3 4\n")
    assert load_bin("compile-questions.py").main(
        [str(tmp_path / "topo"), str(tmp_path / "short.int"), str(tmp_path / "s.qst")]) != 0
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ERROR")]
    assert len(err) == 1 and "short.int: questions do not cover phones 5" in err[0]
    assert not (tmp_path / "s.qst").exists()
    (tmp_path / "bad.acc").write_bytes(b"\0BBTS " + _u32(3) + b"EV " + _u32(1))
    assert load_bin("cluster-phones.py").main(
        [str(tmp_path / "bad.acc"), str(tmp_path / "q.int"), str(tmp_path / "o.int")]) != 0
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ERROR")]
    assert len(err) == 1 and "bad.acc" in err[0]


def test_init_from_old_model_and_mix_down(yesno, tmp_path, capsys):
    """gmm-init-model's <old-tree> <old-model>: each new pdf copies the monophone pdf that
    holds most of its frames; gmm-mixup --mix-down merges back (Kaldi's MergeByCount)."""
    d, tm, frames, alis = yesno
    t = tmp_path
    run = lambda tool, args: load_bin(tool).main([str(a) for a in args])  # noqa: E731
    assert run("acc-tree-stats.py", [YESNO / "40.mdl", f"scp:{d / 'feats.scp'}",
                                     f"ark:gunzip -c {YESNO / 'ali.1.gz'}|", t / "acc"]) == 0
    assert run("compile-questions.py", [d / "topo", d / "sets.int", t / "q.qst"]) == 0
    assert run("build-tree.py", ["--max-leaves=30", "--cluster-thresh=0", t / "acc",
                                 d / "roots.int", t / "q.qst", d / "topo", t / "tree"]) == 0
    mono = read_tree(str(YESNO / "tree"))
    old_am = AmDiagGmm([DiagGmm.from_means_vars(np.ones(1), np.full((1, 4), float(i)),
                                                np.ones((1, 4))) for i in range(mono.num_pdfs)])
    write_gmm_model(str(t / "old.mdl"), tm, old_am)
    assert run("gmm-init-model.py", [t / "tree", t / "acc", d / "topo", t / "1.mdl",
                                     YESNO / "tree", t / "old.mdl"]) == 0
    tree, (_, am) = read_tree(str(t / "tree")), read_gmm_model(str(t / "1.mdl"))
    stats = read_tree_stats(str(t / "acc"))
    from nnetmix.hmm.tree_build import split_stats_by_map
    leaf = split_stats_by_map(stats, tree.to_pdf)
    for pdf in range(tree.num_pdfs):
        votes = {}
        for i in np.flatnonzero(leaf == pdf):
            ev = dict(stats.events[i])
            old = mono.compute_pdf([ev[1]], ev[-1])
            votes[old] = votes.get(old, 0.0) + stats.count[i]
        assert am[pdf].means[0, 0] == max(votes, key=votes.get)
    assert run("gmm-init-model.py", [t / "tree", t / "acc", d / "topo", t / "2.mdl",
                                     YESNO / "tree", YESNO / "40.mdl"]) != 0
    assert "40.mdl: model of dimension 39" in capsys.readouterr().err
    # mixing up then down again
    assert run("gmm-init-model.py", [f"--write-occs={t / 'occs'}", t / "tree", t / "acc",
                                     d / "topo", t / "3.mdl"]) == 0
    assert run("gmm-mixup.py", ["--mix-up=60", t / "3.mdl", t / "occs", t / "4.mdl"]) == 0
    assert run("gmm-mixup.py", ["--mix-down=45", t / "4.mdl", t / "occs", t / "5.mdl"]) == 0
    assert read_gmm_model(str(t / "5.mdl"))[1].num_gauss == 45
    (t / "short.occs").write_text("[ 1 2 3 ]\n")
    assert run("gmm-mixup.py", ["--mix-up=60", t / "3.mdl", t / "short.occs", t / "6.mdl"]) != 0
    assert "short.occs: Dimension of state occupancies 3" in capsys.readouterr().err


def test_acc_tree_stats_refuses_alignments_of_another_model(yesno, tmp_path, capsys):
    d, tm, frames, alis = yesno
    key = sorted(alis)[0]
    with TableWriter(f"ark:{tmp_path / 'bad.ali'}", "ivec") as w:
        w.write(key, np.full(len(alis[key]), 10 ** 6, np.int32))
    assert load_bin("acc-tree-stats.py").main(
        [str(YESNO / "40.mdl"), f"scp:{d / 'feats.scp'}", f"ark:{tmp_path / 'bad.ali'}",
         str(tmp_path / "acc")]) != 0
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ERROR")]
    assert len(err) == 1 and f"alignment of {key}" in err[0] and "1000000" in err[0]
    assert not (tmp_path / "acc").exists()


# -- cluster-phones --mode=k-means ----------------------------------------------------------------
def _planted_phone_stats(rng):
    """Phones 1-9 in three planted groups {1, 4, 7}, {2, 5, 8}, {3, 6, 9}: each group's frames
    come from its own mean, far from the others'; pdf-class 1 (the statistics k-means reads) and
    pdf-class 0 with the groups mixed up (which it must ignore)."""
    group_mean = {0: np.array([0.0, 0.0]), 1: np.array([8.0, 0.0]), 2: np.array([0.0, 8.0])}
    groups = {}
    for p in range(1, 10):
        groups[((-1, 1), (0, 1), (1, p), (2, 1))] = \
            rng.normal(size=(50, 2)) + group_mean[(p - 1) % 3]
        groups[((-1, 0), (0, 1), (1, p), (2, 1))] = \
            rng.normal(size=(50, 2)) + group_mean[(p - 1) // 3]
    return _stats_from_frames(groups)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cluster_phones_kmeans_finds_planted_classes(tmp_path, capsys, seed):
    write_tree_stats(str(tmp_path / "acc"), _planted_phone_stats(np.random.default_rng(seed)))
    (tmp_path / "sets.int").write_text("".join(f"{p}\n" for p in range(1, 10)))
    tool = load_bin("cluster-phones.py")
    args = [str(tmp_path / "acc"), str(tmp_path / "sets.int"), str(tmp_path / "classes.int")]
    assert tool.main(["--mode=k-means", "--num-classes=3", f"--srand={seed}", *args]) == 0
    classes = read_int_lists(str(tmp_path / "classes.int"))
    assert sorted(classes) == [[1, 4, 7], [2, 5, 8], [3, 6, 9]]
    assert "ClusterKMeans: objf change from clustering [versus single set] is" in \
        capsys.readouterr().err
    # the pdf-class list picks the statistics: class 0 holds the other grouping
    assert tool.main(["--mode=k-means", "--num-classes=3", "--pdf-class-list=0", *args]) == 0
    assert sorted(read_int_lists(str(tmp_path / "classes.int"))) == \
        [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    # multi-phone sets move together
    (tmp_path / "sets2.int").write_text("1 4\n7\n2 5 8\n3\n6 9\n")
    assert tool.main(["--mode=k-means", "--num-classes=3", str(tmp_path / "acc"),
                      str(tmp_path / "sets2.int"), str(tmp_path / "classes.int")]) == 0
    assert sorted(read_int_lists(str(tmp_path / "classes.int"))) == \
        [[1, 4, 7], [2, 5, 8], [3, 6, 9]]


def test_cluster_phones_kmeans_bad_options(tmp_path, capsys):
    write_tree_stats(str(tmp_path / "acc"), _planted_phone_stats(np.random.default_rng(0)))
    (tmp_path / "sets.int").write_text("1 2 3\n4 5 6\n7 8 9\n")
    args = [str(tmp_path / "acc"), str(tmp_path / "sets.int"), str(tmp_path / "o.int")]
    tool = load_bin("cluster-phones.py")
    for opts, msg in ((["--mode=k-means", "--num-classes=4"],
                       "num-classes invalid: num_classes is 4, number of phone sets is 3"),
                      (["--mode=k-means"], "num-classes invalid: num_classes is -1"),
                      (["--num-classes=2"], "num-classes option is not (currently) compatible"),
                      (["--mode=bottom-up"], "--mode=bottom-up: expected questions or k-means")):
        assert tool.main([*opts, *args]) != 0
        err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ERROR")]
        assert len(err) == 1 and msg in err[0], (opts, err)
        assert not (tmp_path / "o.int").exists()
