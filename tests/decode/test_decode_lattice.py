"""Lattices: pruned determinization against brute force, archive round trips (kaldifst reads what
we write), lattice-scale / add-penalty / best-path, and the LM-weight sweep."""

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import kaldifst
import numpy as np
import pytest

from nnetmix.decode.latio import (CompactLatticeWriter, fst_bytes,
                                  iter_compact_lattices, lattice4_bytes)
from nnetmix.decode.lattice import (CompactLattice, RawLattice, best_path,
                                    determinize_lattice_pruned)
from nnetmix.decode.lattools import lattice_add_penalty, lattice_best_path, lattice_scale

from helpers import all_paths, clat_paths, load_bin, random_raw_lattice


def _best_per_word_seq(paths):
    best = {}
    for words, tids, g, a in paths:
        if words not in best or g + a < best[words][1] + best[words][2] - 1e-9:
            best[words] = (tids, g, a)
    return best


@pytest.mark.parametrize("seed", range(8))
def test_determinize_keeps_best_path_of_each_word_sequence(seed):
    rng = np.random.default_rng(seed)
    raw = random_raw_lattice(rng)
    ref = _best_per_word_seq(all_paths(raw))
    clat = determinize_lattice_pruned(raw, beam=1e9)
    got = clat_paths(clat)
    words = [p[0] for p in got]
    assert len(words) == len(set(words)), "determinized lattice has repeated word sequences"
    assert set(words) == set(ref)
    for w, tids, g, a in got:
        assert abs((g + a) - (ref[w][1] + ref[w][2])) < 1e-6
    # deterministic on words: no state has two arcs with the same label
    for arcs in clat.arcs:
        labels = [a[0] for a in arcs]
        assert len(labels) == len(set(labels))


@pytest.mark.parametrize("seed", range(4))
def test_determinize_prunes_by_beam(seed):
    rng = np.random.default_rng(100 + seed)
    raw = random_raw_lattice(rng, num_frames=8)
    ref = _best_per_word_seq(all_paths(raw))
    best = min(g + a for _t, g, a in ref.values())
    beam = 1.5
    clat = determinize_lattice_pruned(raw, beam=beam)
    got = {p[0]: p for p in clat_paths(clat)}
    within = {w for w, (_t, g, a) in ref.items() if g + a <= best + beam - 1e-6}
    assert within <= set(got)
    for w in within:
        assert abs(got[w][2] + got[w][3] - ref[w][1] - ref[w][2]) < 1e-6
    assert len(got) < len(ref)
    # as Kaldi's PruneLattice: every arc and final weight lies on SOME path within the beam
    # (a path made of such arcs may still be worse than that)
    for s in range(clat.num_states):
        for k in range(len(clat.arcs[s])):
            through = [p for p in _paths_through(clat, s, k)]
            assert min(through) <= best + beam + 1e-6


def _paths_through(clat, s0, k0):
    """Total costs of the successful paths that use arc k0 of state s0."""
    out = []

    def walk(s, cost, used):
        fin = clat.finals[s]
        if fin is not None and used:
            out.append(cost + fin[0] + fin[1])
        for k, (_lab, g, a, _t, nxt) in enumerate(clat.arcs[s]):
            walk(nxt, cost + g + a, used or (s, k) == (s0, k0))
    walk(clat.start, 0.0, False)
    return out


def _clat():
    c = CompactLattice()
    for _ in range(4):
        c.add_state()
    c.start = 0
    c.add_arc(0, 5, 1.5, 20.25, (1, 2, 2), 1)
    c.add_arc(0, 6, 1.0, 18.0, (1, 3), 2)
    c.add_arc(1, 7, 0.5, 10.0, (4, 4), 3)
    c.add_arc(2, 7, 0.25, 14.0, (5,), 3)
    c.set_final(3, 0.125, 1.0, (6,))
    return c


def test_compact_lattice_binary_and_text_roundtrip(tmp_path):
    c = _clat()
    for spec in (f"ark:{tmp_path}/a.ark", f"ark,t:{tmp_path}/a.txt",
                 f"ark:|gzip -c > {tmp_path}/a.gz"):
        with CompactLatticeWriter(spec) as w:
            w.write("utt1", c)
            w.write("utt2", CompactLattice())
    for rs in (f"ark:{tmp_path}/a.ark", f"ark:{tmp_path}/a.txt",
               f"ark:gunzip -c {tmp_path}/a.gz|"):
        got = list(iter_compact_lattices(rs))
        assert [k for k, _ in got] == ["utt1", "utt2"]
        assert got[0][1].approx_equal(c, 1e-4)
        assert got[1][1].num_states == 0
    text = (tmp_path / "a.txt").read_text()
    assert text.startswith("utt1 \n0\t1\t5\t1.5,20.25,1_2_2\n")
    raw = (tmp_path / "a.ark").read_bytes()
    assert raw[5:9] == bytes([0xD6, 0xFD, 0xB2, 0x7E]) and b"compactlattice44" in raw[:40]
    # ark,scp: the offsets in the scp reach each lattice
    with CompactLatticeWriter(f"ark,scp:{tmp_path}/b.ark,{tmp_path}/b.scp") as w:
        w.write("u1", c)
        w.write("u2", c)
    got = list(iter_compact_lattices(f"scp:{tmp_path}/b.scp"))
    assert [k for k, _ in got] == ["u1", "u2"] and got[1][1] == got[0][1]


def test_binary_fst_layout_is_what_kaldifst_reads(tmp_path):
    """Our OpenFst writer, with standard and lattice4 weights, read back by kaldifst."""
    import struct
    states = [(struct.pack("<f", np.inf), [struct.pack("<iifi", 3, 4, 1.5, 1)]),
              (struct.pack("<f", 0.5), [])]
    (tmp_path / "s.fst").write_bytes(fst_bytes("standard", 0, states))
    f = kaldifst.StdVectorFst.read(str(tmp_path / "s.fst"))
    assert f.to_str(show_weight_one=True).split() == "0 1 3 4 1.5 1 0.5".split()
    # what kaldifst writes for the same FST is byte-identical
    f.write(str(tmp_path / "k.fst"))
    assert (tmp_path / "k.fst").read_bytes() == (tmp_path / "s.fst").read_bytes()
    rng = np.random.default_rng(3)
    raw = random_raw_lattice(rng, num_frames=3)
    (tmp_path / "l.fst").write_bytes(lattice4_bytes(raw))
    lat = kaldifst.Lattice.read(str(tmp_path / "l.fst"))
    back = RawLattice.from_kaldifst(lat)
    assert back.num_states == raw.num_states and len(back.src) == len(raw.src)
    assert np.allclose(np.sort(back.g + back.a), np.sort(raw.g + raw.a), atol=1e-5)
    # a kaldifst-written lattice4 is read by our lattice reader (ConvertLattice)
    lat.write(str(tmp_path / "k.lat"))
    (tmp_path / "k.ark").write_bytes(b"utt " + (tmp_path / "k.lat").read_bytes())
    [(key, clat)] = list(iter_compact_lattices(f"ark:{tmp_path}/k.ark"))
    ref = _best_per_word_seq(all_paths(raw))
    words, _ali, g, a = best_path(clat)
    assert abs(g + a - min(x[1] + x[2] for x in ref.values())) < 1e-4


def test_scale_penalty_best_path():
    c = _clat()
    words, ali, g, a = best_path(c)
    assert words == [5, 7] and ali == [1, 2, 2, 4, 4, 6]     # 2.125 + 31.25 < 1.375 + 33
    assert (g, a) == (2.125, 31.25)
    assert best_path(_clat(), acoustic_scale=0.1)[0] == [6, 7]   # 5.25 > 4.675
    c2 = _clat().scale(acoustic_scale=0.1)
    assert best_path(c2)[0] == [6, 7] and abs(best_path(c2)[3] - 3.3) < 1e-9
    c3 = _clat().add_word_ins_penalty(1.0)
    assert c3.arcs[0][0][1] == 2.5
    with pytest.raises(Exception):
        from nnetmix.decode.lattools import lattice_scale as ls
        ls("ark:/dev/null", "ark:/dev/null", acoustic_scale=0.5, inv_acoustic_scale=2.0)


def _sweep_case(tmp_path):
    """One utterance: the truth 'A B' has the better acoustics, a competitor 'A' has the better
    graph cost. LMWT small -> acoustics win -> correct; large -> LM wins -> deletion."""
    c = CompactLattice()
    for _ in range(3):
        c.add_state()
    c.start = 0
    c.add_arc(0, 1, 2.0, 100.0, (1, 1), 1)        # A
    c.add_arc(1, 2, 6.0, 100.0, (2, 2), 2)        # B (expensive in the LM)
    c.set_final(1, 0.0, 184.0, (3, 3))            # end after A: acoustically 84 worse
    c.set_final(2, 0.0, 0.0, ())
    with CompactLatticeWriter(f"ark:|gzip -c > {tmp_path}/lat.1.gz") as w:
        w.write("u1", c)
    return c


@pytest.mark.parametrize("lmwt,expect", [(7, [1, 2]), (12, [1, 2]), (17, [1])])
def test_lm_weight_sweep(tmp_path, lmwt, expect):
    _sweep_case(tmp_path)
    lattice_scale(f"ark:gunzip -c {tmp_path}/lat.1.gz|", f"ark:{tmp_path}/s.ark",
                  inv_acoustic_scale=lmwt)
    lattice_add_penalty(f"ark:{tmp_path}/s.ark", f"ark:{tmp_path}/p.ark", 0.0)
    lattice_best_path(f"ark:{tmp_path}/p.ark", f"ark,t:{tmp_path}/tra")
    assert (tmp_path / "tra").read_text().split()[1:] == [str(x) for x in expect]


def test_lattice_bins(tmp_path, capsys):
    _sweep_case(tmp_path)
    scale, pen, bp, cp = (load_bin(n) for n in ("lattice-scale.py", "lattice-add-penalty.py",
                                                "lattice-best-path.py", "lattice-copy.py"))
    assert scale.main(["--inv-acoustic-scale=10", f"ark:gunzip -c {tmp_path}/lat.1.gz|",
                       f"ark:{tmp_path}/s.ark"]) == 0
    assert pen.main(["--word-ins-penalty=0.5", f"ark:{tmp_path}/s.ark",
                     f"ark:{tmp_path}/p.ark"]) == 0
    (tmp_path / "words.txt").write_text("<eps> 0\nA 1\nB 2\n")
    assert bp.main([f"--word-symbol-table={tmp_path}/words.txt", f"ark:{tmp_path}/p.ark",
                    f"ark,t:{tmp_path}/tra", f"ark,t:{tmp_path}/ali"]) == 0
    assert (tmp_path / "tra").read_text() == "u1 1 2 \n"
    assert (tmp_path / "ali").read_text() == "u1 1 1 2 2 \n"   # 9 + 20 < 2.5 + 28.4
    assert "u1 A B" in capsys.readouterr().err
    assert cp.main([f"ark:{tmp_path}/p.ark", f"ark,t:{tmp_path}/p.txt"]) == 0
    assert "1\t2\t2\t6.5,10,2_2" in (tmp_path / "p.txt").read_text()
    assert bp.main([f"ark:{tmp_path}/missing.ark"]) == 1
