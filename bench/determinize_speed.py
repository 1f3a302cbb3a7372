#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Lattice determinization time, Python against compiled, word-only against phone-then-word,
and its share of decode time (issue 18).

For each utterance of a recipe's decode: GMM log-likelihoods (once), the compiled
LatticeFasterDecoder search (nnetmix.decode.faster.lattice_search) to a raw lattice, then, side
by side on the same raw lattices (--impls): word-only determinize_lattice_pruned with
impl="python" (the reference) and impl="compiled" (nnetmix/decode/detlat.py), and "phone", the
compiled phone-then-word wrapper the decoders run by default (nnetmix/decode/phonedet.py,
Kaldi's DeterminizeLatticePhonePrunedWrapper). Each time is the median over --repeat runs of the
whole set, in process CPU seconds (wall seconds before 8b0d2fc). Checks: python and compiled
give the same lattices (same states, arcs, strings; weights within 1e-6); phone-then-word and
word-only the same --nbest best word sequences within the beam (a word-deterministic lattice has
one path per sequence) with the same alignments and costs (within 1e-6 relative). The share is
determinization / (search + determinization), the decoding time of latgen-faster-mapped given
log-likelihoods; the GMM time is printed apart.

Inputs: a recipe directory with a GMM model, its decoding graph and a decode directory's feature
pipeline (default: the harbour recipe's tri1 with the trigram graph, which needs
``cd egs/harbour/s5 && ./run.sh --stop-stage 8``); or --synthetic, the digits-lexicon graph that
tests/helpers.py builds, with noisy log-likelihoods.
Usage: bench/determinize_speed.py [--recipe egs/harbour/s5] [--exp exp/tri1] [--graph graph_tg]
          [--decode-dir decode_test_tg] [--num-utts 40] [--beam 13] [--lattice-beam 8] [--det-beam 0]
          [--repeat 3] [--impls python,compiled,phone] [--nbest 10]
  e.g. (digits): bench/determinize_speed.py --recipe egs/digits/s5 --exp exp/mono --graph graph
          --decode-dir decode_test --jobs 1,2 --num-utts 0
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import kaldi_hmm_gmm  # noqa: E402,F401,I001 -- before kaldifst
import numpy as np  # noqa: E402

from nnetmix.decode.faster import SearchOptions, lattice_search  # noqa: E402
from nnetmix.decode.fstarrays import graph_arrays  # noqa: E402
from nnetmix.decode.lattice import determinize_lattice_pruned  # noqa: E402
from nnetmix.decode.phonedet import (determinize_lattice_phone_pruned,  # noqa: E402
                                     phone_pass, phone_start_labels)

sys.path.insert(0, str(ROOT / "bench"))
from decode_speed import interleaved_times, recipe_inputs, synthetic_inputs  # noqa: E402


def median_time(fn, repeat: int) -> float:
    """Median process CPU seconds of ``fn`` over ``repeat`` runs (decode_speed.py's timer)."""
    return interleaved_times([fn], repeat)[0][1]


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipe", default=str(ROOT / "egs/harbour/s5"), help="recipe directory")
    p.add_argument("--exp", default="exp/tri1", help="model directory (final.mdl inside)")
    p.add_argument("--graph", default="graph_tg", help="graph directory inside --exp")
    p.add_argument("--decode-dir", default="decode_test_tg", help="decode directory inside "
                   "--exp whose feats.JOB.json pipelines give the features")
    p.add_argument("--jobs", default="1", help="comma-separated decode jobs to read")
    p.add_argument("--feats", default="", help="feature rspecifiers, comma-separated (default: "
                   "pipeline:<exp>/<decode>/feats.JOB.json for each of --jobs)")
    p.add_argument("--synthetic", action="store_true",
                   help="the digits-lexicon graph of tests/helpers.py, synthetic log-likelihoods")
    p.add_argument("--num-utts", type=int, default=40, help="at most this many (0: all)")
    p.add_argument("--beam", type=float, default=13.0)
    p.add_argument("--max-active", type=int, default=7000)
    p.add_argument("--min-active", type=int, default=200)
    p.add_argument("--lattice-beam", type=float, default=8.0)
    p.add_argument("--det-beam", type=float, default=0.0, help="determinization beam (0: the "
                   "lattice beam, as the decoder; decode_fmllr.sh's second fMLLR uses 4)")
    p.add_argument("--acwt", type=float, default=0.083333)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--impls", default="python,compiled,phone", help="comma-separated, of "
                   "python (word-only, reference), compiled (word-only), phone (compiled "
                   "phone-then-word), phonepass (its first pass alone)")
    p.add_argument("--nbest", type=int, default=10, help="word sequences compared between "
                   "phone-then-word and word-only")
    p.set_defaults(tables="")   # for decode_speed.recipe_inputs: no C++ decoders timed here
    return p.parse_args()


def main() -> int:
    args = get_args()
    keep = None
    if args.synthetic:
        hclg, tm, _ktm, items, gmm_s, keep = synthetic_inputs(args)
    else:
        hclg, tm, _ktm, items, gmm_s, _am, _feats = recipe_inputs(args)
    frames = sum(ll.shape[0] for _k, ll in items)
    graph = graph_arrays(hclg)
    tid2pdf = np.asarray(tm.tid2pdf, dtype=np.int64)
    scaled = [(args.acwt * ll).astype(np.float32) for _k, ll in items]
    opts = SearchOptions(args.beam, args.max_active, args.min_active, args.lattice_beam, 25, 0.5)
    lattice_search(graph, scaled[0], tid2pdf, opts)               # compile (numba cache) first
    raws = []

    def search():
        raws.clear()
        for m in scaled:
            raws.append(lattice_search(graph, m, tid2pdf, opts).lattice)
    t_search = median_time(search, args.repeat)
    det_beam = args.det_beam or args.lattice_beam
    starts = phone_start_labels(tm)
    impls = args.impls.split(",")
    runs = {"python": lambda r: determinize_lattice_pruned(r, det_beam, impl="python"),
            "compiled": lambda r: determinize_lattice_pruned(r, det_beam),
            "phone": lambda r: determinize_lattice_phone_pruned(r, starts, det_beam)[0],
            "phonepass": lambda r: phone_pass(r, starts, det_beam)[0]}
    for impl in impls:
        if impl != "python":
            runs[impl](raws[0])                                     # compile first
    outs, times = {}, {}
    for impl in impls:
        def run(impl=impl):
            outs[impl] = [runs[impl](r) for r in raws]
        times[impl] = median_time(run, args.repeat)
    arcs = np.array([len(r.src) for r in raws])
    load = os.getloadavg()
    print(f"graph: {graph.num_states} states, {graph.num_arcs} arcs; {len(items)} utterances, "
          f"{frames} frames; beam {args.beam:g}, max-active {args.max_active}, lattice-beam "
          f"{args.lattice_beam:g}, determinization beam {det_beam:g}, acwt {args.acwt}; "
          f"medians of {args.repeat} runs; load "
          f"average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    line = f"raw lattices: {arcs.mean():.0f} arcs on average (max {arcs.max()})"
    for impl in impls:
        out_arcs = np.array([len(c.src) if impl == "phonepass" else c.num_arcs()
                             for c in outs[impl]])
        line += f"; {impl}: {out_arcs.mean():.1f} arcs on average (max {out_arcs.max()})"
    print(line)
    ok = True
    if "python" in outs and "compiled" in outs:
        same = sum(a.approx_equal(b, 1e-6) for a, b in zip(outs["python"], outs["compiled"]))
        print(f"equal (python vs compiled): {same}/{len(raws)}")
        ok = ok and same == len(raws)
    word = outs.get("compiled", outs.get("python"))
    if "phone" in outs and word is not None:
        same = sum(same_nbest(nbest(a, args.nbest), nbest(b, args.nbest), det_beam)
                   for a, b in zip(word, outs["phone"]))
        print(f"same {args.nbest}-best word sequences within the beam, alignments and costs "
              f"(phone-then-word vs word-only): {same}/{len(raws)}")
        ok = ok and same == len(raws)
    print(f"GMM log-likelihoods (computed once, not in the shares): {gmm_s:.3f} s\n")
    print("| step | seconds | ms per utterance | RTF | share of search + determinization |")
    print("| --- | --- | --- | --- | --- |")
    n = len(items)
    print(f"| search (lattice_search) | {t_search:.3f} | {1000 * t_search / n:.1f} | "
          f"{t_search * 100 / frames:.4f} | |")
    names = {"python": "determinize, python (word only)",
             "compiled": "determinize, compiled (word only)",
             "phone": "determinize, compiled (phone then word)",
             "phonepass": "its phone pass alone (to a raw lattice)"}
    for impl in impls:
        t = times[impl]
        print(f"| {names[impl]} | {t:.3f} | {1000 * t / n:.1f} | {t * 100 / frames:.4f} | "
              f"{100 * t / (t_search + t):.1f}% |")
    if "python" in times and "compiled" in times:
        print(f"\ncompiled over python: {times['python'] / times['compiled']:.1f}x faster")
    if "phone" in times and "compiled" in times:
        print(f"phone-then-word over word-only (compiled): "
              f"{times['compiled'] / times['phone']:.2f}x faster")
    del keep
    return 0 if ok else 1


def nbest(clat, n: int) -> list:
    """The ``n`` best paths of an acyclic word-deterministic CompactLattice (one path per word
    sequence): [(cost, words, transition-ids)], best first (k-best lists merged from the end,
    cost = graph + acoustic)."""
    if clat.num_states == 0:
        return []
    order = clat.topo_order()
    best: dict = {}
    for s in reversed(order):
        fin = clat.finals[s]
        cands = [(fin[0] + fin[1], (), fin[2])] if fin is not None else []
        for lab, g, a, t, nxt in clat.arcs[s]:
            for c, w, tids in best[nxt]:
                cands.append((g + a + c, ((lab,) if lab else ()) + w, t + tids))
        cands.sort(key=lambda x: x[0])
        best[s] = cands[:n]
    return best[clat.start]


def same_nbest(x: list, y: list, beam: float) -> bool:
    """The same word sequences and alignments in the same order, costs within 1e-6 relative,
    of the paths within ``beam`` of the best (pruning keeps arcs, not paths, so a lattice can
    hold paths beyond the beam, and the two lattices' arcs differ)."""
    if not x or not y:
        return not x and not y
    cut = x[0][0] + beam - 1e-6 * max(1.0, abs(x[0][0]))
    x, y = [p for p in x if p[0] <= cut], [p for p in y if p[0] <= cut]
    return len(x) == len(y) and all(
        a[1:] == b[1:] and abs(a[0] - b[0]) <= 1e-6 * max(1.0, abs(a[0])) for a, b in zip(x, y))


if __name__ == "__main__":
    sys.exit(main())
