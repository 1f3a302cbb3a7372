"""State-level lattices, gmm-rescore-lattice and lattice-determinize-pruned (decode_fmllr.sh's
last step) on the digits-sized monophone system: rescoring a decoder's undeterminized lattice
with the log-likelihoods it was decoded with gives back its acoustic costs, and determinizing it
gives the lattice the decoder determinizes itself."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import numpy as np
import pytest

from nnetmix.decode.decoder import LatticeDecoder, LatticeDecoderConfig
from nnetmix.decode.latio import CompactLatticeWriter, iter_compact_lattices
from nnetmix.decode.lattice import CompactLattice, LatticeError, best_path
from nnetmix.decode.latrescore import (acoustic_rescore, compact_to_raw, determinize_lattices,
                                       lattice_state_times, raw_to_compact, rescore_lattices)

from helpers import digits_system, load_bin

ACWT = 0.1


@pytest.fixture(scope="module")
def digits():
    return digits_system()


def _loglikes(tm, tree, word_phones, rng, words, per_state=3, noise=2.0):
    seq = []
    for w in words:
        for p in word_phones[w]:
            for c in range(3):
                seq += [tree.compute_pdf([p], c)] * per_state
    ll = rng.normal(-6.0, noise, size=(len(seq), tm.num_pdfs)).astype(np.float32)
    ll[np.arange(len(seq)), seq] = rng.normal(-1.0, noise, size=len(seq))
    return ll


def _decode(tm, hclg, ll, determinize, lattice_beam=6.0):
    cfg = LatticeDecoderConfig(beam=13.0, lattice_beam=lattice_beam, acoustic_scale=ACWT,
                               determinize_lattice=determinize, decoder="faster")
    return LatticeDecoder(hclg, tm, cfg).decode(ll, "u")


def test_compact_raw_round_trip_and_string_chains():
    clat = CompactLattice()
    for _ in range(3):
        clat.add_state()
    clat.start = 0
    clat.add_arc(0, 5, 1.0, 2.0, (3, 4, 4), 1)
    clat.add_arc(0, 0, 5.0, 0.0, (3, 3, 4), 1)  # a worse epsilon-word alternative
    clat.add_arc(1, 6, 0.25, 1.5, (7,), 2)
    clat.set_final(2, 0.125, 0.75, (8, 9))
    raw = compact_to_raw(clat)
    # chains of 3, 3 and 1 arcs, and one of 2 to a new final state for the final string
    assert raw.num_states == 3 + 2 + 2 + 2 and len(raw.src) == 3 + 3 + 1 + 2
    times, T = lattice_state_times(raw)
    assert T == 6 and times[2] == 4
    words, ali, g, a = best_path(raw_to_compact(raw))
    assert words == [5, 6] and ali == [3, 4, 4, 7, 8, 9]
    assert (g, a) == pytest.approx((1.0 + 0.25 + 0.125, 2.0 + 1.5 + 0.75))
    # one transition-id per arc: the raw lattice maps back onto the same compact one
    single = raw_to_compact(compact_to_raw(raw_to_compact(raw)))
    assert single == raw_to_compact(raw)


def test_state_times_refuse_inconsistent_paths():
    clat = CompactLattice()
    for _ in range(2):
        clat.add_state()
    clat.start = 0
    clat.add_arc(0, 1, 0.0, 0.0, (1,), 1)
    clat.add_arc(0, 2, 0.0, 0.0, (1, 1), 1)
    clat.set_final(1, 0.0, 0.0)
    with pytest.raises(LatticeError, match="reached at frames"):
        lattice_state_times(compact_to_raw(clat))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rescore_with_same_loglikes_then_determinize_is_the_decoders_lattice(digits, seed):
    tm, tree, hclg, _keep, word_phones = digits
    rng = np.random.default_rng(seed)
    words = [int(w) for w in rng.choice(sorted(word_phones), size=3)]
    ll = _loglikes(tm, tree, word_phones, rng, words)
    state = _decode(tm, hclg, ll, determinize=False)
    det = _decode(tm, hclg, ll, determinize=True)
    raw = compact_to_raw(state.lattice)
    times, T = lattice_state_times(raw)
    assert T == ll.shape[0]
    # the decoder's own acoustic costs are -loglike of each arc's pdf at its frame
    new = acoustic_rescore(raw, ll.astype(np.float64), tm.tid2pdf, times)
    assert np.allclose(new.a, raw.a, atol=1e-3)
    # ... and --old-acoustic-scale=1 adds them (Kaldi: scale then add)
    twice = acoustic_rescore(raw, ll.astype(np.float64), tm.tid2pdf, times, 1.0)
    assert np.allclose(twice.a, 2 * raw.a, atol=2e-3)
    # determinizing the rescored state-level lattice at the decoder's lattice beam gives the
    # decoder's determinized lattice
    from nnetmix.decode.lattice import determinize_lattice_pruned
    new.a = new.a * ACWT
    ours = determinize_lattice_pruned(new, 6.0).scale(acoustic_scale=1.0 / ACWT)
    assert ours.approx_equal(det.lattice, tol=2e-3)


def test_rescore_with_other_loglikes_gives_their_best_path(digits):
    tm, tree, hclg, _keep, word_phones = digits
    rng = np.random.default_rng(7)
    words = [int(w) for w in rng.choice(sorted(word_phones), size=4)]
    ll = _loglikes(tm, tree, word_phones, rng, words, noise=2.5)
    ll2 = ll + rng.normal(0.0, 0.5, size=ll.shape).astype(np.float32)  # a "final" model
    state = _decode(tm, hclg, ll, determinize=False, lattice_beam=8.0)
    raw = compact_to_raw(state.lattice)
    times, _ = lattice_state_times(raw)
    new = acoustic_rescore(raw, ll2.astype(np.float64), tm.tid2pdf, times)
    w, ali, g, a = best_path(raw_to_compact(new), 1.0, ACWT)
    # the rescored best path's acoustic cost is the new model's on its own alignment
    assert a == pytest.approx(-float(ll2[np.arange(len(ali)), tm.tid2pdf[ali]].sum()), abs=1e-2)
    direct = _decode(tm, hclg, ll2, determinize=True, lattice_beam=8.0)
    # decoding again searches the whole graph: never worse than the rescored lattice's path
    assert direct.likelihood >= -(g + ACWT * a) - 1e-3
    assert w == direct.words   # the lattice holds the new best path at this beam


def test_tools_end_to_end(digits, tmp_path):
    """gmm-rescore-lattice's and lattice-determinize-pruned's table loops through archives,
    with Kaldi's skip warnings for a missing key and a frame-count mismatch."""
    tm, tree, hclg, _keep, word_phones = digits
    rng = np.random.default_rng(3)
    lls, lats = {}, tmp_path / "lat.tmp.ark"
    with CompactLatticeWriter(f"ark:{lats}") as w:
        for k in ("u1", "u2", "u3"):
            words = [int(x) for x in rng.choice(sorted(word_phones), size=2)]
            lls[k] = _loglikes(tm, tree, word_phones, rng, words)
            w.write(k, _decode(tm, hclg, lls[k], determinize=False).lattice)
    feats = [("u1", lls["u1"]), ("u3", lls["u3"][:-1])]  # u2 missing, u3 one frame short
    out = tmp_path / "rescored.ark"
    assert rescore_lattices(f"ark:{lats}", feats, lambda m: m, tm.tid2pdf, f"ark:{out}") == 1
    det = tmp_path / "det.ark"
    assert determinize_lattices(f"ark:{out}", f"ark:{det}", ACWT, 6.0) == (1, 0)
    [(key, got)] = list(iter_compact_lattices(f"ark:{det}"))
    assert key == "u1"
    assert got.approx_equal(_decode(tm, hclg, lls["u1"], determinize=True).lattice, tol=2e-3)


def test_determinize_tool_refuses_zero_scale(tmp_path, capsys):
    tool = load_bin("lattice-determinize-pruned.py")
    (tmp_path / "empty.ark").write_bytes(b"")
    rc = tool.main(["--acoustic-scale=0", f"ark:{tmp_path}/empty.ark", f"ark:{tmp_path}/o.ark"])
    assert rc != 0
    assert "zero acoustic scale" in capsys.readouterr().err
