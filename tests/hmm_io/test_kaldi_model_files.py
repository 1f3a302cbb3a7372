"""Kaldi model files (topology, transition model, .mdl, tree) on the real yesno files."""
import numpy as np
import pytest

from nnetmix.errors import FormatError
from nnetmix.kaldi.context_dep import (ContextDependency, SplitEventMap, TableEventMap,
                                       ConstantEventMap, monophone_context_dependency, read_tree,
                                       write_tree)
from nnetmix.kaldi.diag_gmm import AmDiagGmm, DiagGmm, read_gmm_model, write_gmm_model
from nnetmix.kaldi.hmm_topology import (HmmState, HmmTopology, default_topology,
                                        default_topology_text, read_topology_text)
from nnetmix.kaldi.transition_model import (TransitionModel, read_transition_model,
                                            write_transition_model)


@pytest.fixture
def yesno(kaldi_fixtures):
    return kaldi_fixtures / "yesno"


@pytest.fixture
def mdl40(yesno):
    return read_gmm_model(str(yesno / "40.mdl"))


@pytest.mark.parametrize("name", ["0.mdl", "40.mdl"])
def test_mdl_binary_round_trip_is_byte_identical(yesno, tmp_path, name):
    tm, am = read_gmm_model(str(yesno / name))
    out = tmp_path / name
    write_gmm_model(str(out), tm, am, binary=True)
    assert out.read_bytes() == (yesno / name).read_bytes()
    assert not list(tmp_path.glob(".*tmp"))  # the temporary name was renamed away


def test_mdl_contents(mdl40):
    tm, am = mdl40
    assert (tm.phones.size, tm.num_pdfs, tm.num_transition_ids, tm.num_transition_states) \
        == (6, 20, 48, 20)
    assert tm.is_hmm() and am.num_pdfs == 20 and am.dim == 39 and am.num_gauss == 940
    assert tm.log_probs[0] == 0 and np.all(tm.log_probs[1:] < 0)
    # every transition-state's probabilities sum to one
    sums = np.bincount(tm.tid2state[1:], weights=np.exp(tm.log_probs[1:].astype(np.float64)))
    np.testing.assert_allclose(sums[1:], 1.0, atol=1e-4)
    for g in am:
        np.testing.assert_allclose(g.weights.sum(), 1.0, atol=1e-5)
        assert np.all(g.vars > 0)


def test_lookups_consistent(mdl40):
    tm, _ = mdl40
    assert tm.tid2pdf[0] == -1 and tm.tid2phone[0] == 0
    for tid in range(1, tm.num_transition_ids + 1):
        ts = tm.tid2state[tid]
        phone, hmm_state, fwd, loop = tm.tuples[ts - 1]
        assert tm.state2id[ts] <= tid < tm.state2id[ts + 1]
        assert tm.tid2phone[tid] == phone and tm.tid2hmm_state[tid] == hmm_state
        dst, _ = tm.topo.topology_for_phone(phone)[hmm_state].transitions[tm.tid2index[tid]]
        assert tm.tid_is_selfloop[tid] == (dst == hmm_state)
        assert tm.tid2pdf[tid] == (loop if dst == hmm_state else fwd)
    assert set(tm.tid2pdf[1:].tolist()) == set(range(tm.num_pdfs))


def test_text_round_trip(yesno, tmp_path, mdl40):
    tm, am = mdl40
    text = tmp_path / "40.txt.mdl"
    write_gmm_model(str(text), tm, am, binary=False)
    body = text.read_text()
    assert body.startswith("<TransitionModel> \n<Topology> \n<TopologyEntry> \n<ForPhones> \n")
    assert "<Triples> 20 \n1 0 0 \n" in body and "<DIMENSION> 39 <NUMPDFS> 20 <DiagGMM> \n" in body
    tm2, am2 = read_gmm_model(str(text))
    assert tm2.topo == tm.topo and np.array_equal(tm2.tuples, tm.tuples)
    np.testing.assert_allclose(tm2.log_probs, tm.log_probs, rtol=1e-6)
    for a, b in zip(am, am2):
        np.testing.assert_allclose(b.means, a.means, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b.vars, a.vars, rtol=1e-5)
        np.testing.assert_allclose(b.gconsts, a.gconsts, rtol=1e-5)
    # text -> binary -> text is stable
    binary = tmp_path / "again.mdl"
    write_gmm_model(str(binary), tm2, am2, binary=True)
    write_gmm_model(str(tmp_path / "again.txt"), *read_gmm_model(str(binary)), binary=False)
    tm3, am3 = read_gmm_model(str(tmp_path / "again.txt"))
    assert tm3 == tm2 and all(np.array_equal(a.means_invvars, b.means_invvars)
                              for a, b in zip(am2, am3))


def test_gconsts_match_kaldi_bit_for_bit(mdl40):
    _, am = mdl40
    for g in am.pdfs[::7]:
        stored = g.gconsts.copy()
        g.compute_gconsts()
        np.testing.assert_array_equal(g.gconsts, stored)


def test_diag_gmm_conversion_both_ways(mdl40):
    _, am = mdl40
    g = am[3]
    h = DiagGmm.from_means_vars(g.weights, g.means, g.vars)
    np.testing.assert_allclose(h.means_invvars, g.means_invvars, rtol=1e-6)
    np.testing.assert_allclose(h.inv_vars, g.inv_vars, rtol=1e-6)
    np.testing.assert_allclose(h.gconsts, g.gconsts, rtol=1e-5)
    rng = np.random.default_rng(777)
    x = rng.normal(size=(4, g.dim)) * np.sqrt(g.vars[0]) + g.means[0]
    ref = np.array([np.logaddexp.reduce(np.log(g.weights) - 0.5 * np.sum(
        np.log(2 * np.pi * g.vars) + (f - g.means) ** 2 / g.vars, axis=1)) for f in x])
    np.testing.assert_allclose(g.log_likelihood(x), ref, rtol=1e-5)


def test_tree_read_write(yesno, tmp_path, mdl40):
    tm, _ = mdl40
    tree = read_tree(str(yesno / "tree"))
    assert (tree.N, tree.P, tree.num_pdfs) == (1, 0, 20)
    write_tree(str(tmp_path / "tree"), tree)
    assert (tmp_path / "tree").read_bytes() == (yesno / "tree").read_bytes()
    write_tree(str(tmp_path / "tree.txt"), tree, binary=False)
    text = (tmp_path / "tree.txt").read_text()
    assert text.startswith("ContextDependency 1 0 ToPdf TE 0 7 ( NULL TE -1 5 ( CE 0 CE 1 ")
    assert read_tree(str(tmp_path / "tree.txt")) == tree
    mono = monophone_context_dependency(tm.phones, tm.topo.phone_to_num_pdf_classes())
    assert mono == tree
    assert tree.compute_pdf([1], 4) == 4 and tree.compute_pdf([2], 0) == 5
    assert tree.compute_pdf([6], 2) == 19 and tree.compute_pdf([1], 5) is None


def test_transition_model_from_topology_and_tree(yesno, mdl40):
    tm, _ = mdl40
    built = TransitionModel.build(read_tree(str(yesno / "tree")), tm.topo)
    np.testing.assert_array_equal(built.tuples, tm.tuples)
    np.testing.assert_array_equal(built.tid2pdf, tm.tid2pdf)
    tm0, _ = read_gmm_model(str(yesno / "0.mdl"))  # gmm-init-mono: probs from the topology
    np.testing.assert_array_equal(built.log_probs, tm0.log_probs)


def test_default_topology_is_prepare_langs(mdl40):
    tm, _ = mdl40
    assert default_topology(range(1, 7), [1]) == tm.topo
    text = default_topology_text([1, 2, 3], [1])
    assert text.splitlines()[5] == ("<State> 0 <PdfClass> 0 <Transition> 0 0.75 "
                                    "<Transition> 1 0.25 </State>")
    assert read_topology_text(tm.topo.to_text()) == tm.topo


def test_tuples_form_and_split_event_maps(tmp_path):
    """A non-HMM topology (<Tuples>, forward/self-loop pdf-classes) and an SE tree."""
    topo = read_topology_text(
        "<Topology>\n<TopologyEntry>\n<ForPhones>\n1 2 3\n</ForPhones>\n"
        "<State> 0 <ForwardPdfClass> 0 <SelfLoopPdfClass> 1 <Transition> 0 0.5 "
        "<Transition> 1 0.5 </State>\n<State> 1 </State>\n</TopologyEntry>\n</Topology>\n")
    assert not topo.is_hmm()
    leaf = lambda a: ConstantEventMap(a)  # noqa: E731
    tree = ContextDependency(1, 0, SplitEventMap(
        0, (1,), TableEventMap(-1, (leaf(0), leaf(1))),
        TableEventMap(-1, (leaf(2), leaf(3)))))
    tm = TransitionModel.build(tree, topo)
    assert tm.tuples.tolist() == [[1, 0, 0, 1], [2, 0, 2, 3], [3, 0, 2, 3]]
    assert tm.tid2pdf[1:].tolist() == [1, 0, 3, 2, 3, 2]
    path = tmp_path / "final.mdl"
    am = AmDiagGmm([DiagGmm.from_means_vars([1.0], [[0.5, 1.0]], [[1.0, 2.0]])] * 4)
    for binary in (True, False):
        write_gmm_model(str(path), tm, am, binary=binary)
        if not binary:
            assert "<Tuples> 3 \n1 0 0 1 \n" in path.read_text()
            assert "<ForwardPdfClass> 0 <SelfLoopPdfClass> 1" in path.read_text()
        tm2, am2 = read_gmm_model(str(path))
        assert tm2 == tm and am2.num_pdfs == 4
    write_tree(str(tmp_path / "tree"), tree, binary=False)
    assert "SE 0 [ 1 ]\n{ TE -1 2 ( CE 0 CE 1 ) \nTE -1 2 ( CE 2 CE 3 ) \n} \n" in \
        (tmp_path / "tree").read_text()
    assert read_tree(str(tmp_path / "tree")) == tree


def test_copy_transition_model(yesno, tmp_path, mdl40):
    tm, _ = mdl40
    write_transition_model(str(tmp_path / "tm"), tm)
    data = (tmp_path / "tm").read_bytes()
    assert (yesno / "40.mdl").read_bytes().startswith(data)
    assert read_transition_model(str(tmp_path / "tm")) == tm


@pytest.mark.parametrize("cut", [1, 30, 500, 1200, 9000, 150000, 304063])
def test_truncated_model_names_file_and_offset(yesno, tmp_path, cut):
    bad = tmp_path / "bad.mdl"
    bad.write_bytes((yesno / "40.mdl").read_bytes()[:cut])
    with pytest.raises(FormatError, match=r"bad\.mdl.*byte \d+"):
        read_gmm_model(str(bad))


def test_corrupt_token_is_named(yesno, tmp_path):
    data = bytearray((yesno / "40.mdl").read_bytes())
    i = data.index(b"<LogProbs>")
    data[i:i + 10] = b"<LogPrubs>"
    (tmp_path / "bad.mdl").write_bytes(bytes(data))
    with pytest.raises(FormatError,
                       match=rf"byte {i}: expected token <LogProbs>, got '<LogPrubs>'"):
        read_gmm_model(str(tmp_path / "bad.mdl"))
    tree = bytearray((yesno / "tree").read_bytes())
    tree[tree.index(b"( CE") + 2] = ord("X")
    (tmp_path / "tree").write_bytes(bytes(tree))
    with pytest.raises(FormatError, match=r"tree: byte \d+: expected an event map"):
        read_tree(str(tmp_path / "tree"))


def test_bad_topology_text():
    with pytest.raises(FormatError, match="expected <State> or </TopologyEntry>"):
        read_topology_text("<Topology>\n<TopologyEntry>\n<ForPhones>\n1\n</ForPhones>\n"
                           "<Stat> 0 </State>\n</TopologyEntry>\n</Topology>\n")
    with pytest.raises(FormatError, match="last state must be non-emitting"):
        HmmTopology.from_entries([([1], [HmmState(0, 0, [(0, 1.0)])] * 2)])
