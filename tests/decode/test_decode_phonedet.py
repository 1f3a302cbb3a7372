"""Phone-then-word determinization (nnetmix/decode/phonedet.py, Kaldi's
DeterminizeLatticePhonePrunedWrapper): phone boundaries marked as Kaldi marks them, and the
claim the wrapper rests on -- the same word lattice as word-only determinization: the same word
sequences within the beam, with the same best costs and alignments -- on random raw lattices
(with exact cost ties) and the compiled search's digits lattices; python and compiled give the
same lattices; the tool and the decoder options."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import logging

import numpy as np
import pytest

from nnetmix.decode.decoder import LatticeDecoder, LatticeDecoderConfig
from nnetmix.decode.latio import CompactLatticeWriter, iter_compact_lattices
from nnetmix.decode.latrescore import raw_to_compact
from nnetmix.decode.lattice import RawLattice, determinize_lattice_pruned_status
from nnetmix.decode.phonedet import (PhoneDeterminizeOptions, determinize_lattice_phone_pruned,
                                     factor_to_compact, insert_phones, phone_start_labels)
from nnetmix.kaldi.transition_model import write_transition_model

from helpers import (all_paths, compact_paths, digits_search_lattices, digits_system, load_bin,
                     random_mixed_lattice, random_raw_lattice)


def _in_beam(paths: dict, best: float, beam: float) -> dict:
    return {k: v for k, v in paths.items() if v[0] <= best + beam - 1e-6}


def _same_in_beam(a, b, beam: float, tol: float = 1e-6) -> bool:
    """Two word-deterministic lattices: the same best cost, and the same word sequences within
    the beam with the same costs (within ``tol``) and alignments."""
    pa, pb = compact_paths(a), compact_paths(b)
    if not pa or not pb:
        return not pa and not pb
    best = min(v[0] for v in pa.values())
    if abs(best - min(v[0] for v in pb.values())) > tol:
        return False
    ia, ib = _in_beam(pa, best, beam), _in_beam(pb, best, beam)
    return ia.keys() == ib.keys() and all(
        abs(ia[k][0] - ib[k][0]) <= tol and ia[k][1] == ib[k][1] for k in ia)


def _both(caplog, raw, pmap, beam, **kw):
    """((lattice, status), warnings) of the python and the compiled wrapper."""
    res = []
    for impl in ("python", "compiled"):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            out = determinize_lattice_phone_pruned(raw, pmap, beam, impl=impl, **kw)
        res.append((out, [r.getMessage() for r in caplog.records]))
    return res


def test_insert_phones_as_kaldi():
    """Kaldi's rules: a phone-starting transition-id marks its arc, on the word side (after
    the highest word label), on the arc itself when it has no word, else on a new arc after it;
    arcs leaving the start state are not marked, nor transition-ids that start no phone."""
    pmap = np.array([0, 2, 0, 3, 0])          # tid 1 starts phone 2, tid 3 phone 3
    # 0 -1:5-> 1 -1:0-> 2 -2:0-> 3,  1 -3:7-> 3,  1 -4:0-> 3 ; final 3
    raw = RawLattice(4, 0, np.array([0, 1, 2, 1, 1]), np.array([1, 2, 3, 3, 3]),
                     np.array([1, 1, 2, 3, 4]), np.array([5, 0, 0, 7, 0]), np.ones(5),
                     np.arange(5.0), np.array([np.inf] * 3 + [0.0]),
                     np.array([np.inf] * 3 + [0.0]))
    out, first = insert_phones(raw, pmap)
    assert first == 8 and out.num_states == 5
    assert out.olabel.tolist() == [5, 8 + 2, 0, 7, 0, 8 + 3]
    assert out.dst.tolist() == [1, 2, 3, 4, 3, 3] and out.src.tolist()[-1] == 4
    assert out.ilabel.tolist() == [1, 1, 2, 3, 4, 0] and out.g[-1] == out.a[-1] == 0.0
    assert not np.isfinite(out.final_g[4])
    with pytest.raises(Exception, match="do not match"):
        insert_phones(raw, pmap[:3])


@pytest.fixture(scope="module")
def digits():
    return digits_system()


def test_phone_starts_mark_each_phone_once(digits):
    """On a real alignment, the marked transition-ids are exactly the first of each phone
    (tm.split_to_phones), with its phone."""
    tm, _tree, hclg, _keep, _wp = digits
    starts = phone_start_labels(tm)
    rng = np.random.default_rng(3)
    ll = rng.normal(scale=2.0, size=(60, tm.num_pdfs)).astype(np.float32)
    ali = LatticeDecoder(hclg, tm, LatticeDecoderConfig(
        decoder="faster", beam=13.0, acoustic_scale=0.2, allow_partial=True)).decode(
            ll, "u", lattice=False).alignment
    phones = tm.split_to_phones(ali)
    assert len(phones) > 3
    assert [int(starts[t]) for t in ali if starts[t]] == [int(tm.tid2phone[p[0]])
                                                          for p in phones]


@pytest.mark.parametrize("group", range(3))
def test_random_lattices_same_as_word_only(caplog, group):
    rng = np.random.default_rng(2000 + group)
    checked = 0
    for _ in range(40):
        raw = random_mixed_lattice(rng, 9, 5, 0.7)
        pmap = np.concatenate([[0], rng.integers(0, 4, size=8)])
        beam = float(rng.choice([np.inf, 4.0, 1.5, 0.5]))
        (py, wpy), (c, wc) = _both(caplog, raw, pmap, beam)
        assert py == c and wpy == wc and py[1]
        word, ok = determinize_lattice_pruned_status(raw, beam)
        assert _same_in_beam(word, c[0], beam)
        if raw.num_states <= 16:        # against every path of the raw lattice
            best: dict = {}
            for words, tids, g, a in all_paths(raw):
                if words not in best or (g + a, tids) < best[words]:
                    best[words] = (g + a, tids)
            b0 = min(v[0] for v in best.values())
            got = compact_paths(c[0])
            assert {k: v[0] for k, v in _in_beam(best, b0, beam).items()} == pytest.approx(
                {k: v[0] for k, v in _in_beam(got, b0, beam).items()}, abs=1e-6)
            checked += 1
    assert checked > 5


def test_digits_lattices_same_as_word_only(digits, caplog):
    tm = digits[0]
    starts = phone_start_labels(tm)
    sizes = []
    for raw in digits_search_lattices(digits, 5, 4):
        for beam in (6.0, 2.0):
            (py, wpy), (c, wc) = _both(caplog, raw, starts, beam)
            assert py == c and wpy == wc and py[1]
            word, _ = determinize_lattice_pruned_status(raw, beam)
            assert _same_in_beam(word, c[0], beam)
            sizes.append(len(compact_paths(c[0])))
    assert max(sizes) > 10      # lattices with alternatives


def test_one_pass_alone(digits, caplog):
    """--word-determinize=false: the phone pass's lattice (not deterministic on words), whose
    best cost per word sequence within the beam is the word lattice's; both false: Kaldi's
    warning and the raw lattice's paths, unchanged."""
    tm = digits[0]
    starts = phone_start_labels(tm)
    raw = digits_search_lattices(digits, 1, 5)[0]
    word, _ = determinize_lattice_pruned_status(raw, 6.0)
    want = compact_paths(word)
    b0 = min(v[0] for v in want.values())
    phone_only, ok = determinize_lattice_phone_pruned(
        raw, starts, 6.0, PhoneDeterminizeOptions(word_determinize=False))
    assert ok and phone_only.num_arcs() > word.num_arcs()
    # the pass's chains (one transition-id per arc) come back factored into compact arcs
    assert max(len(arc[3]) for arcs in phone_only.arcs for arc in arcs) > 1
    got: dict = {}
    stack = [(phone_only.start, (), 0.0)]
    while stack:
        s, words, cost = stack.pop()
        if phone_only.finals[s] is not None:
            fin = phone_only.finals[s]
            got[words] = min(got.get(words, np.inf), cost + fin[0] + fin[1])
        for lab, g, a, _t, nxt in phone_only.arcs[s]:
            stack.append((nxt, words + ((lab,) if lab else ()), cost + g + a))
    assert {k: v for k, v in got.items() if v <= b0 + 6.0 - 1e-6} == pytest.approx(
        {k: v[0] for k, v in _in_beam(want, b0, 6.0).items()}, abs=1e-5)
    small = random_raw_lattice(np.random.default_rng(1), num_frames=3, width=2)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        copy, ok = determinize_lattice_phone_pruned(
            small, np.arange(9), 1.0, PhoneDeterminizeOptions(False, False))
    assert ok and any("Both --phone-determinize and --word-determinize are set to false"
                      in r.getMessage() for r in caplog.records)
    assert copy.num_arcs() <= factor_to_compact(small).num_arcs() <= len(small.src)
    raw_paths = sorted((w, t, round(g + a, 9)) for w, t, g, a in all_paths(small))
    stack, got_paths = [(copy.start, (), (), 0.0)], []
    while stack:
        s, words, tids, cost = stack.pop()
        if copy.finals[s] is not None:
            fin = copy.finals[s]
            got_paths.append((words, tids + fin[2], round(cost + fin[0] + fin[1], 9)))
        for lab, g, a, t, nxt in copy.arcs[s]:
            stack.append((nxt, words + ((lab,) if lab else ()), tids + t, cost + g + a))
    assert sorted(got_paths) == raw_paths


def test_tool_and_decoder_options(digits, tmp_path):
    """lattice-determinize-phone-pruned.py: python and compiled write the same archive, and
    its lattices match lattice-determinize-pruned.py's within the beam; the decoder's
    --phone-determinize true and false give the same words and in-beam lattice paths."""
    tm, _tree, hclg, _keep, _wp = digits
    mdl = tmp_path / "final.mdl"
    write_transition_model(str(mdl), tm)
    lats = tmp_path / "raw.ark"
    with CompactLatticeWriter(f"ark:{lats}") as w:
        for i, raw in enumerate(digits_search_lattices(digits, 3, 6)):
            w.write(f"u{i}", raw_to_compact(raw))
    tool = load_bin("lattice-determinize-phone-pruned.py")
    for impl in ("python", "compiled"):
        assert tool.main([f"--determinize-impl={impl}", "--beam=5.0", str(mdl), f"ark:{lats}",
                          f"ark:{tmp_path}/{impl}.ark"]) == 0
    assert (tmp_path / "python.ark").read_bytes() == (tmp_path / "compiled.ark").read_bytes()
    assert load_bin("lattice-determinize-pruned.py").main(
        ["--beam=5.0", f"ark:{lats}", f"ark:{tmp_path}/word.ark"]) == 0
    phone = dict(iter_compact_lattices(f"ark:{tmp_path}/compiled.ark"))
    word = dict(iter_compact_lattices(f"ark:{tmp_path}/word.ark"))
    assert phone.keys() == word.keys() and len(phone) == 3
    # the archives hold float32 costs, summed in another order by each
    assert all(_same_in_beam(word[k], phone[k], 5.0, tol=1e-4) for k in word)
    rng = np.random.default_rng(2)
    ll = rng.normal(scale=2.0, size=(50, tm.num_pdfs)).astype(np.float32)
    res = [LatticeDecoder(hclg, tm, LatticeDecoderConfig(
        decoder="faster", beam=13.0, lattice_beam=5.0, acoustic_scale=0.2, allow_partial=True,
        phone_determinize=p)).decode(ll, "u") for p in (True, False)]
    assert res[0].words == res[1].words and res[0].lattice.num_arcs() > 1
    # lattices are written with unscaled acoustic costs: compare at the decoding scale
    scaled = [r.lattice.scale(acoustic_scale=0.2) for r in res]
    assert _same_in_beam(scaled[1], scaled[0], 5.0, tol=1e-4)
