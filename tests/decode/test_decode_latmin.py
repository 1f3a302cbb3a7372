"""--minimize (nnetmix/decode/latmin.py: Kaldi's PushCompactLatticeStrings,
PushCompactLatticeWeights, MinimizeCompactLattice): the paths (words, alignments, costs) stay
the same, strings and weights move as Kaldi moves them, and states with the same future merge."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst

import numpy as np
import pytest

from nnetmix.decode.latmin import push_and_minimize, push_strings, push_weights
from nnetmix.decode.lattice import CompactLattice, determinize_lattice_pruned
from nnetmix.decode.phonedet import (PhoneDeterminizeOptions, determinize_lattice_phone_pruned,
                                     phone_start_labels)

from helpers import (compact_paths, digits_search_lattices, digits_system, load_bin,
                     random_mixed_lattice)


def _same_paths(a: CompactLattice, b: CompactLattice) -> bool:
    pa, pb = compact_paths(a), compact_paths(b)
    return pa.keys() == pb.keys() and all(
        pa[k][1] == pb[k][1] and abs(pa[k][0] - pb[k][0]) <= 1e-6 for k in pa)


def _two_tails() -> CompactLattice:
    """Words 1 3 and 2 3: the two states after the first word have the same future, the
    arcs out of them both start with transition-id 7, and state 1 costs more to leave."""
    c = CompactLattice(0, [[] for _ in range(5)], [None] * 5)
    c.add_arc(0, 1, 1.0, 2.0, (5,), 1)
    c.add_arc(0, 2, 1.5, 2.0, (6,), 2)
    c.add_arc(1, 3, 0.5, 1.0, (7, 8), 3)
    c.add_arc(2, 3, 0.5, 1.0, (7, 8), 4)
    c.set_final(3, 0.25, 0.0, (9,))
    c.set_final(4, 0.25, 0.0, (9,))
    return c


def test_push_and_minimize_as_kaldi():
    c = _two_tails()
    pushed = push_strings(_two_tails())
    # each state's common future string moves onto the arcs into it; the start keeps its own
    assert pushed.arcs[0] == [(1, 1.0, 2.0, (5, 7, 8, 9), 1), (2, 1.5, 2.0, (6, 7, 8, 9), 2)]
    assert pushed.arcs[1][0][3] == () and pushed.finals[3][2] == ()
    weights = push_weights(pushed)
    assert weights.arcs[0][0][1:3] == (1.75, 3.0) and weights.arcs[1][0][1:3] == (0.0, 0.0)
    assert weights.finals[3][:2] == (0.0, 0.0)
    small = push_and_minimize(c)
    assert small.num_states == 3 and _same_paths(small, c)
    assert c == _two_tails()        # push_and_minimize leaves its input alone


def _forked(d: float) -> CompactLattice:
    """Words 1 or 2, each optionally followed by word 3, which costs ``d`` more after 2."""
    c = CompactLattice(0, [[] for _ in range(5)], [None] * 5)
    c.add_arc(0, 1, 1.0, 0.0, (5,), 1)
    c.add_arc(0, 2, 1.0, 0.0, (6,), 2)
    c.add_arc(1, 3, 1.0, 0.0, (7,), 3)
    c.add_arc(2, 3, 1.0 + d, 0.0, (7,), 4)
    for s in (1, 2, 3, 4):
        c.set_final(s, 0.0, 0.0, ())
    return c


def test_weights_within_delta_merge_and_beyond_do_not():
    """Kaldi's delta (1/1024) on the weights of the arcs compared."""
    assert push_and_minimize(_forked(1e-4)).num_states == 3
    assert push_and_minimize(_forked(0.01)).num_states == 4


def test_paths_unchanged_on_random_and_digits_lattices():
    rng = np.random.default_rng(31)
    shrunk = 0
    lats = [determinize_lattice_pruned(random_mixed_lattice(rng, 9, 4, 0.6), 4.0)
            for _ in range(60)]
    digits = digits_system()
    lats += [determinize_lattice_pruned(r, 6.0) for r in digits_search_lattices(digits, 4, 8)]
    for c in lats:
        m = push_and_minimize(c)
        assert _same_paths(m, c) and m.num_states <= c.num_states
        shrunk += m.num_states < c.num_states
        pushed = push_weights(push_strings(CompactLattice(c.start, [list(a) for a in c.arcs],
                                                          list(c.finals))))
        for s in range(1, pushed.num_states):   # the best way out of a state costs nothing
            ways = [f[0] + f[1] for f in [pushed.finals[s]] if f is not None]
            ways += [arc[1] + arc[2] for arc in pushed.arcs[s]]
            assert min(ways) == pytest.approx(0.0, abs=1e-6)
    assert shrunk > 5
    raw = digits_search_lattices(digits, 1, 9)[0]
    starts = phone_start_labels(digits[0])
    got, ok = determinize_lattice_phone_pruned(raw, starts, 6.0,
                                               PhoneDeterminizeOptions(minimize=True))
    plain, _ = determinize_lattice_phone_pruned(raw, starts, 6.0)
    assert ok and _same_paths(got, plain) and got.num_states < plain.num_states


def test_tool_minimize(tmp_path):
    from nnetmix.decode.latio import CompactLatticeWriter, iter_compact_lattices
    from nnetmix.decode.latrescore import raw_to_compact
    raws = digits_search_lattices(digits_system(), 3, 10)
    with CompactLatticeWriter(f"ark:{tmp_path}/raw.ark") as w:
        for i, raw in enumerate(raws):
            w.write(f"u{i}", raw_to_compact(raw))
    tool = load_bin("lattice-determinize-pruned.py")
    for flag in ("false", "true"):
        assert tool.main([f"--minimize={flag}", "--beam=5.0", f"ark:{tmp_path}/raw.ark",
                          f"ark:{tmp_path}/{flag}.ark"]) == 0
    plain = dict(iter_compact_lattices(f"ark:{tmp_path}/false.ark"))
    small = dict(iter_compact_lattices(f"ark:{tmp_path}/true.ark"))
    for k in plain:
        pa, pb = compact_paths(plain[k]), compact_paths(small[k])
        assert pa.keys() == pb.keys() and all(pa[w][1] == pb[w][1] for w in pa)
        assert all(abs(pa[w][0] - pb[w][0]) < 1e-3 for w in pa)
        assert small[k].num_states <= plain[k].num_states


def test_decoder_minimize():
    from nnetmix.decode.decoder import LatticeDecoder, LatticeDecoderConfig
    tm, _tree, hclg, _keep, _wp = digits_system()
    ll = np.random.default_rng(4).normal(scale=2.0, size=(50, tm.num_pdfs)).astype(np.float32)
    res = [LatticeDecoder(hclg, tm, LatticeDecoderConfig(
        decoder="faster", beam=13.0, lattice_beam=5.0, acoustic_scale=0.2, allow_partial=True,
        minimize=m)).decode(ll, "u") for m in (False, True)]
    assert res[0].words == res[1].words and res[0].lattice.num_arcs() > 1
    assert _same_paths(res[0].lattice, res[1].lattice)
    assert res[1].lattice.num_states <= res[0].lattice.num_states
