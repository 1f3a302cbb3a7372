"""The compiled LatticeFasterDecoder (--decoder=faster): equal to LatticeSimpleDecoder when
histogram pruning is off, equal to an exhaustive Viterbi search when nothing is pruned, equal to
Kaldi's own C++ LatticeFasterDecoder (kaldi-hmm-gmm) with max-active/min-active, max-active caps
the tokens expanded per frame, partial output, bad graphs."""
import kaldi_hmm_gmm as khg  # noqa: I001 -- before kaldifst
import math
import threading

import numpy as np
import pytest

from nnetmix.decode.decoder import (DecodeError, LatticeDecoder, LatticeDecoderConfig,
                                    pdf_to_tid_matrix)
from nnetmix.decode.fstarrays import graph_arrays
from nnetmix.decode.graph import fst_arrays
from nnetmix.decode.lattice import best_path

from helpers import (clat_paths, digits_system, loglikes_for, pdfs_of_phone,
                     random_decoding_graph, tiny_system)

NO_HISTOGRAM = dict(max_active=10 ** 6, min_active=0)


@pytest.fixture(scope="module")
def digits():
    return digits_system()


def _digits_loglikes(tree, tm, word_phones, words, rng, noise=1.5, per_state=3):
    """Log-likelihoods favouring the pdfs of ``words`` (optional silence after each), with
    Gaussian noise so that other paths compete."""
    seq = []
    for w in words:
        for p in word_phones[w] + ([1] if rng.uniform() < 0.5 else []):
            for pdf in pdfs_of_phone(tree, p, 5 if p == 1 else 3):
                seq += [pdf] * int(rng.integers(per_state, per_state + 3))
    ll = loglikes_for(tm, seq, good=0.0, bad=-3.0)
    return ll + rng.normal(scale=noise, size=ll.shape).astype(np.float32)


def _decoder(graph, tm, kind, **kw):
    cfg = dict(beam=11.0, lattice_beam=5.0, acoustic_scale=0.2, allow_partial=True)
    cfg.update(kw)
    return LatticeDecoder(graph, tm, LatticeDecoderConfig(decoder=kind, **cfg))


def _paths(clat, acoustic_scale=0.2):
    """word sequence -> best cost among the lattice's paths, graph + scaled acoustic (the units
    of the beams; written lattices carry unscaled acoustic costs)."""
    out: dict = {}
    for words, _tids, g, a in clat_paths(clat):
        out[words] = min(out.get(words, math.inf), g + acoustic_scale * a)
    return out


def _assert_same_result(r1, r2, lattice_beam):
    """Same best path; the same word sequences within the lattice beam of the best, at the same
    costs. (Pruned determinization may keep some paths beyond the beam; those are not compared,
    nor those within 0.01 of the edge, where the simple path's 6-digit printed weights decide.)"""
    assert r1.words == r2.words and r1.alignment == r2.alignment
    assert r1.likelihood == pytest.approx(r2.likelihood, abs=1e-3)
    p1, p2 = _paths(r1.lattice), _paths(r2.lattice)
    best = min(p1.values())
    assert best == pytest.approx(min(p2.values()), abs=1e-3)
    for a, b in ((p1, p2), (p2, p1)):
        inside = [w for w, c in a.items() if c < best + lattice_beam - 0.01]
        assert len(inside) > 0
        for w in inside:
            assert w in b and a[w] == pytest.approx(b[w], abs=1e-3)
    return len([c for c in p1.values() if c < best + lattice_beam - 0.01])


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_equal_simple_decoder(seed):
    rng = np.random.default_rng(seed)
    tm = tiny_system()[0]
    fst = random_decoding_graph(rng, 25, tm.num_transition_ids, 4, word_prob=0.1)
    ll = rng.normal(scale=2.0, size=(20, tm.num_pdfs)).astype(np.float32)
    # beams well above the lattice beam: LatticeSimpleDecoder also keeps, depending on the
    # order of its hash, some links that cost more than the beam above the frame's best token
    # (made before its running cutoff tightens; Kaldi's faster decoder bounds the cutoff from
    # the best token first), and with a beam near the lattice beam paths through those links
    # reach its lattices.
    for beam in (9.0, 30.0):
        fast = _decoder(fst, tm, "faster", beam=beam, **NO_HISTOGRAM).decode(ll, "r")
        simple = _decoder(fst, tm, "simple", beam=beam).decode(ll, "r")
        assert _assert_same_result(fast, simple, 5.0) > 1
        assert not fast.partial


def test_digits_graph_equals_simple_decoder(digits):
    tm, tree, hclg, _keep, word_phones = digits
    rng = np.random.default_rng(3)
    fast_dec = _decoder(hclg, tm, "faster", **NO_HISTOGRAM)
    simple_dec = _decoder(hclg, tm, "simple")
    sizes = []
    for _ in range(5):
        words = [int(w) for w in rng.choice(list(word_phones), size=int(rng.integers(2, 6)))]
        ll = _digits_loglikes(tree, tm, word_phones, words, rng)
        fast, simple = fast_dec.decode(ll, "d"), simple_dec.decode(ll, "d")
        sizes.append(_assert_same_result(fast, simple, 5.0))
    assert max(sizes) > 1      # the lattices hold alternatives, not only the best path


def _viterbi(fst, tm, scaled):
    """Exhaustive Viterbi: the lowest cost over all paths of the graph that read T frames
    (epsilon closure after each frame), final weights included."""
    n, start, arcs, w, finals = fst_arrays(fst)
    tid2pdf = np.asarray(tm.tid2pdf)

    def closure(cost):
        changed = True
        while changed:
            changed = False
            for (s, d, il, _ol), wt in zip(arcs.tolist(), w.tolist()):
                if il == 0 and cost[s] + wt < cost[d] - 1e-12:
                    cost[d] = cost[s] + wt
                    changed = True
        return cost

    cost = np.full(n, math.inf)
    cost[start] = 0.0
    cost = closure(cost)
    for t in range(scaled.shape[0]):
        new = np.full(n, math.inf)
        for (s, d, il, _ol), wt in zip(arcs.tolist(), w.tolist()):
            if il != 0:
                new[d] = min(new[d], cost[s] + wt - float(scaled[t, tid2pdf[il]]))
        cost = closure(new)
    return float(np.min(cost + finals))


@pytest.mark.parametrize("seed", range(4))
def test_min_active_above_graph_size_is_exhaustive(seed):
    rng = np.random.default_rng(100 + seed)
    tm = tiny_system()[0]
    fst = random_decoding_graph(rng, 12, tm.num_transition_ids, 3)
    ll = rng.normal(scale=3.0, size=(15, tm.num_pdfs)).astype(np.float32)
    scaled = (0.5 * ll).astype(np.float32)
    ref = _viterbi(fst, tm, scaled)
    # a beam of 0.5 would prune nearly everything; min-active above the graph size keeps all
    res = _decoder(fst, tm, "faster", beam=0.5, lattice_beam=0.5, min_active=1000,
                   acoustic_scale=0.5).decode(ll, "v")
    assert -res.likelihood == pytest.approx(ref, abs=1e-3)
    narrow = _decoder(fst, tm, "faster", beam=0.5, lattice_beam=0.5, min_active=0,
                      acoustic_scale=0.5).decode(ll, "v")
    assert narrow.partial or -narrow.likelihood >= ref - 1e-3   # pruned: never better


def test_max_active_caps_expanded_tokens_and_matches_kaldi(digits):
    """Kaldi's GetCutoff keeps the tokens up to the (max_active+1)-th best cost (at most
    max-active strictly below it; ties with it are kept); the best path equals the C++
    LatticeFasterDecoder's (kaldi-hmm-gmm) at the same options."""
    tm, tree, hclg, keep, word_phones = digits
    rng = np.random.default_rng(7)
    words = [int(w) for w in rng.choice(list(word_phones), size=5)]
    ll = _digits_loglikes(tree, tm, word_phones, words, rng, noise=2.5)
    free = _decoder(hclg, tm, "faster", beam=16.0, **NO_HISTOGRAM)
    free.decode(ll, "m")
    assert free.last_expanded[:, 0].max() > 60      # so the caps below do something
    for max_active, min_active in ((30, 0), (12, 5), (60, 40), (10 ** 6, 80)):
        dec = _decoder(hclg, tm, "faster", beam=16.0, max_active=max_active,
                       min_active=min_active)
        res = dec.decode(ll, "m")
        expanded, below = dec.last_expanded[:, 0], dec.last_expanded[:, 1]
        assert below.max() <= max_active and expanded.max() >= min(max_active, 60)
        cfg = khg.LatticeFasterDecoderConfig(beam=16.0, lattice_beam=5.0,
                                             max_active=max_active, min_active=min_active)
        kdec = khg.LatticeFasterDecoderStdVectorFst(hclg, cfg)
        ok, ali, kwords, klike = khg.decode_utterance_lattice_faster(
            kdec, khg.DecodableCtc(pdf_to_tid_matrix(ll, tm, 0.2)), keep[1], "m", True)
        assert ok
        assert res.words == list(kwords) and res.alignment == list(ali)
        assert res.likelihood == pytest.approx(klike, abs=1e-3)


def test_allow_partial_when_no_final_state():
    tm, tree, _L, _G = tiny_system()
    rng = np.random.default_rng(1)
    # a graph whose only final state is unreachable
    fst = random_decoding_graph(rng, 8, tm.num_transition_ids, 3)
    text = "\n".join(line for line in fst.to_str(show_weight_one=True).splitlines()
                     if len(line.split()) != 2) + "\n8\t0.0\n"
    import kaldifst
    fst = kaldifst.compile(text, keep_state_numbering=True)
    ll = rng.normal(size=(10, tm.num_pdfs)).astype(np.float32)
    with pytest.raises(DecodeError, match="no final-state reached"):
        _decoder(fst, tm, "faster", allow_partial=False).decode(ll, "p")
    res = _decoder(fst, tm, "faster", beam=30.0).decode(ll, "p")
    ref = _decoder(fst, tm, "simple", beam=30.0).decode(ll, "p")
    assert res.partial and ref.partial
    assert res.words == ref.words and res.alignment == ref.alignment
    assert len(res.alignment) == 10
    # every last-frame token is final with weight One: the lattice's best path is the decoder's
    bw, bali, _g, _a = best_path(res.lattice, 1.0, 0.2)
    assert bw == res.words and bali == res.alignment


def test_graph_labels_beyond_the_model_and_bad_matrices():
    tm = tiny_system()[0]
    import kaldifst
    fst = kaldifst.compile(f"0\t1\t{tm.num_transition_ids + 1}\t0\n1\t0.0\n")
    with pytest.raises(DecodeError, match="transition-ids"):
        _decoder(fst, tm, "faster")
    good = random_decoding_graph(np.random.default_rng(0), 5, tm.num_transition_ids, 2)
    dec = _decoder(good, tm, "faster")
    with pytest.raises(DecodeError, match="expected"):
        dec.decode(np.zeros((4, tm.num_pdfs + 1), np.float32), "w")
    with pytest.raises(DecodeError, match="zero-length"):
        dec.decode(np.zeros((0, tm.num_pdfs), np.float32), "e")
    with pytest.raises(DecodeError, match="--decoder"):
        _decoder(good, tm, "fastest")


def test_graph_arrays_keep_states_arcs_and_weights(digits):
    hclg = digits[2]
    g = graph_arrays(hclg)
    n, start, arcs, w, finals = fst_arrays(hclg)
    order = np.argsort(arcs[:, 0], kind="stable")   # printed start state first, then in order
    arcs, w = arcs[order], w[order]
    assert (g.num_states, g.start, g.num_arcs) == (n, start, len(arcs))
    src = np.repeat(np.arange(n), np.diff(g.arc_start))
    assert np.array_equal(np.stack([src, g.nextstate, g.ilabel, g.olabel], 1), arcs)
    assert np.allclose(g.weight, w, atol=1e-5) and np.allclose(g.final, finals, atol=1e-5)
    assert np.array_equal(g.num_input_eps, np.bincount(src[g.ilabel == 0], minlength=n))


def test_nth_element_is_stds():
    """GetCutoff's nth_element: a[k] is the k-th smallest, nothing larger before it, nothing
    smaller after it (ties and duplicates included)."""
    from nnetmix.decode.faster import _nth_element
    rng = np.random.default_rng(0)
    for it in range(500):
        n = int(rng.integers(1, 60))
        a = (rng.integers(0, 6, size=n).astype(np.float64) if it % 2
             else rng.normal(size=n))
        k = int(rng.integers(0, n))
        b = a.copy()
        _nth_element(b, 0, n, k)
        assert b[k] == np.sort(a)[k] and np.all(b[:k] <= b[k]) and np.all(b[k + 1:] >= b[k])
        assert np.array_equal(np.sort(b), np.sort(a))


def test_epsilon_loop_in_the_graph_is_an_error():
    """Kaldi asserts ("Epsilon loops exist in your decoding graph"); here one error naming the
    utterance."""
    import kaldifst
    tm = tiny_system()[0]
    fst = kaldifst.compile("0\t1\t0\t0\t0.5\n1\t0\t0\t0\t0.5\n0\t0\t1\t1\t0.1\n1\t1\t2\t0\t0.1\n"
                           "0\t0.0\n1\t0.0\n", keep_state_numbering=True)
    ll = np.zeros((3, tm.num_pdfs), np.float32)
    with pytest.raises(DecodeError, match="utterance e1: Epsilon loops"):
        _decoder(fst, tm, "faster").decode(ll, "e1")


@pytest.mark.parametrize("opts", [dict(beam=6.0, **NO_HISTOGRAM), dict(beam=10.0, max_active=5,
                                                                      min_active=2),
                                  dict(beam=3.0, prune_interval=3)])
def test_best_path_only_mode_gives_the_lattice_modes_best_path(digits, opts):
    """decode(lattice=False): the same search with backpointers instead of forward links (and
    their garbage collection every prune-interval frames) gives the same best path."""
    tm = tiny_system()[0]
    for seed in range(8):
        rng = np.random.default_rng(200 + seed)
        fst = random_decoding_graph(rng, int(rng.integers(5, 40)), tm.num_transition_ids, 4,
                                    eps_prob=0.3, word_prob=0.1)
        ll = rng.normal(scale=2.0, size=(int(rng.integers(5, 40)), tm.num_pdfs)).astype(
            np.float32)
        dec = _decoder(fst, tm, "faster", **opts)
        full, best = dec.decode(ll, "b"), dec.decode(ll, "b", lattice=False)
        assert best.lattice is None
        assert (best.words, best.alignment, best.partial) == (full.words, full.alignment,
                                                              full.partial)
        assert best.likelihood == pytest.approx(full.likelihood, abs=1e-6)
    tm, tree, hclg, _keep, word_phones = digits
    rng = np.random.default_rng(9)
    ll = _digits_loglikes(tree, tm, word_phones, [3, 5, 7, 4], rng, noise=2.0)
    dec = _decoder(hclg, tm, "faster", **opts)
    full, best = dec.decode(ll, "d"), dec.decode(ll, "d", lattice=False)
    assert (best.words, best.alignment) == (full.words, full.alignment)


def _raw_equal(x, y):
    """Two SearchOutputs are the same search: lattices array for array, the same counts."""
    a, b = x.lattice, y.lattice
    assert (a.num_states, a.start, x.reached_final) == (b.num_states, b.start, y.reached_final)
    for f in ("src", "dst", "ilabel", "olabel", "g", "a", "final_g", "final_a"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert np.array_equal(x.expanded, y.expanded)


def _workspace_utts(digits, n=6):
    tm, tree, _hclg, _keep, word_phones = digits
    rng = np.random.default_rng(31)
    return [(f"w{i}", _digits_loglikes(tree, tm, word_phones,
                                       [int(w) for w in rng.choice(list(word_phones), size=4)],
                                       rng, noise=2.5))
            for i in range(n)]


@pytest.mark.parametrize("opts", [dict(beam=16.0, max_active=30, min_active=5),
                                  dict(beam=9.0, **NO_HISTOGRAM)])
def test_a_reused_workspace_searches_as_a_fresh_one(digits, opts):
    """The search's state-sized arrays are kept between utterances (SearchWorkspace) and the
    state-to-token map is reset through the last frame's states only: every utterance, searched
    twice in turn in both modes on one workspace, gives exactly the search of fresh arrays, and
    the map is all -1 after each."""
    from nnetmix.decode.faster import SearchOptions, SearchWorkspace, lattice_search
    tm, _tree, hclg, _keep, _wp = digits
    graph = graph_arrays(hclg)
    tid2pdf = np.asarray(tm.tid2pdf, dtype=np.int64)
    so = SearchOptions(opts["beam"], opts["max_active"], opts["min_active"], 5.0)
    ws = SearchWorkspace(graph.num_states)
    utts = _workspace_utts(digits)
    for _round in range(2):
        for _key, ll in utts:
            scaled = (0.2 * ll).astype(np.float32)
            for best_path_only in (False, True):
                fresh = lattice_search(graph, scaled, tid2pdf, so, best_path_only)
                reused = lattice_search(graph, scaled, tid2pdf, so, best_path_only, workspace=ws)
                _raw_equal(reused, fresh)
                assert np.all(ws.state2tok == -1)
    assert fresh.expanded[:, 0].max() > 5       # many states are active at once


def test_one_decoder_in_threads_equals_fresh_decoders(digits):
    """LatticeDecoder keeps one workspace per thread: one decoder object called from three
    threads at once, twice over the utterances, gives each utterance the result of a fresh
    decoder (words, alignment, likelihood, determinized lattice), and no two threads share a
    workspace."""
    from nnetmix.decode.sequencer import TaskSequencerConfig, run_in_order
    tm, _tree, hclg, _keep, _wp = digits
    utts = _workspace_utts(digits, 8)
    kw = dict(beam=14.0, max_active=40, min_active=5)
    ref = {k: _decoder(hclg, tm, "faster", **kw).decode(ll, k) for k, ll in utts}
    shared = _decoder(hclg, tm, "faster", **kw)
    got, workspaces = [], {}

    def work(item):
        workspaces.setdefault(id(shared._workspace()), set()).add(threading.get_ident())
        return shared.decode(item[1], item[0])
    run_in_order(utts + utts, work, lambda item, r: got.append(r), TaskSequencerConfig(3))
    for r, (k, _ll) in zip(got, utts + utts):
        want = ref[k]
        assert (r.key, r.words, r.alignment, r.likelihood) == (k, want.words, want.alignment,
                                                               want.likelihood)
        assert r.lattice == want.lattice
    assert all(len(threads) == 1 for threads in workspaces.values())


def test_a_search_that_raised_does_not_spoil_the_next(digits):
    """A search that stops midway (here: a pdf of the transition-id map beyond the matrix's
    columns, reached after the first frames) leaves the state-to-token map dirty; the
    workspace refills it before its next search, whose output is a fresh search's. A workspace
    is refused to a second search while in use, and to a graph of another size."""
    from nnetmix.decode.faster import (SearchOptions, SearchWorkspace, WorkspaceError,
                                       lattice_search)
    tm, _tree, hclg, _keep, _wp = digits
    graph = graph_arrays(hclg)
    tid2pdf = np.asarray(tm.tid2pdf, dtype=np.int64)
    so = SearchOptions(16.0, 30, 5, 5.0)
    (_k, good), (_k2, other) = _workspace_utts(digits, 2)
    scaled = (0.2 * good).astype(np.float32)
    fresh = lattice_search(graph, scaled, tid2pdf, so)
    ws = SearchWorkspace(graph.num_states)
    dirty = False
    for pdf in range(tm.num_pdfs):          # the first pdf whose absence stops a search midway
        bad_map = np.where(tid2pdf == pdf, tm.num_pdfs, tid2pdf)
        with pytest.raises(ValueError, match="beyond the log-likelihood matrix.s columns"):
            lattice_search(graph, (0.2 * other).astype(np.float32), bad_map, so, workspace=ws)
        if np.any(ws.state2tok != -1):
            dirty = True
            break
    assert dirty
    _raw_equal(lattice_search(graph, scaled, tid2pdf, so, workspace=ws), fresh)
    assert np.all(ws.state2tok == -1)
    ws._enter(graph.num_states)                      # as a search running in another thread
    with pytest.raises(WorkspaceError, match="already in use"):
        lattice_search(graph, scaled, tid2pdf, so, workspace=ws)
    ws._leave(True)
    with pytest.raises(WorkspaceError, match="states"):
        lattice_search(graph, scaled, tid2pdf, so, workspace=SearchWorkspace(3))
    # through the decoder: bad utterances between good ones change nothing
    dec = _decoder(hclg, tm, "faster", beam=16.0, max_active=30, min_active=5)
    want = _decoder(hclg, tm, "faster", beam=16.0, max_active=30, min_active=5).decode(good, "g")
    for bad in (good[:, :-1], good[:0]):
        with pytest.raises(DecodeError):
            dec.decode(bad, "b")
        r = dec.decode(good, "g")
        assert (r.words, r.alignment, r.likelihood, r.lattice) == (
            want.words, want.alignment, want.likelihood, want.lattice)
