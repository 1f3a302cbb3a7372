"""Equal alignment and forced alignment through kaldi-hmm-gmm's FasterDecoder."""
import numpy as np
import pytest

from helpers import TinyLang
from nnetmix.errors import FormatError
from nnetmix.hmm.fst_labels import VectorFstLabels, compact_input_labels
from nnetmix.hmm.gmm_align import (AlignOptions, align_utterance, equal_align_graph,
                                   equal_align_states, graph_pdfs, graph_tids,
                                   scaled_transition_log_probs)
from nnetmix.hmm.gmm_init import kaldi_string_hash


@pytest.fixture(scope="module")
def lang():
    return TinyLang()


def _planted(lang, phones, durations):
    tids = []
    for phone, durs in zip(phones, durations):
        for state, d in enumerate(durs):
            fwd, loop = lang.state_tids(phone, state)
            tids += [fwd] + [loop] * (d - 1)
    return np.array(tids)


def test_equal_align_states_covers_every_frame_in_order():
    fwd, loop = np.array([2, 6, 11, 20]), np.array([1, 5, 10, 0])  # last state: no self-loop
    for t in (4, 5, 11, 50):
        ali = equal_align_states(t, fwd, loop)
        assert len(ali) == t
        state = np.cumsum(np.isin(ali, fwd)) - 1  # a forward tid starts each state
        assert np.all(np.diff(state) >= 0) and state[0] == 0 and state[-1] == 3
        counts = np.bincount(state)
        assert counts[3] == 1 and counts[:3].max() - counts[:3].min() <= 1
    with pytest.raises(ValueError):
        equal_align_states(3, fwd, loop)


def test_equal_align_graph(lang):
    g = lang.graph([1, 2])
    tids, words = equal_align_graph(g, 40, "utt-a")
    assert len(tids) == 40 and words == [1, 2]
    again, _ = equal_align_graph(g, 40, "utt-a")
    np.testing.assert_array_equal(tids, again)  # seeded by the key, as Kaldi
    pdfs = lang.tid2pdf[tids]
    assert set(pdfs) <= set(graph_pdfs(g, lang.tid2pdf))
    assert equal_align_graph(g, 5, "utt-a") is None  # 9 HMM states cannot fit in 5 frames
    assert kaldi_string_hash("a") == 97 and kaldi_string_hash("ab") == 97 * 7853 + 98


@pytest.mark.parametrize("restrict,compact", [(False, False), (True, False), (True, True)])
def test_alignment_recovers_planted_states(lang, restrict, compact):
    durations = [[3, 5, 2], [4, 1, 6], [2, 2, 7]]
    truth = _planted(lang, [2, 3, 2], durations)
    t = len(truth)
    num_pdfs = int(lang.tid2pdf.max()) + 1
    rng = np.random.default_rng(7)
    ll = rng.normal(-60.0, 5.0, (t, num_pdfs))
    ll[np.arange(t), lang.tid2pdf[truth]] = rng.normal(-20.0, 1.0, t)
    g = lang.graph([1, 2])
    pdfs = graph_pdfs(g, lang.tid2pdf) if restrict else None
    trans = scaled_transition_log_probs(lang.log_probs, lang.id2state, lang.is_self_loop)
    labels = None
    if compact:  # the graph relabelled to its own transition-ids, as align_compiled does
        g, labels = compact_input_labels(g)
        assert g.num_states == lang.graph([1, 2]).num_states
    res = align_utterance(g, ll[:, pdfs] if restrict else ll, lang.tid2pdf, AlignOptions(),
                          trans_log_probs=trans, pdfs=pdfs, key="planted", labels=labels)
    assert res.ok and not res.retried and res.words == [1, 2]
    np.testing.assert_array_equal(res.alignment, truth)
    assert res.like < 0


def test_compact_input_labels_keep_the_graph(lang):
    g = lang.graph([1, 2, 1])
    before = VectorFstLabels(g)
    compact, labels = compact_input_labels(g)
    np.testing.assert_array_equal(labels, graph_tids(g))
    after = VectorFstLabels(compact)
    il = after.ilabels
    assert set(il.tolist()) - {0} == set(range(1, len(labels) + 1))
    # mapping the labels back gives the original bytes: states, arcs, order and weights kept
    back = np.where(il > 0, labels[np.maximum(il, 1) - 1], 0)
    np.testing.assert_array_equal(back, before.ilabels)
    assert VectorFstLabels(after.with_ilabels(back)).data == before.data


def test_vector_fst_labels_refuses_other_bytes(lang, tmp_path, monkeypatch):
    import nnetmix.hmm.fst_labels as fl
    bad = tmp_path / "bad.fst"
    monkeypatch.setattr(fl, "scratch_path", lambda: str(bad))
    g = lang.graph([1])
    g.write(str(bad))
    data = bad.read_bytes()
    monkeypatch.setattr(type(g), "write", lambda self, path: bad.write_bytes(data + b"\0"),
                        raising=False)
    with pytest.raises(FormatError, match="1 bytes of garbage after the FST"):
        fl.VectorFstLabels(g)


def test_alignment_failure_is_reported(lang):
    g = lang.graph([1, 2])
    res = align_utterance(g, np.zeros((4, 9)), lang.tid2pdf, key="short")
    assert not res.ok and len(res.alignment) == 0
    with pytest.raises(ValueError):
        align_utterance(g, np.zeros((4, 9)), lang.tid2pdf, AlignOptions(beam=10, retry_beam=5))


def test_scaled_transition_log_probs(lang):
    lp = lang.log_probs
    same = scaled_transition_log_probs(lp, lang.id2state, lang.is_self_loop, 0.5, 0.5)
    np.testing.assert_allclose(same, 0.5 * lp)
    s = scaled_transition_log_probs(lp, lang.id2state, lang.is_self_loop, 1.0, 0.1)
    fwd, loop = lang.state_tids(2, 0)  # self-loop 0.75, forward 0.25
    assert s[loop] == pytest.approx(0.1 * np.log(0.75))
    # forward: 0.1*log(1-0.75) + 1.0*(log 0.25 - log 0.25) = 0.1*log(0.25)
    assert s[fwd] == pytest.approx(0.1 * np.log(0.25))
