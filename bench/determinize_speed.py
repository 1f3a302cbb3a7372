#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Lattice determinization time, Python against compiled, and its share of decode time (issue 18).

For each utterance of a recipe's decode: GMM log-likelihoods (once), the compiled
LatticeFasterDecoder search (nnetmix.decode.faster.lattice_search) to a raw lattice, then
determinize_lattice_pruned on that raw lattice with impl="python" (the reference) and
impl="compiled" (nnetmix/decode/detlat.py), side by side on the same lattices. Each time is the
median over --repeat runs of the whole set; the two lattices are checked equal (same states,
arcs, strings; weights within 1e-6). The share is determinization / (search + determinization),
the decoding time of latgen-faster-mapped given log-likelihoods; the GMM time is printed apart.

Inputs: a recipe directory with a GMM model, its decoding graph and a decode directory's feature
pipeline (default: the harbour recipe's tri1 with the trigram graph, which needs
``cd egs/harbour/s5 && ./run.sh --stop-stage 8``); or --synthetic, the digits-lexicon graph that
tests/helpers.py builds, with noisy log-likelihoods.
Usage: bench/determinize_speed.py [--recipe egs/harbour/s5] [--exp exp/tri1] [--graph graph_tg]
          [--decode-dir decode_test_tg] [--num-utts 40] [--beam 13] [--lattice-beam 8] [--det-beam 0]
          [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import kaldi_hmm_gmm  # noqa: E402,F401,I001 -- before kaldifst
import numpy as np  # noqa: E402

from nnetmix.decode.decoder import read_decoding_graph  # noqa: E402
from nnetmix.decode.faster import SearchOptions, lattice_search  # noqa: E402
from nnetmix.decode.fstarrays import graph_arrays  # noqa: E402
from nnetmix.decode.lattice import determinize_lattice_pruned  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from decode_speed import median_time, recipe_inputs, synthetic_inputs  # noqa: E402


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
    determinize_lattice_pruned(raws[0], det_beam)               # compile first
    outs = {}

    def det(impl):
        def run():
            outs[impl] = [determinize_lattice_pruned(r, det_beam, impl=impl)
                          for r in raws]
        return run
    t_py = median_time(det("python"), args.repeat)
    t_c = median_time(det("compiled"), args.repeat)
    same = sum(a.approx_equal(b, 1e-6) for a, b in zip(outs["python"], outs["compiled"]))
    arcs = np.array([len(r.src) for r in raws])
    out_arcs = np.array([c.num_arcs() for c in outs["compiled"]])
    load = os.getloadavg()
    print(f"graph: {graph.num_states} states, {graph.num_arcs} arcs; {len(items)} utterances, "
          f"{frames} frames; beam {args.beam:g}, max-active {args.max_active}, lattice-beam "
          f"{args.lattice_beam:g}, determinization beam {det_beam:g}, acwt {args.acwt}; "
          f"medians of {args.repeat} runs; load "
          f"average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    print(f"raw lattices: {arcs.mean():.0f} arcs on average (max {arcs.max()}); determinized: "
          f"{out_arcs.mean():.1f} arcs on average (max {out_arcs.max()}); equal (python vs "
          f"compiled): {same}/{len(raws)}")
    print(f"GMM log-likelihoods (computed once, not in the shares): {gmm_s:.3f} s\n")
    print("| step | seconds | ms per utterance | RTF | share of search + determinization |")
    print("| --- | --- | --- | --- | --- |")
    n = len(items)
    print(f"| search (lattice_search) | {t_search:.3f} | {1000 * t_search / n:.1f} | "
          f"{t_search * 100 / frames:.4f} | |")
    for name, t in (("determinize, python", t_py), ("determinize, compiled", t_c)):
        print(f"| {name} | {t:.3f} | {1000 * t / n:.1f} | {t * 100 / frames:.4f} | "
              f"{100 * t / (t_search + t):.1f}% |")
    print(f"\ncompiled over python: {t_py / t_c:.1f}x faster")
    del keep
    return 0 if same == len(raws) else 1


if __name__ == "__main__":
    sys.exit(main())
