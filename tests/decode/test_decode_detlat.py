"""The compiled lattice determinizer (nnetmix/decode/detlat.py) against the Python reference
(impl="python"): the same CompactLattice (states, arc order, strings, weights), the same status
and the same warnings, on random raw lattices (word and transition-id epsilons, exact cost ties,
beams, --max-mem and --max-states budgets hit) and on lattices of the compiled search on the
digits graph; lattice-determinize-pruned and the decoder give the same output with either."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import logging

import numpy as np
import pytest

from nnetmix.decode.decoder import LatticeDecoder, LatticeDecoderConfig
from nnetmix.decode.latio import CompactLatticeWriter, iter_compact_lattices
from nnetmix.decode.latrescore import raw_to_compact
from nnetmix.decode.lattice import (LatticeError, RawLattice, best_path, connect,
                                    compact_from_arrays, determinize_compiled_arrays,
                                    determinize_lattice_pruned, determinize_lattice_pruned_status,
                                    prune_compact_lattice)

from helpers import (all_paths, compact_paths, digits_search_lattices, digits_system, load_bin,
                     random_mixed_lattice, random_raw_lattice)

LOGGER = "nnetmix.decode.lattice"


def _both(caplog, raw, beam, **kw):
    """(outcome, warnings) of each implementation; outcome is (lattice, reached beam) or the
    LatticeError's message."""
    res = []
    for impl in ("python", "compiled"):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            try:
                out = determinize_lattice_pruned_status(raw, beam, impl=impl, **kw)
            except LatticeError as e:
                out = str(e)
        res.append((out, [r.getMessage() for r in caplog.records if r.name == LOGGER]))
    return res


def test_connect_prune_equals_trimming_and_pruning_in_python():
    """detlat.connect_prune on the determinizer's arrays gives what lattice.py's
    prune_compact_lattice(connect(...)) gives on their CompactLattice, at beams that
    cut arcs, final weights and states."""
    from nnetmix.decode import detlat
    rng = np.random.default_rng(77)
    cut = 0
    for _ in range(60):
        raw = random_mixed_lattice(rng, 10, 3, 0.6)
        try:
            (arcs, w, fstr, fw, start, tpar, tlab), _info = determinize_compiled_arrays(
                raw, 1e9, -1, 0, -1)
        except LatticeError:
            continue
        for beam in (np.inf, 3.0, 1.0, 0.2, 0.0):
            full = compact_from_arrays(start, arcs, w, fstr, fw, tpar, tlab)
            ref = prune_compact_lattice(connect(full), beam)
            got = compact_from_arrays(*detlat.connect_prune(len(fstr), start, arcs, w, fstr, fw,
                                                            beam), tpar, tlab)
            assert got == ref
            cut += ref.num_states < full.num_states
    assert cut > 10


@pytest.mark.parametrize("group", range(4))
def test_random_lattices_equal_reference(caplog, group):
    rng = np.random.default_rng(1000 + group)
    for _ in range(40):
        raw = random_mixed_lattice(rng, 10, 3, 0.6)
        beam = float(rng.choice([np.inf, 1e9, 4.0, 1.5, 0.3, 0.0]))
        (py, wpy), (c, wc) = _both(caplog, raw, beam)
        assert py == c and wpy == wc


def test_budgets_hit_equal_reference(caplog):
    """--max-mem small enough to stop determinization (Kaldi's 'Did not reach requested beam'
    and, below half the beam, prune-and-retry), --max-states and --max-arcs (a partial lattice
    and a False status, no warning of their own): the same lattices, flags, warnings and errors;
    each budget is really hit in some of the cases."""
    rng = np.random.default_rng(7)
    stopped = retried = unfinished = limit_hit = 0
    for _ in range(80):
        raw = random_raw_lattice(rng, num_frames=int(rng.integers(4, 16)),
                                 width=int(rng.integers(2, 6)))
        kw = dict(max_mem=int(rng.choice([300, 600, 1000, 2000, 4000, 8000, 16000, -1, -1])),
                  max_states=int(rng.choice([-1, -1, 3, 6, 20])),
                  max_arcs=int(rng.choice([-1, -1, 5, 30])))
        (py, wpy), (c, wc) = _both(caplog, raw, float(rng.choice([1e9, 4.0])), **kw)
        assert py == c and wpy == wc and not isinstance(py, str)
        stopped += any("Did not reach requested beam" in m for m in wpy)
        retried += any("retrying" in m for m in wpy)
        unfinished += not py[1]
        limit_hit += not py[1] and not any("Did not reach" in m for m in wpy)
    assert stopped > 10 and retried > 5 and unfinished > 2 and limit_hit > 5


def test_max_states_keeps_the_best_part(caplog):
    """Kaldi's Determinize stops at --max-states / --max-arcs and outputs what it expanded,
    best first: with half the states or arcs of the full lattice the best path is still there
    (the same words and alignment as without the budget), in a smaller lattice."""
    rng = np.random.default_rng(12)
    hit = 0
    for _ in range(20):
        raw = random_raw_lattice(rng, num_frames=7, width=3, num_words=4, word_prob=0.4)
        full, ok = determinize_lattice_pruned_status(raw, 5.0)
        assert ok
        for kw in (dict(max_states=full.num_states // 2), dict(max_arcs=full.num_arcs() // 2)):
            (part, warn), (c, _) = _both(caplog, raw, 5.0, **kw)
            assert part == c
            if part[0].num_states == 0:
                continue
            hit += 1
            # False, or True after Kaldi's retry with a smaller beam finished within the budget
            assert not part[1] or any("retrying" in m for m in warn)
            assert part[0].num_arcs() < full.num_arcs()
            assert best_path(part[0])[:2] == best_path(full)[:2]
    assert hit > 10
    caplog.clear()      # Kaldi's VLOG(1) line, shown at --verbose=1
    with caplog.at_level(logging.INFO - 1, logger=LOGGER):
        determinize_lattice_pruned_status(raw, 5.0, max_states=2)
    assert any(r.levelno == logging.INFO - 1 and "Lattice determinization terminated but not  "
               "because of lattice-beam.  (#states, #arcs) is ( 3," in r.getMessage()
               for r in caplog.records)


def test_max_mem_retry_prunes_tighter(caplog):
    """A budget hit with a small effective beam: the retried lattice is determinized with a
    smaller beam, so it has fewer paths than without the budget."""
    rng = np.random.default_rng(11)
    raw = random_raw_lattice(rng, num_frames=10, width=4)
    (full, _), _ = _both(caplog, raw, 1e9)
    (small, warn), _ = _both(caplog, raw, 1e9, max_mem=1500)
    assert any("retrying" in m for m in warn)
    assert 0 < small[0].num_arcs() < full[0].num_arcs()


def test_errors_and_empty_equal_reference(caplog):
    rng = np.random.default_rng(5)
    raw = random_raw_lattice(rng)
    nopath = RawLattice(raw.num_states, raw.start, raw.src, raw.dst, raw.ilabel, raw.olabel,
                        raw.g, raw.a, np.full(raw.num_states, np.inf),
                        np.full(raw.num_states, np.inf))
    (py, _), (c, _) = _both(caplog, nopath, 5.0)
    assert py == c == "the lattice has no successful path"
    cyc = RawLattice(2, 0, np.array([0, 1]), np.array([1, 0]), np.array([1, 2]),
                     np.array([1, 0]), np.zeros(2), np.zeros(2), np.array([np.inf, 0.0]),
                     np.array([np.inf, 0.0]))
    (py, _), (c, _) = _both(caplog, cyc, 5.0)
    assert py == c and "cycle" in py
    empty = RawLattice(0, -1, *[np.zeros(0, np.int64)] * 4, *[np.zeros(0)] * 4)
    assert determinize_lattice_pruned(empty, 5.0).num_states == 0
    with pytest.raises(LatticeError, match="expected one of"):
        determinize_lattice_pruned(raw, 5.0, impl="fortran")


@pytest.fixture(scope="module")
def digits():
    return digits_system()


def test_decoder_lattices_equal_reference(digits, caplog):
    raws = digits_search_lattices(digits, 6, 0)
    r = raws[0]     # float32 costs: g + a summed in float32 by both, as the reference sums them
    raws.append(RawLattice(r.num_states, r.start, r.src, r.dst, r.ilabel, r.olabel,
                           r.g.astype(np.float32), r.a.astype(np.float32),
                           r.final_g.astype(np.float32), r.final_a.astype(np.float32)))
    sizes = []
    for raw in raws:
        for beam in (6.0, 2.0):
            (py, wpy), (c, wc) = _both(caplog, raw, beam)
            assert py == c and wpy == wc and py[1]
            sizes.append(py[0].num_arcs())
    assert max(sizes) > 10      # lattices with alternatives, not only the best path


def test_tool_and_decoder_give_the_same_output(digits, tmp_path):
    tm, _tree, hclg, _keep, _wp = digits
    raws = digits_search_lattices(digits, 3, 1)
    lats = tmp_path / "raw.ark"
    with CompactLatticeWriter(f"ark:{lats}") as w:
        for i, raw in enumerate(raws):
            w.write(f"u{i}", raw_to_compact(raw))
    tool = load_bin("lattice-determinize-pruned.py")
    for impl in ("python", "compiled"):
        assert tool.main([f"--determinize-impl={impl}", "--acoustic-scale=1.0", "--beam=5.0",
                          f"ark:{lats}", f"ark:{tmp_path}/{impl}.ark"]) == 0
    assert (tmp_path / "python.ark").read_bytes() == (tmp_path / "compiled.ark").read_bytes()
    assert len(list(iter_compact_lattices(f"ark:{tmp_path}/compiled.ark"))) == 3
    assert tool.main(["--determinize-impl=fortran", f"ark:{lats}", f"ark:{tmp_path}/x.ark"]) != 0
    rng = np.random.default_rng(2)
    ll = rng.normal(scale=2.0, size=(40, tm.num_pdfs)).astype(np.float32)
    res = [LatticeDecoder(hclg, tm, LatticeDecoderConfig(
        decoder="faster", beam=13.0, lattice_beam=5.0, acoustic_scale=0.2, allow_partial=True,
        determinize_impl=impl)).decode(ll, "u") for impl in ("python", "compiled")]
    assert res[0].lattice == res[1].lattice and res[0].lattice.num_arcs() > 1


def test_word_sequences_within_the_beam_all_kept():
    """Every word sequence whose best path is within the beam is in the lattice, with that
    cost (against every path of the raw lattice). Many words make states that are reached
    first by a worse path and then by a better one before they are expanded: they must be
    expanded from the better cost, or their successors are pruned against the worse one."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        raw = random_raw_lattice(rng, num_frames=int(rng.integers(2, 8)),
                                 width=int(rng.integers(1, 5)),
                                 num_words=int(rng.integers(1, 12)),
                                 word_prob=float(rng.uniform(0.2, 0.9)))
        beam = float(rng.choice([4.0, 1.5, 0.5]))
        best: dict = {}
        for words, _tids, g, a in all_paths(raw):
            best[words] = min(best.get(words, np.inf), g + a)
        b0 = min(best.values())
        got = compact_paths(determinize_lattice_pruned(raw, beam))
        want = {k: v for k, v in best.items() if v <= b0 + beam - 1e-6}
        assert {k: v[0] for k, v in got.items() if v[0] <= b0 + beam - 1e-6} == pytest.approx(
            want, abs=1e-6)
