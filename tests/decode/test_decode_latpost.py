"""lattice-to-post: forward-backward posteriors on CompactLattices against enumerating every
path by hand, the acoustic scale, and the tool's archive."""
import math

import numpy as np
import pytest
from helpers import load_bin

from nnetmix.decode.latio import CompactLatticeWriter
from nnetmix.decode.lattice import CompactLattice
from nnetmix.decode.latpost import compact_lattice_posteriors
from nnetmix.kaldi import SequentialReader


def diamond() -> CompactLattice:
    """0 -w1-> 1 -w3-> 3 (final, string 9), 0 -w2-> 2 -w3-> 3 and 1 -> 2 (epsilon word): three
    paths of 4 frames with different transition-ids."""
    c = CompactLattice()
    for _ in range(4):
        c.add_state()
    c.start = 0
    c.add_arc(0, 1, 1.0, 2.0, (1, 2), 1)
    c.add_arc(0, 2, 0.5, 4.0, (1, 3), 2)
    c.add_arc(1, 0, 0.0, 0.5, (), 2)
    c.add_arc(1, 3, 2.0, 1.0, (4,), 3)
    c.add_arc(2, 3, 1.0, 1.5, (5,), 3)
    c.set_final(3, 0.25, 0.5, (9,))
    return c


def by_enumeration(c: CompactLattice, ac: float):
    """Every path's tids and probability, the posteriors summed from them."""
    paths = []

    def walk(s, tids, cost):
        if c.finals[s] is not None:
            g, a, t = c.finals[s]
            paths.append((tids + t, cost + g + ac * a))
        for _, g, a, t, nxt in c.arcs[s]:
            walk(nxt, tids + t, cost + g + ac * a)
    walk(c.start, (), 0.0)
    total = math.log(sum(math.exp(-cost) for _, cost in paths))
    frames = [dict() for _ in range(len(paths[0][0]))]
    for tids, cost in paths:
        for f, t in enumerate(tids):
            frames[f][t] = frames[f].get(t, 0.0) + math.exp(-cost - total)
    return [sorted(f.items()) for f in frames], total, len(paths)


@pytest.mark.parametrize("ac", [1.0, 0.1])
def test_posteriors_equal_path_enumeration(ac):
    c = diamond()
    post, like = compact_lattice_posteriors(c, acoustic_scale=ac)
    want, total, num_paths = by_enumeration(c, ac)
    assert num_paths == 3 and like == pytest.approx(total)
    assert [[t for t, _ in f] for f in post] == [[t for t, _ in f] for f in want]
    for got_f, want_f in zip(post, want):
        np.testing.assert_allclose([p for _, p in got_f], [p for _, p in want_f], rtol=1e-6)
        assert sum(p for _, p in got_f) == pytest.approx(1.0, rel=1e-6)


def test_tool_writes_the_posteriors(tmp_path, capsys):
    with CompactLatticeWriter(f"ark:{tmp_path / 'lat'}") as w:
        w.write("u1", diamond())
    assert load_bin("lattice-to-post.py").main([
        "--acoustic-scale=0.1", f"ark:{tmp_path / 'lat'}", f"ark:{tmp_path / 'post'}"]) == 0
    err = capsys.readouterr().err
    assert "Overall average log-like/frame is" in err and "over 4 frames." in err
    assert "Done 1 lattices." in err
    (key, post), = SequentialReader(f"ark:{tmp_path / 'post'}", "post")
    want, _, _ = by_enumeration(diamond(), 0.1)
    assert key == "u1" and len(post) == 4
    for got_f, want_f in zip(post, want):
        assert [t for t, _ in got_f] == [t for t, _ in want_f]
        np.testing.assert_allclose([p for _, p in got_f], [p for _, p in want_f], rtol=1e-5)


def test_zero_acoustic_scale_is_refused(tmp_path, capsys):
    with CompactLatticeWriter(f"ark:{tmp_path / 'lat'}") as w:
        w.write("u1", diamond())
    assert load_bin("lattice-to-post.py").main([
        "--acoustic-scale=0", f"ark:{tmp_path / 'lat'}", f"ark:{tmp_path / 'post'}"]) != 0
    assert "Do not use a zero acoustic scale" in capsys.readouterr().err
    assert not (tmp_path / "post").exists()
