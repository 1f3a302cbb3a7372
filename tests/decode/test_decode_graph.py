"""mkgraph: the HCLG built from the Kaldi yesno system equals Kaldi's HCLG.fst; a tiny system."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import kaldifst
import numpy as np

from nnetmix.decode.fstarrays import graph_arrays
from nnetmix.decode.graph import (_from_arrays, add_self_loops, fst_arrays, make_clg, make_h,
                                  make_hclga, make_lg, push_special, read_ilabel_info, relabel,
                                  write_ilabel_info)
from nnetmix.hmm.khg import to_khg_context_dependency, to_khg_transition_model
from nnetmix.kaldi import read_gmm_model, read_tree

from helpers import ROOT, run_script, yesno_lang


def _random_input_paths(fst, rng, n):
    """Input-label sequences of random successful paths (random walks that stop at finals)."""
    num, start, arcs, _w, finals = fst_arrays(fst)
    out = {}
    for i, s in enumerate(arcs[:, 0]):
        out.setdefault(int(s), []).append(i)
    paths = []
    while len(paths) < n:
        s, labels = start, []
        for _ in range(400):
            if np.isfinite(finals[s]) and (not out.get(s) or rng.uniform() < 0.15):
                paths.append(labels)
                break
            i = out[s][rng.integers(len(out[s]))]
            if arcs[i, 2]:
                labels.append(int(arcs[i, 2]))
            s = int(arcs[i, 1])
    return paths


def _best(fst, labels):
    """(output labels, cost) of the best path of ``fst`` that reads ``labels``."""
    acc = kaldifst.make_linear_acceptor(labels)
    f = fst.copy()
    kaldifst.arcsort(f, "ilabel")
    c = kaldifst.compose(acc, f)
    if c.num_states == 0:
        return None
    ok, _i, o, w = kaldifst.get_linear_symbol_sequence(kaldifst.shortest_path(c))
    assert ok
    return tuple(o), float(w.value)


def assert_equivalent(a, b, seed=0, n=60, tol=2e-3):
    rng = np.random.default_rng(seed)
    for x, y in ((a, b), (b, a)):
        for labels in _random_input_paths(x, rng, n):
            ra, rb = _best(x, labels), _best(y, labels)
            assert rb is not None, f"path {labels} accepted by one graph only"
            assert ra[0] == rb[0]
            assert abs(ra[1] - rb[1]) < tol * max(1.0, abs(ra[1])), (labels, ra, rb)


def _yesno_hclg(y):
    L = kaldifst.StdVectorFst.read(str(y / "L_disambig.fst"))
    G = kaldifst.StdVectorFst.read(str(y / "G.fst"))
    tree = read_tree(str(y / "tree"))
    tm, _am = read_gmm_model(str(y / "40.mdl"))
    kc = to_khg_context_dependency(tree, tm.topo)
    ktm = to_khg_transition_model(tm, ctx_dep=kc)
    LG = make_lg(L, G)
    CLG, ilabels = make_clg(LG, [7, 8], tree.N, tree.P)
    Ha, disambig_tid = make_h(ilabels, kc, ktm)
    HCLG = add_self_loops(ktm, make_hclga(Ha, CLG, disambig_tid), 0.1)
    return HCLG, ilabels


def test_yesno_hclg_equals_kaldi(kaldi_fixtures):
    y = kaldi_fixtures / "yesno"
    ours, ilabels = _yesno_hclg(y)
    ref = kaldifst.StdVectorFst.read(str(y / "HCLG.fst"))
    n1, _s1, a1, _w1, _f1 = fst_arrays(ours)
    n2, _s2, a2, _w2, _f2 = fst_arrays(ref)
    assert (n1, len(a1)) == (n2, len(a2)) == (33, 72)
    assert_equivalent(ours, ref)
    assert ilabels[0] == [] and [-8] in ilabels


def test_mkgraph_script_on_yesno(kaldi_fixtures, tmp_path):
    lang, mono = yesno_lang(tmp_path, kaldi_fixtures)
    (tmp_path / "utils").symlink_to(ROOT / "utils")
    proc = run_script(["utils/mkgraph.sh", "lang", "mono", "mono/graph"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    graph = mono / "graph"
    for f in ("HCLG.fst", "words.txt", "phones.txt", "num_pdfs", "disambig_tid.int",
              "phones/disambig.int", "phones/silence.csl"):
        assert (graph / f).is_file(), f
    assert (graph / "num_pdfs").read_text().strip() == "20"
    assert read_ilabel_info(str(lang / "tmp" / "ilabels_1_0"))[1] == [1]
    ref = kaldifst.StdVectorFst.read(str(kaldi_fixtures / "yesno" / "HCLG.fst"))
    assert_equivalent(kaldifst.StdVectorFst.read(str(graph / "HCLG.fst")), ref, seed=1, n=20)
    again = run_script(["utils/mkgraph.sh", "lang", "mono", "mono/graph"], cwd=tmp_path)
    assert again.returncode == 0 and "skipping" in again.stdout


def test_mkgraph_allows_other_disambig_symbols_but_not_other_phones(kaldi_fixtures, tmp_path):
    """A lang directory with a larger lexicon (more #N symbols) than the model's builds, as with
    Kaldi's check_phones_compatible.sh; a phone table that differs in a phone is refused."""
    lang, mono = yesno_lang(tmp_path, kaldi_fixtures)
    (tmp_path / "utils").symlink_to(ROOT / "utils")
    phones = (lang / "phones.txt").read_text()
    (mono / "phones.txt").write_text(phones.replace("#1 8\n", ""))
    proc = run_script(["utils/mkgraph.sh", "lang", "mono", "mono/graph"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (mono / "graph" / "HCLG.fst").is_file()
    (mono / "phones.txt").write_text(phones.replace("OW 5", "AW 5"))
    proc = run_script(["utils/mkgraph.sh", "lang", "mono", "mono/graph2"], cwd=tmp_path)
    assert proc.returncode == 1
    assert "differ in their phones" in proc.stderr
    assert not (mono / "graph2" / "HCLG.fst").exists()


def test_fst_arrays_round_trip_is_exact_and_relabel_keeps_the_rest():
    """fst_arrays and its inverse keep state numbers, arc order and float32 weights bit for
    bit (the text form they replaced printed 6 digits); relabel changes only the input labels
    it is given, and the epsilon counts follow."""
    rng = np.random.default_rng(3)
    n, lines = 40, []
    for s in range(n):
        for _ in range(int(rng.integers(0, 5))):
            lines.append(f"{s}\t{int(rng.integers(0, n))}\t{int(rng.integers(0, 6))}\t"
                         f"{int(rng.integers(0, 4))}\t{float(rng.uniform(0, 30)):.9f}")
    lines.append(f"{n - 1}\t{float(rng.uniform(0, 5)):.9f}")
    fst = kaldifst.compile("\n".join(lines) + "\n", keep_state_numbering=True)
    ref = graph_arrays(fst)
    back = graph_arrays(_from_arrays(*fst_arrays(fst)))
    for k in ("arc_start", "ilabel", "olabel", "weight", "nextstate", "final", "num_input_eps"):
        assert np.array_equal(getattr(ref, k), getattr(back, k)), k
    assert (back.num_states, back.start) == (ref.num_states, ref.start)
    assert any(len(repr(float(w))) > 9 for w in ref.weight)     # more than 6 digits to keep
    out = graph_arrays(relabel(fst, [2, 3]))
    assert np.array_equal(out.ilabel, np.where(np.isin(ref.ilabel, [2, 3]), 0, ref.ilabel))
    assert np.array_equal(out.weight, ref.weight) and np.array_equal(out.olabel, ref.olabel)
    assert out.num_input_eps.sum() == int(np.isin(ref.ilabel, [0, 2, 3]).sum())


def test_push_special_keeps_path_weights_and_makes_uniform_mass():
    f = kaldifst.compile("0\t1\t1\t1\t0.5\n0\t2\t2\t2\t1.5\n1\t2\t3\t3\t0.25\n2\t0.7\n1\t2.0\n")
    p = push_special(f)
    assert_equivalent(f, p, n=20, tol=1e-4)
    n, _s, arcs, w, finals = fst_arrays(p)
    mass = np.bincount(arcs[:, 0], weights=np.exp(-w), minlength=n) + np.exp(-finals)
    assert np.allclose(mass, mass[0], rtol=1e-4)


def test_ilabel_info_roundtrip(tmp_path):
    info = [[], [1], [2], [-8], [3, 4, 5]]
    write_ilabel_info(str(tmp_path / "ilabels"), info)
    data = (tmp_path / "ilabels").read_bytes()
    assert data[:7] == b"\0B\x04\x05\x00\x00\x00"
    assert read_ilabel_info(str(tmp_path / "ilabels")) == info
