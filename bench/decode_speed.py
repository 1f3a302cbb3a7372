#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Real-time factor of the decoders on precomputed log-likelihoods (issue 18, first version).

Decodes the same utterances with, side by side in one run and at the same beam:

* ``nnetmix faster``: nnetmix.decode.faster.lattice_search (the compiled LatticeFasterDecoder:
  search, final pruning, raw lattice) plus its best path -- no determinization;
* ``nnetmix faster, best path only``: the same search keeping backpointers, not forward links
  (``best_path_only=True``, what ``LatticeDecoder.decode(lattice=False)`` runs); both search
  rows reuse one SearchWorkspace over the utterances, as LatticeDecoder does;
* with ``--baseline DIR``: the same two rows with DIR's ``nnetmix/decode/faster.py`` (another
  checkout, e.g. the commit before a change to the search), loaded beside ours and interleaved
  with it in the same process, so that both see the same load; the rest of the library is
  this checkout's;
* ``kaldi-hmm-gmm C++ faster``: Kaldi's LatticeFasterDecoder through kaldi-hmm-gmm's
  decode_utterance_lattice_faster (Decode, then GetBestPath: raw lattice + shortest path);
* ``kaldi-decoder simple``: kaldi-decoder's LatticeSimpleDecoder (decode + get_best_path);
* ``nnetmix determinize``: determinize_lattice_pruned (compiled; bench/determinize_speed.py times
  it against the Python reference) on the faster decoder's raw
  lattices, timed on its own;
* ``LatticeDecoder.decode faster|simple``: the whole per-utterance call the latgen tools make
  (search, best path, determinized lattice, acoustic rescaling).

Two more tables, with --tables (recipe inputs only; lattices not determinized in the first):

* ``gmm``: GMM likelihoods plus the compiled search per utterance, the dense way (one GEMM and
  a log-sum-exp over every Gaussian of every frame, then the search on the matrix) against the
  on-demand way (the search computes the pdfs its emitting arcs reach, cached per frame), and
  how many best paths of the two agree;
* ``threads``: the same utterances decoded by ``latgen`` (the gmm-latgen-faster-parallel loop:
  GMM likelihoods, search, determinization, writing to /dev/null) with each of --threads, and
  the search alone (lattice_search on precomputed matrices) in as many threads; medians and
  the ratio to one thread side by side.

The main table runs at each of --beams for each of --max-active (kaldi-decoder simple, which
has no max-active, and LatticeDecoder.decode simple only at the first max-active); each row also
gives the largest growth of the process's resident memory during one utterance (the kernel's
high-water mark, reset before each utterance, in an extra untimed run with a fresh decoder).
A model whose tree is not monophone (kaldi-hmm-gmm binds monophone trees only) gets the table
without its C++ rows. The 20,000-word graph (issue 18's (c)) is built by bench/big_graph.py:
  bench/decode_speed.py --recipe bench/out/big_graph --exp exp/mono --graph graph_20k

The log-likelihoods are computed once beforehand (their time is reported on its own line) and
scaled by --acwt; the C++ decoders get the (T x transition-ids) matrix they read, also made
beforehand. Each figure is the median over --repeat runs; RTF assumes 100 frames per second;
"x C++ (CPU)" is the CPU time over the C++ faster decoder's (main table), "x dense" and
"x 1 thread" are wall-time ratios. Also reports how many best paths (words and
alignment) of each decoder equal the C++ faster decoder's.

Inputs: a recipe's graph, model and a feature pipeline (default: the digits recipe's monophone
decode, which needs ``cd egs/digits/s5 && ./run.sh`` through the monophone decode), or with
--synthetic the digits-lexicon graph that tests/helpers.py builds with noisy log-likelihoods.
Usage: bench/decode_speed.py [--recipe egs/digits/s5] [--exp exp/mono] [--graph graph]
                             [--jobs 1,2] [--beams 13,16] [--max-active 7000,2000]
                             [--min-active 200]
                             [--repeat 3] [--synthetic] [--tables main,gmm,threads]
                             [--threads 1,2] [--whole faster,simple] [--baseline DIR]
                             [--no-simple]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import kaldi_hmm_gmm as khg  # noqa: E402,I001 -- before kaldifst
import kaldi_decoder  # noqa: E402
import numpy as np  # noqa: E402

from nnetmix.decode.decoder import (LatticeDecoder, LatticeDecoderConfig,  # noqa: E402
                                    _linear_path, pdf_to_tid_matrix, read_decoding_graph)
from nnetmix.decode.faster import (SearchOptions, SearchWorkspace,  # noqa: E402
                                   best_path_arcs, lattice_search)
from nnetmix.decode.fstarrays import graph_arrays  # noqa: E402
from nnetmix.decode.gmmframes import OnDemandGmm, scaled_loglikes_matrix  # noqa: E402
from nnetmix.hmm.gmm_likelihood import pdf_loglikes  # noqa: E402
from nnetmix.decode.lattice import RawLattice, determinize_lattice_pruned  # noqa: E402


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipe", default=str(ROOT / "egs/digits/s5"), help="recipe directory")
    p.add_argument("--exp", default="exp/mono", help="model directory (graph/ and "
                   "decode_test/feats.1.json inside it)")
    p.add_argument("--graph", default="graph", help="graph directory inside --exp")
    p.add_argument("--decode-dir", default="decode_test", help="decode directory inside --exp "
                   "whose feats.JOB.json to read")
    p.add_argument("--tables", default="main", help="comma-separated: main (decoders side by "
                   "side), gmm (dense against on-demand GMM likelihoods), threads")
    p.add_argument("--threads", default="1,2", help="thread counts of the threads table")
    p.add_argument("--feats", default="", help="feature rspecifiers, comma-separated (default: "
                   "pipeline:<exp>/decode_test/feats.JOB.json for each of --jobs)")
    p.add_argument("--jobs", default="1", help="decoding jobs whose feature pipelines to read "
                   "(comma-separated; e.g. 1,2 for the whole digits test set)")
    p.add_argument("--text", default="data/test/text", help="reference text (in the recipe) "
                   "for the 1-best word errors of LatticeDecoder.decode; skipped if absent")
    p.add_argument("--synthetic", action="store_true",
                   help="the digits-lexicon graph of tests/helpers.py, synthetic log-likelihoods")
    p.add_argument("--num-utts", type=int, default=0, help="at most this many (0: all)")
    p.add_argument("--beams", default="13", help="comma-separated beams")
    p.add_argument("--max-active", default="7000", help="comma-separated max-active values "
                   "of the main table (the gmm and threads tables take the first)")
    p.add_argument("--min-active", type=int, default=200)
    p.add_argument("--lattice-beam", type=float, default=8.0)
    p.add_argument("--acwt", type=float, default=0.083333)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--whole", default="faster,simple", help="the LatticeDecoder.decode rows "
                   "(search, determinization, rescaling) of the main table: faster, simple, "
                   "both or none ('')")
    p.add_argument("--no-simple", action="store_true", help="leave out the main table's "
                   "kaldi-decoder simple row (the slowest on a large graph)")
    p.add_argument("--baseline", default="", help="another checkout whose "
                   "nnetmix/decode/faster.py to time beside ours in the main table")
    args = p.parse_args()
    args.max_actives = [int(m) for m in args.max_active.split(",")]
    args.max_active = args.max_actives[0]
    return args


def recipe_inputs(args):
    """(hclg, TransitionModel, kaldi-hmm-gmm TransitionModel, [(key, loglikes)], GMM seconds)."""
    from nnetmix.feat.pipeline import open_features
    from nnetmix.hmm.gmm_likelihood import StackedGmms
    from nnetmix.hmm.khg import KhgUnsupported, to_khg_transition_model
    from nnetmix.kaldi import read_gmm_model, read_tree
    recipe = Path(args.recipe).resolve()
    exp = recipe / args.exp
    need = [exp / "final.mdl", exp / "tree", exp / args.graph / "HCLG.fst"]
    feats_list = (args.feats.split(",") if args.feats else
                  [f"pipeline:{args.exp}/{args.decode_dir}/feats.{j}.json"
                   for j in args.jobs.split(",")])
    need += [recipe / f[len("pipeline:"):] for f in feats_list if f.startswith("pipeline:")]
    for f in need:
        if not f.exists():
            sys.exit(f"decode_speed.py: no such file {f} (run the recipe through the monophone "
                     "decode, or use --synthetic)")
    os.chdir(recipe)      # the pipeline's paths are relative to the recipe
    tm, am = read_gmm_model(str(exp / "final.mdl"))
    tree = read_tree(str(exp / "tree"))
    # kaldi-hmm-gmm's transition model (monophone trees only): the main table's C++ decoders
    ktm = None
    if "main" in args.tables.split(","):
        try:
            ktm = to_khg_transition_model(tm, tree=tree)
        except KhgUnsupported as e:
            print(f"no C++ rows in the main table: {e}")
    hclg = read_decoding_graph(str(exp / args.graph / "HCLG.fst"))
    stacked = StackedGmms.from_gmms(list(am))
    items, feats_items, gmm_s = [], [], 0.0
    for feats in feats_list:
        with open_features(feats) as reader:
            for key, f in reader:
                if args.num_utts and len(items) == args.num_utts:
                    break
                t0 = time.perf_counter()
                items.append((key, pdf_loglikes(stacked, f, dtype=np.float32)))
                gmm_s += time.perf_counter() - t0
                feats_items.append((key, f))
    return hclg, tm, ktm, items, gmm_s, am, feats_items


def synthetic_inputs(args):
    sys.path.insert(0, str(ROOT / "tests"))
    from helpers import digits_system, loglikes_for, pdfs_of_phone  # noqa: I001
    tm, tree, hclg, keep, word_phones = digits_system()
    rng = np.random.default_rng(0)
    items = []
    for i in range(args.num_utts or 40):
        seq = []
        for w in rng.choice(list(word_phones), size=int(rng.integers(2, 8))):
            for p in word_phones[int(w)] + [1]:
                for pdf in pdfs_of_phone(tree, p, 5 if p == 1 else 3):
                    seq += [pdf] * int(rng.integers(3, 8))
        ll = loglikes_for(tm, seq, good=0.0, bad=-3.0)
        items.append((f"s{i}", ll + rng.normal(scale=1.0, size=ll.shape).astype(np.float32)))
    return hclg, tm, keep[1], items, 0.0, keep


def word_comparison(beam, words, args) -> str:
    """How many utterances' best-path words differ between LatticeDecoder.decode faster and
    simple, and their 1-best word errors against --text (edit distance) when it exists."""
    keys = list(words["faster"])
    diff = sum(words["faster"][k] != words["simple"][k] for k in keys)
    line = (f"beam {beam:g}: LatticeDecoder.decode faster and simple best-path words differ on "
            f"{diff} of {len(keys)} utterances")
    if args.synthetic or not os.path.exists(args.text):
        return line
    import kaldialign
    from nnetmix.decode.latgen import read_word_symbols
    ref = dict(ln.split(None, 1) for ln in open(args.text, encoding="utf-8") if ln.strip())
    syms = read_word_symbols(str(Path(args.exp) / args.graph / "words.txt"))
    errs, n = {}, 0
    for kind in ("faster", "simple"):
        errs[kind] = 0
        for k in keys:
            r, h = ref[k].split(), [syms[w] for w in words[kind][k]]
            errs[kind] += sum(a != b for a, b in kaldialign.align(r, h, "*"))
    n = sum(len(ref[k].split()) for k in keys)
    return line + (f"; 1-best word errors at acwt {args.acwt}: faster {errs['faster']}, simple "
                   f"{errs['simple']} of {n} words")


def load_baseline(checkout: str):
    """(module, label): ``checkout``'s nnetmix/decode/faster.py imported under its own name
    (its imports resolve to this checkout's library; its numba cache stays in its own tree)."""
    import importlib.util
    import subprocess
    path = Path(checkout).resolve() / "nnetmix/decode/faster.py"
    if not path.is_file():
        sys.exit(f"decode_speed.py: no such file {path} (--baseline)")
    spec = importlib.util.spec_from_file_location("baseline_faster", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    rev = subprocess.run(["git", "-C", str(path.parent), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    return mod, f"baseline {rev or checkout}"


def interleaved_times(fns, repeat):
    """Medians of (wall, process CPU) seconds of each function, the functions run in turn
    within each repetition, so that a change in the machine's load hits them alike."""
    walls = [[] for _ in fns]
    cpus = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            walls[i].append(time.perf_counter() - w0)
            cpus[i].append(time.process_time() - c0)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus)]


def _proc_status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def peak_growth_mib(one, n):
    """The most resident memory one(i) took above what the process held before it, over
    i < n, in MiB: the kernel's high-water mark (VmHWM) is reset through /proc/self/clear_refs
    before each call, after glibc's malloc_trim has handed the heap's free pages back (else
    memory freed by an earlier row would be reused unseen). None where /proc lacks that (not
    Linux, or a kernel before 4.0)."""
    import ctypes
    import gc
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        trim = None
    peak = 0
    try:
        for i in range(n):
            gc.collect()
            if trim is not None:
                trim(0)
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            before = _proc_status_kib("VmRSS")
            one(i)
            peak = max(peak, _proc_status_kib("VmHWM") - before)
    except (OSError, KeyError):
        return None
    return peak / 1024


def main_table(args, hclg, tm, ktm, items, graph, scaled, tid_mats, tid2pdf, frames):
    """The decoders side by side at each max-active and beam (the first table); each row's
    wall and CPU times are medians of --repeat runs over all utterances (the rows interleaved),
    its memory the largest growth of the resident set during one utterance (an extra, untimed
    run). Every decoder here runs on one thread, so CPU seconds are its time on one core."""
    notes = []
    n = len(items)
    base, base_label = load_baseline(args.baseline) if args.baseline else (None, "")
    if base is not None:
        print(f"{base_label}: {Path(args.baseline).resolve()}/nnetmix/decode/faster.py")
    print(f"load average {os.getloadavg()[0]:.1f} at the start of the table")
    print("| max-active | beam | decoder | seconds | RTF | CPU seconds | RTF (CPU) | CPU ms per "
          "utterance | x C++ (CPU) | peak MiB per utterance | best paths equal to C++ |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for mi, max_active in enumerate(args.max_actives):
        for beam in [float(b) for b in args.beams.split(",")]:
            opts = SearchOptions(beam, max_active, args.min_active, args.lattice_beam, 25, 0.5)
            lattice_search(graph, scaled[0], tid2pdf, opts)      # compile (numba cache) first

            def searches(search, **kw):
                """(lattice row, best-path row) makers of a lattice_search; each made row has
                its own keyword arguments (kw's values called: a fresh workspace each)."""
                def lattice_row():
                    kws = {k: v() for k, v in kw.items()}

                    def one(i):
                        lat = search(graph, scaled[i], tid2pdf, opts, **kws).lattice
                        return lat, best_path_arcs(lat.num_states, lat.src, lat.dst, lat.g,
                                                   lat.a, lat.final_g, lat.final_a)
                    return one

                def best_path_row():
                    kws = {k: v() for k, v in kw.items()}

                    def one(i):
                        lat = search(graph, scaled[i], tid2pdf, opts, best_path_only=True,
                                     **kws).lattice
                        return (lat.olabel[lat.olabel != 0].tolist(),
                                lat.ilabel[lat.ilabel != 0].tolist())
                    return one
                return lattice_row, best_path_row
            ours, ours_best_path = searches(
                lattice_search, workspace=lambda: SearchWorkspace(graph.num_states))
            lattice_search(graph, scaled[0], tid2pdf, opts, best_path_only=True)
            if base is not None:
                for bp in (False, True):                                 # compile first
                    base.lattice_search(graph, scaled[0], tid2pdf, opts, best_path_only=bp)
                base_rows = searches(base.lattice_search)
            kcfg = khg.LatticeFasterDecoderConfig(beam=beam, lattice_beam=args.lattice_beam,
                                                  max_active=max_active,
                                                  min_active=args.min_active,
                                                  determinize_lattice=False)

            def cpp():
                kdec = khg.LatticeFasterDecoderStdVectorFst(hclg, kcfg)
                return lambda i: khg.decode_utterance_lattice_faster(
                    kdec, khg.DecodableCtc(tid_mats[i]), ktm, "u", True)
            scfg = kaldi_decoder.LatticeSimpleDecoderConfig(beam=beam,
                                                            lattice_beam=args.lattice_beam,
                                                            determinize_lattice=False)

            def simple():
                sdec = kaldi_decoder.LatticeSimpleDecoder(hclg, scfg)

                def one(i):
                    sdec.decode(kaldi_decoder.DecodableCtc(tid_mats[i]))
                    return sdec.get_best_path(use_final_probs=True)[1]
                return one
            outs = {}

            def determinize(i):
                return determinize_lattice_pruned(outs["nnetmix faster"][i][0], args.lattice_beam)

            words = {}

            def whole(kind):
                def make():
                    dec = LatticeDecoder(hclg, tm, LatticeDecoderConfig(
                        beam=beam, lattice_beam=args.lattice_beam, max_active=max_active,
                        min_active=args.min_active, acoustic_scale=args.acwt, allow_partial=True,
                        decoder=kind))
                    return lambda i: dec.decode(items[i][1], items[i][0]).words
                return make

            # kaldi-decoder's LatticeSimpleDecoder has no max-active: run at the first only
            # (name, a function making the per-utterance function: a fresh decoder object for
            # the memory run, so that what it keeps between utterances counts there too)
            rows = [("kaldi-hmm-gmm C++ faster", cpp)] if ktm is not None else []
            rows += [("nnetmix faster", ours),
                     ("nnetmix faster, best path only", ours_best_path)]
            if base is not None:
                rows += [(f"nnetmix faster ({base_label})", base_rows[0]),
                         (f"nnetmix faster, best path only ({base_label})", base_rows[1])]
            if mi == 0 and not args.no_simple:
                rows.append(("kaldi-decoder simple", simple))
            rows.append(("nnetmix determinize (faster's lattices)", lambda: determinize))
            for kind in args.whole.split(","):
                if kind and (kind == "faster" or mi == 0):
                    rows.append((f"LatticeDecoder.decode {kind}", whole(kind)))
            runs = []
            for name, make in rows:
                def run_all(name=name, one=make()):
                    outs[name] = [one(i) for i in range(n)]
                runs.append(run_all)
            # the rows in turn within each repetition (the determinization row after the search
            # whose lattices it takes), so that a change in the machine's load hits them alike
            times = dict(zip((name for name, _m in rows), interleaved_times(runs, args.repeat)))
            mems = {name: peak_growth_mib(make(), n) for name, make in rows}
            ref = [(list(r[2]), list(r[1])) for r in outs.get("kaldi-hmm-gmm C++ faster", [])]
            ours_paths = []
            for lat, arcs in outs["nnetmix faster"]:
                il, ol = lat.ilabel[arcs], lat.olabel[arcs]
                ours_paths.append((ol[ol != 0].tolist(), il[il != 0].tolist()))
            same = {"nnetmix faster": sum(a == b for a, b in zip(ours_paths, ref)),
                    "nnetmix faster, best path only":
                        sum(a == b for a, b in zip(outs["nnetmix faster, best path only"], ref))}
            if base is not None:
                check_baseline(outs, base_label)
            if not ref:
                same = {}
            elif "kaldi-decoder simple" in outs:
                simple_paths = [tuple(_linear_path(RawLattice.from_kaldifst(b))[:2])
                                for b in outs["kaldi-decoder simple"]]
                same["kaldi-decoder simple"] = sum(
                    (list(w), list(a)) == r for (w, a), r in zip(simple_paths, ref))
            t_cpp = times.get("kaldi-hmm-gmm C++ faster", (None, None))[1]
            for name, _one in rows:
                (t, c), m = times[name], mems[name]
                eq = f"{same[name]}/{n}" if name in same else ""
                print(f"| {max_active} | {beam:g} | {name} | {t:.3f} | {t * 100 / frames:.4f} | "
                      f"{c:.3f} | {c * 100 / frames:.4f} | {c * 1000 / n:.1f} | "
                      f"{'' if t_cpp is None else f'{c / t_cpp:.2f}'} | "
                      f"{'' if m is None else f'{m:.1f}'} | {eq} |")
            for kind in ("faster", "simple"):
                if f"LatticeDecoder.decode {kind}" in outs:
                    words[kind] = dict(zip((k for k, _ll in items),
                                           outs[f"LatticeDecoder.decode {kind}"]))
            if mi == 0 and len(words) == 2:
                notes.append(word_comparison(beam, words, args))
            outs.clear()
    print(f"load average {os.getloadavg()[0]:.1f} at the end of the table")
    print("\n" + "\n".join(notes))


def check_baseline(outs, label):
    """Exits unless the baseline's search gave the same raw lattices and best paths as ours
    (a change meant to keep the search must not change what it finds)."""
    fields = ("src", "dst", "ilabel", "olabel", "g", "a", "final_g", "final_a")
    for (lat, arcs), (blat, barcs) in zip(outs["nnetmix faster"],
                                         outs[f"nnetmix faster ({label})"]):
        if not (np.array_equal(arcs, barcs) and all(
                np.array_equal(getattr(lat, f), getattr(blat, f)) for f in fields)):
            sys.exit(f"decode_speed.py: the {label} search's raw lattice differs from ours")
    if outs["nnetmix faster, best path only"] != \
            outs[f"nnetmix faster, best path only ({label})"]:
        sys.exit(f"decode_speed.py: the {label} search's best paths differ from ours")
    print(f"{label}: the same raw lattices and best paths as ours on all utterances")


def gmm_table(args, graph, tm, am, feats_items, frames):
    """GMM likelihoods + compiled search per utterance: dense (GEMM over all Gaussians, then
    the search on the matrix) against on-demand (the search computes the pdfs it reaches)."""
    gmm = OnDemandGmm(am)
    tid2pdf = np.asarray(tm.tid2pdf, dtype=np.int64)
    print(f"\nGMM: {gmm.num_pdfs} pdfs, {gmm.stacked.num_gauss} Gaussians, dim {gmm.dim}; "
          f"load average {os.getloadavg()[0]:.1f} at the start")
    print("| beam | GMM likelihoods | seconds (GMM + search) | RTF | x dense | best paths equal "
          "to dense |")
    print("| --- | --- | --- | --- | --- | --- |")
    for beam in [float(b) for b in args.beams.split(",")]:
        opts = SearchOptions(beam, args.max_active, args.min_active, args.lattice_beam, 25, 0.5)
        lattice_search(graph, None, tid2pdf, opts, gmm=(gmm, feats_items[0][1], args.acwt))
        paths = {"dense": [], "on-demand": []}
        computed = []

        def best(kind, out):
            lat = out.lattice
            arcs = best_path_arcs(lat.num_states, lat.src, lat.dst, lat.g, lat.a, lat.final_g,
                                  lat.final_a)
            paths[kind].append((lat.olabel[arcs].tolist(), lat.ilabel[arcs].tolist()))

        def dense():
            paths["dense"].clear()
            for _k, f in feats_items:
                ll = pdf_loglikes(gmm.stacked, f, dtype=np.float32)
                best("dense", lattice_search(graph, (args.acwt * ll).astype(np.float32),
                                             tid2pdf, opts))

        def on_demand():
            paths["on-demand"].clear()
            computed.clear()
            for _k, f in feats_items:
                out = lattice_search(graph, None, tid2pdf, opts, gmm=(gmm, f, args.acwt))
                best("on-demand", out)
                computed.append(out.expanded[:, 2])
        (t_dense, _c), (t_lazy, _c2) = interleaved_times([dense, on_demand], args.repeat)
        same = sum(a == b for a, b in zip(paths["dense"], paths["on-demand"]))
        for name, t in (("dense (GEMM, all pdfs)", t_dense), ("on demand", t_lazy)):
            eq = f"{same}/{len(feats_items)}" if name == "on demand" else ""
            print(f"| {beam:g} | {name} | {t:.3f} | {t * 100 / frames:.4f} | "
                  f"{t / t_dense:.2f} | {eq} |")
        per_frame = float(np.concatenate(computed).mean())
        print(f"beam {beam:g}: on demand computed {per_frame:.0f} of {gmm.num_pdfs} pdfs per "
              f"frame ({100 * per_frame / gmm.num_pdfs:.1f}%)")

    def gemm_all():
        for _k, f in feats_items:
            pdf_loglikes(gmm.stacked, f, dtype=np.float32)

    def kernel_all():
        for _k, f in feats_items:
            scaled_loglikes_matrix(gmm, f, args.acwt)
    scaled_loglikes_matrix(gmm, feats_items[0][1], args.acwt)       # compile first
    (t_gemm, _c), (t_kernel, _c2) = interleaved_times([gemm_all, kernel_all], args.repeat)
    print(f"GMM likelihoods alone, every pdf of every frame: GEMM + log-sum-exp {t_gemm:.3f} s, "
          f"the on-demand kernel {t_kernel:.3f} s ({t_kernel / t_gemm:.2f}x); so on demand "
          f"costs less while it computes under {100 * t_gemm / t_kernel:.0f}% of the pdfs per "
          "frame")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


def threads_table(args, hclg, tm, am, feats_items, graph, scaled, tid2pdf, frames):
    """The gmm-latgen-faster-parallel loop and the search alone with each of --threads."""
    import tempfile
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from nnetmix.decode.gmmframes import GmmFrames, GmmLikelihoodOptions
    from nnetmix.decode.latgen import latgen
    from nnetmix.decode.sequencer import TaskSequencerConfig
    gmm = OnDemandGmm(am)
    on_demand = GmmLikelihoodOptions().on_demand(gmm.num_pdfs)
    beam = float(args.beams.split(",")[0])
    opts = SearchOptions(beam, args.max_active, args.min_active, args.lattice_beam, 25, 0.5)
    print(f"\nthreads at beam {beam:g} ({'on-demand' if on_demand else 'dense'} GMM "
          f"likelihoods, the default for {gmm.num_pdfs} pdfs); {os.cpu_count()} CPUs, load "
          f"average {os.getloadavg()[0]:.1f} at the start")
    print("| threads | what | seconds | RTF | x 1 thread | CPU s / wall s |")
    print("| --- | --- | --- | --- | --- | --- |")
    counts = [int(t) for t in args.threads.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        dec = LatticeDecoder(hclg, tm, LatticeDecoderConfig(
            beam=beam, lattice_beam=args.lattice_beam, max_active=args.max_active,
            min_active=args.min_active, acoustic_scale=args.acwt, allow_partial=True,
            decoder="faster"))

        def table(n):
            return lambda: latgen(dec, [(k, GmmFrames(gmm, f, on_demand))
                                        for k, f in feats_items],
                                  f"ark:{tmp}/lat.ark", sequencer=TaskSequencerConfig(n))

        def search(n):
            local = threading.local()      # a workspace per thread, as LatticeDecoder keeps

            def one(m):
                if not hasattr(local, "ws"):
                    local.ws = SearchWorkspace(graph.num_states)
                return lattice_search(graph, m, tid2pdf, opts, workspace=local.ws)

            def run():
                with ThreadPoolExecutor(n) as ex:
                    list(ex.map(one, scaled))
            return run
        for name, make in (("latgen table (GMM, search, determinize, write)", table),
                           ("search only (lattice_search)", search)):
            times = interleaved_times([make(n) for n in counts], args.repeat)
            for n, (wall, cpu) in zip(counts, times):
                print(f"| {n} | {name} | {wall:.3f} | {wall * 100 / frames:.4f} | "
                      f"{wall / times[0][0]:.2f} | {cpu / wall:.2f} |")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


def main() -> int:
    args = get_args()
    keep, am, feats_items = None, None, []
    if args.synthetic:
        hclg, tm, ktm, items, gmm_s, keep = synthetic_inputs(args)
    else:
        hclg, tm, ktm, items, gmm_s, am, feats_items = recipe_inputs(args)
    frames = sum(ll.shape[0] for _k, ll in items)
    graph = graph_arrays(hclg)
    scaled = [(args.acwt * ll).astype(np.float32) for _k, ll in items]
    tid_mats = [pdf_to_tid_matrix(ll, tm, args.acwt) for _k, ll in items]
    tid2pdf = np.asarray(tm.tid2pdf, dtype=np.int64)
    print(f"graph: {graph.num_states} states, {graph.num_arcs} arcs; {len(items)} utterances, "
          f"{frames} frames; acwt {args.acwt}, lattice-beam {args.lattice_beam}, max-active "
          f"{args.max_actives}, min-active {args.min_active}; medians of {args.repeat} runs")
    g_bytes = sum(getattr(graph, f).nbytes for f in ("arc_start", "ilabel", "olabel", "weight",
                                                      "nextstate", "final", "num_input_eps"))
    print(f"graph arrays of the compiled search: {g_bytes / 2**20:.1f} MiB; the process's "
          f"resident memory after loading: {_proc_status_kib('VmRSS') / 1024:.0f} MiB; a search "
          f"workspace (per graph and thread, made once): {8 * graph.num_states / 2**20:.1f} MiB "
          f"resident for the state-to-token map, {56 * graph.num_states / 2**20:.1f} MiB "
          "reserved in all (the lists' pages become resident as the active states need them)")
    print(f"GMM log-likelihoods (computed once, not in the times below): {gmm_s:.3f} s, "
          f"RTF {gmm_s * 100 / frames:.4f}\n")
    tables = args.tables.split(",")
    if "main" in tables:
        main_table(args, hclg, tm, ktm, items, graph, scaled, tid_mats, tid2pdf, frames)
    if ("gmm" in tables or "threads" in tables) and args.synthetic:
        sys.exit("decode_speed.py: the gmm and threads tables need a recipe's GMM (no --synthetic)")
    if "gmm" in tables:
        gmm_table(args, graph, tm, am, feats_items, frames)
    if "threads" in tables:
        threads_table(args, hclg, tm, am, feats_items, graph, scaled, tid2pdf, frames)
    del keep
    return 0


if __name__ == "__main__":
    sys.exit(main())
