"""Helpers for the decoding tests: a tiny two-word system built in code, yesno fixture dirs,
features synthesised from a GMM along an alignment, and random raw lattices."""
from __future__ import annotations

from pathlib import Path

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import kaldifst
import numpy as np

from nnetmix.kaldi import TableWriter
from nnetmix.kaldi.context_dep import monophone_context_dependency
from nnetmix.kaldi.hmm_topology import default_topology
from nnetmix.kaldi.transition_model import TransitionModel
from nnetmix.decode.lattice import RawLattice

# phones: 1 SIL, 2 a, 3 b, 4 #0, 5 #1 ; words: 1 A, 2 B, 3 #0
TINY_WORDS = "<eps> 0\nA 1\nB 2\n#0 3\n"
TINY_PHONES = "<eps> 0\nSIL 1\na 2\nb 3\n#0 4\n#1 5\n"


def tiny_system():
    """(TransitionModel, tree, L_disambig, G): words A -> a, B -> b, optional silence between
    words; G a unigram loop over A and B with probability 0.5 each and end probability 0.1."""
    topo = default_topology([1, 2, 3], [1], 3, 3)
    tree = monophone_context_dependency([1, 2, 3], topo.phone_to_num_pdf_classes())
    tm = TransitionModel.build(tree, topo)
    # L: 0 start/loop state; word arcs enter a phone then return through optional silence
    L = kaldifst.compile(
        "0\t0\t2\t1\t0.693147\n"      # a:A, no silence after
        "0\t1\t2\t1\t0.693147\n"      # a:A, then silence
        "0\t0\t3\t2\t0.693147\n"
        "0\t1\t3\t2\t0.693147\n"
        "1\t0\t1\t0\n"                # SIL
        "0\t0\t4\t3\n"                # #0:#0 loop (backoff symbol pass-through)
        "0\t0.0\n"
        "1\t0.0\n")
    G = kaldifst.compile("0\t0\t1\t1\t0.798508\n0\t0\t2\t2\t0.798508\n0\t2.302585\n")
    return tm, tree, L, G


def pdfs_of_phone(tree, phone: int, num_states: int = 3) -> list[int]:
    return [tree.compute_pdf([phone], c) for c in range(num_states)]


def loglikes_for(tm, pdf_seq, good: float = 0.0, bad: float = -8.0) -> np.ndarray:
    m = np.full((len(pdf_seq), tm.num_pdfs), bad, dtype=np.float32)
    m[np.arange(len(pdf_seq)), pdf_seq] = good
    return m


def yesno_lang(tmp: Path, fixtures: Path) -> tuple[Path, Path]:
    """A lang dir and a model dir from the Kaldi yesno fixture files."""
    y = fixtures / "yesno"
    lang, mono = tmp / "lang", tmp / "mono"
    (lang / "phones").mkdir(parents=True)
    mono.mkdir()
    for f in ("L_disambig.fst", "L.fst", "G.fst", "phones.txt", "words.txt"):
        (lang / f).write_bytes((y / f).read_bytes())
    (lang / "phones" / "disambig.int").write_text("7\n8\n")
    (lang / "phones" / "silence.csl").write_text("1\n")
    (mono / "final.mdl").write_bytes((y / "40.mdl").read_bytes())
    (mono / "tree").write_bytes((y / "tree").read_bytes())
    return lang, mono


def yesno_text(key: str) -> str:
    return " ".join("YES" if c == "1" else "NO" for c in key.split("_"))


def synth_feats(am, tm, ali, rng, noise: float) -> np.ndarray:
    """Per frame: the heaviest Gaussian's mean of the frame's pdf, plus noise * its std."""
    out = []
    for p in tm.tid2pdf[np.asarray(ali)]:
        g = am[int(p)]
        k = int(np.argmax(g.weights))
        out.append(g.means[k] + rng.normal(size=g.dim) * np.sqrt(g.vars[k]) * noise)
    return np.array(out, dtype=np.float32)


def yesno_data_dir(tmp: Path, fixtures: Path, am, tm, num_utts: int, noise: float = 0.5,
                   static_dim: int = 13, seed: int = 777) -> Path:
    """data dir with static features (the first ``static_dim`` model dims), a zero-mean
    cmvn.scp (so apply-cmvn subtracts nothing) and the text from the utterance names."""
    from nnetmix.kaldi import SequentialReader
    data = tmp / "data"
    data.mkdir()
    rng = np.random.default_rng(seed)
    rx = f"ark:gunzip -c {fixtures / 'yesno' / 'ali.1.gz'}|"
    keys = []
    with SequentialReader(rx, "ivec") as r, \
            TableWriter(f"ark,scp:{data}/feats.ark,{data}/feats.scp", "mat") as w:
        for key, ali in r:
            w[key] = synth_feats(am, tm, ali, rng, noise)[:, :static_dim]
            keys.append(key)
            if len(keys) == num_utts:
                break
    stats = np.zeros((2, static_dim + 1))
    stats[0, -1] = 100.0
    stats[1, :static_dim] = 100.0
    with TableWriter(f"ark,scp:{data}/cmvn.ark,{data}/cmvn.scp", "mat") as w:
        for k in keys:
            w[k] = stats
    (data / "utt2spk").write_text("".join(f"{k} {k}\n" for k in keys))
    (data / "spk2utt").write_text("".join(f"{k} {k}\n" for k in keys))
    (data / "text").write_text("".join(f"{k} {yesno_text(k)}\n" for k in keys))
    return data


def yesno_recipe(tmp: Path, fixtures: Path, num_utts: int, noise: float = 0.5) -> Path:
    """A recipe directory in ``tmp`` for the decoding scripts: lang/, mono/ (the yesno model,
    tree, alignments and graph in mono/graph), data/ (:func:`yesno_data_dir`), steps/ and utils/
    linked, local/score.sh; returns mono/."""
    from nnetmix.kaldi import read_gmm_model
    root = Path(__file__).resolve().parents[2]
    _lang, mono = yesno_lang(tmp, fixtures)
    tm, am = read_gmm_model(str(mono / "final.mdl"))
    yesno_data_dir(tmp, fixtures, am, tm, num_utts=num_utts, noise=noise)
    y = fixtures / "yesno"
    (mono / "ali.1.gz").write_bytes((y / "ali.1.gz").read_bytes())
    for d in ("utils", "steps"):
        (tmp / d).symlink_to(root / d)
    (tmp / "local").mkdir()
    (tmp / "local" / "score.sh").symlink_to(root / "local" / "score.sh")
    graph = mono / "graph"
    graph.mkdir()
    for f in ("HCLG.fst", "words.txt", "phones.txt"):
        (graph / f).write_bytes((y / f).read_bytes())
    return mono


def random_raw_lattice(rng, num_frames: int = 6, width: int = 3, num_words: int = 3,
                       word_prob: float = 0.4) -> RawLattice:
    """A random acyclic lattice: ``width`` states per frame, arcs between consecutive frames
    (tid label, sometimes a word), a few word-epsilon/tid-epsilon arcs inside a frame."""
    arcs = []
    sid = lambda t, j: 1 + t * width + j  # noqa: E731
    n = 1 + (num_frames + 1) * width
    for j in range(width):
        arcs.append((0, sid(0, j), 0, int(rng.integers(1, num_words + 1)), rng.uniform(0, 2), 0.0))
    for t in range(num_frames):
        for j in range(width):
            for k in range(width):
                if rng.uniform() < 0.6 or j == k:
                    w = int(rng.integers(1, num_words + 1)) if rng.uniform() < word_prob else 0
                    arcs.append((sid(t, j), sid(t + 1, k), int(rng.integers(1, 9)), w,
                                 rng.uniform(0, 1), rng.uniform(0, 3)))
            if j + 1 < width and rng.uniform() < 0.3:
                arcs.append((sid(t, j), sid(t, j + 1), 0, int(rng.integers(0, num_words + 1)),
                             rng.uniform(0, 1), 0.0))
    a = np.array(arcs, dtype=np.float64)
    final_g = np.full(n, np.inf)
    final_a = np.full(n, np.inf)
    for j in range(width):
        final_g[sid(num_frames, j)] = rng.uniform(0, 1)
        final_a[sid(num_frames, j)] = 0.0
    return RawLattice(n, 0, a[:, 0].astype(np.int64), a[:, 1].astype(np.int64),
                      a[:, 2].astype(np.int64), a[:, 3].astype(np.int64), a[:, 4], a[:, 5],
                      final_g, final_a)


def all_paths(lat: RawLattice):
    """Every successful path: (words tuple, tids tuple, g, a)."""
    out_arcs = {}
    for i, s in enumerate(lat.src.tolist()):
        out_arcs.setdefault(s, []).append(i)
    res = []

    def walk(s, words, tids, g, a):
        if np.isfinite(lat.final_g[s]):
            res.append((tuple(words), tuple(tids), g + lat.final_g[s], a + lat.final_a[s]))
        for i in out_arcs.get(s, []):
            il, ol = int(lat.ilabel[i]), int(lat.olabel[i])
            walk(int(lat.dst[i]), words + ([ol] if ol else []), tids + ([il] if il else []),
                 g + lat.g[i], a + lat.a[i])
    walk(lat.start, [], [], 0.0, 0.0)
    return res


def clat_paths(clat):
    res = []

    def walk(s, words, tids, g, a):
        fin = clat.finals[s]
        if fin is not None:
            res.append((tuple(words), tuple(tids) + fin[2], g + fin[0], a + fin[1]))
        for lab, ag, aa, t, nxt in clat.arcs[s]:
            walk(nxt, words + ([lab] if lab else []), tids + list(t), g + ag, a + aa)
    walk(clat.start, [], [], 0.0, 0.0)
    return res

