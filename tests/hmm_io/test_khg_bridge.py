"""kaldi-hmm-gmm objects built from our parsed yesno model agree with it."""
import numpy as np
import pytest

khg = pytest.importorskip("kaldi_hmm_gmm")  # before kaldifst: the other order can hang

from nnetmix.hmm import khg as bridge  # noqa: E402
from nnetmix.kaldi.context_dep import (ContextDependency, monophone_context_dependency,  # noqa: E402
                                       read_tree)
from nnetmix.kaldi.diag_gmm import read_gmm_model  # noqa: E402


@pytest.fixture
def model(kaldi_fixtures):
    yesno = kaldi_fixtures / "yesno"
    tm, am = read_gmm_model(str(yesno / "40.mdl"))
    return yesno, tm, am, read_tree(str(yesno / "tree"))


def test_topology_and_tree(model):
    _, tm, _, tree = model
    kt = bridge.to_khg_topology(tm.topo)
    assert str(kt) == tm.topo.to_text()  # Kaldi's own text writer agrees with ours
    assert list(kt.phones) == tm.phones.tolist() and kt.is_hmm
    assert bridge.from_khg_topology(kt) == tm.topo
    kc = bridge.to_khg_context_dependency(tree, tm.topo)  # checks the written bytes itself
    assert kc.num_pdfs == 20 and kc.context_width == 1 and kc.central_position == 0
    assert kc.compute([3], 1) == (True, tree.compute_pdf([3], 1))
    assert bridge.from_khg_context_dependency(kc) == tree


def test_context_dependent_tree_is_refused(model):
    _, tm, _, _ = model
    mono = monophone_context_dependency(tm.phones, tm.topo.phone_to_num_pdf_classes())
    tri = ContextDependency(3, 1, mono.to_pdf)
    with pytest.raises(bridge.KhgUnsupported, match="only build monophone trees"):
        bridge.to_khg_context_dependency(tri, tm.topo)


def test_transition_model(model):
    _, tm, _, tree = model
    ktm = bridge.to_khg_transition_model(tm, tree)
    assert (ktm.num_pdfs, ktm.num_transition_ids, ktm.num_transition_states) == (20, 48, 20)
    np.testing.assert_array_equal(bridge.khg_tuples(ktm), tm.tuples)
    assert list(ktm.id2pdf_id)[1:] == tm.tid2pdf[1:].tolist()
    assert list(ktm.id2state) == tm.tid2state.tolist()
    for tid in range(1, tm.num_transition_ids + 1):
        assert ktm.transition_id_to_phone(tid) == tm.tid2phone[tid]
        assert ktm.is_self_loop(tid) == tm.tid_is_selfloop[tid]
        assert ktm.is_final(tid) == tm.tid_is_final[tid]
    # trained log-probs restored through mle_update (no setter in 1.1.4)
    np.testing.assert_allclose(np.array(ktm.log_probs), tm.log_probs, atol=2e-5)
    np.testing.assert_allclose(np.array(ktm.non_self_loop_log_probs)[1:],
                               tm.non_self_loop_log_probs[1:], atol=2e-4)
    back = bridge.from_khg_transition_model(ktm)
    assert back.topo == tm.topo and np.array_equal(back.tuples, tm.tuples)
    # without a tree, the topology's monophone tree is used
    assert bridge.khg_tuples(bridge.to_khg_transition_model(tm)).tolist() == tm.tuples.tolist()


def test_gmm_log_likelihoods_agree(model):
    _, tm, am, _ = model
    kam = bridge.to_khg_am_diag_gmm(am)
    assert (kam.num_pdfs, kam.dim, kam.num_gauss) == (20, 39, 940)
    rng = np.random.default_rng(777)
    for pdf in (0, 7, 19):
        g = am[pdf]
        x = (g.means[0] + rng.normal(size=(3, g.dim)) * np.sqrt(g.vars[0])).astype(np.float32)
        x64 = x.astype(np.float64)
        # float64 reference straight from the parsed means and variances
        ref = np.array([np.logaddexp.reduce(np.log(g.weights) - 0.5 * np.sum(
            np.log(2 * np.pi * g.vars) + (f - g.means) ** 2 / g.vars, axis=1)) for f in x64])
        theirs = np.array([kam.log_likelihood(pdf, f) for f in x])
        np.testing.assert_allclose(theirs, ref, rtol=1e-5, atol=1e-3)
        np.testing.assert_allclose(am[pdf].log_likelihood(x64), ref, rtol=1e-7)
    back = bridge.from_khg_am_diag_gmm(kam)
    for a, b in zip(am, back):
        np.testing.assert_allclose(b.means_invvars, a.means_invvars, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(b.inv_vars, a.inv_vars)
        np.testing.assert_allclose(b.gconsts, a.gconsts, rtol=1e-6)


def test_graph_compile_and_align(model):
    yesno, tm, am, tree = model
    import kaldifst
    kc = bridge.to_khg_context_dependency(tree, tm.topo)
    ktm = bridge.to_khg_transition_model(tm, ctx_dep=kc)
    lex = kaldifst.StdVectorFst.read(str(yesno / "L_disambig.fst"))
    compiler = khg.TrainingGraphCompiler(ktm, kc, lex, [7, 8], khg.TrainingGraphCompilerOptions())
    graph = compiler.compile_graph_from_text([3, 2])  # YES NO
    feats = (am[0].means[0] + np.zeros((60, 39))).astype(np.float32)
    kam = bridge.to_khg_am_diag_gmm(am)  # keep it referenced: the decodable does not
    dec = khg.DecodableAmDiagGmmScaled(kam, ktm, feats, 0.1)
    # the decodable scores transition-id i with pdf tid2pdf[i]
    np.testing.assert_allclose(dec.log_likelihood(0, 9),
                               0.1 * am[int(tm.tid2pdf[9])].log_likelihood(feats[:1])[0], rtol=1e-5)
    done, err, _, _, frames, ali, words = khg.align_utterance_wrapper(
        khg.AlignConfig(beam=200, retry_beam=400), "u", 0.1, graph, dec, 0, 0, 0, 0.0, 0)
    assert (done, err, frames) == (1, 0, 60) and len(ali) == 60
    phones = [int(tm.tid2phone[s[0]]) for s in tm.split_to_phones(np.array(ali))]
    assert [p for p in phones if p != 1] == [2, 3, 6, 4, 5]  # YES = 2 3 6, NO = 4 5 (ali.1.gz)


def test_not_hmm_tuples_match_kaldi():
    """A chain-style topology (forward and self-loop pdf-classes differ): our ComputeTuplesNotHmm
    against Kaldi's, through a monophone tree."""
    from nnetmix.kaldi.hmm_topology import read_topology_text
    from nnetmix.kaldi.transition_model import TransitionModel
    topo = read_topology_text(
        "<Topology>\n<TopologyEntry>\n<ForPhones>\n1 2 3 5\n</ForPhones>\n"
        "<State> 0 <ForwardPdfClass> 0 <SelfLoopPdfClass> 1 <Transition> 0 0.5 "
        "<Transition> 1 0.5 </State>\n<State> 1 </State>\n</TopologyEntry>\n</Topology>\n")
    tree = monophone_context_dependency(topo.phones, topo.phone_to_num_pdf_classes())
    ours = TransitionModel.build(tree, topo)
    kc = bridge.to_khg_context_dependency(tree, topo)
    ktm = khg.TransitionModel(kc, bridge.to_khg_topology(topo))
    np.testing.assert_array_equal(bridge.khg_tuples(ktm), ours.tuples)
    assert list(ktm.id2pdf_id)[1:] == ours.tid2pdf[1:].tolist()
    np.testing.assert_array_equal(np.array(ktm.log_probs, dtype=np.float32), ours.log_probs)
    # Kaldi's own text Write, verbatim up to the log-probs (str() uses a bare ostringstream, at
    # precision 6; files go through InitKaldiOutputStream, which sets 7, as we write)
    head = str(ktm).split("<LogProbs>")[0]
    assert head.endswith("</Tuples> \n")
    assert head == ours.to_bytes(False).decode().split("<LogProbs>")[0]
