#!/usr/bin/env python3
# Copyright 2024 nnetmix authors. Apache 2.0.
"""Speed of monophone GMM training's numerical core on a data directory (default: digits train).

Reads feats.scp + cmvn.scp (per-speaker CMVN, means only, then deltas: train_mono.sh's
pipeline), builds a lang in memory from data/local/dict (one HMM per phone, 3 states, 5 for
silence phones; L.fst with optional silence 0.5), compiles the training graphs with
kaldi-hmm-gmm's TrainingGraphCompiler and then runs steps/train_mono.sh's schedule (equal
alignment, 40 iterations, realignment on its 21 realign_iters, mixing up towards 1000 Gaussians)
with nnetmix.hmm, timing each part. Prints markdown tables: per-iteration times, and frames/s
of the likelihood computation and of alignment.

Usage: bench/gmm_speed.py [--data DIR] [--dict DIR] [--iters 40] [--nutt N]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import kaldi_hmm_gmm as khg  # before kaldifst: the other order can hang
import kaldifst
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nnetmix.data import read_text, read_utt2spk  # noqa: E402
from nnetmix.feat import add_deltas, apply_cmvn  # noqa: E402
from nnetmix.hmm.gmm_align import (AlignOptions, align_utterance, equal_align_graph,  # noqa: E402
                                   graph_pdfs, scaled_transition_log_probs)
from nnetmix.hmm.gmm_init import TrainMonoSchedule, global_mean_var, init_mono_gmms  # noqa: E402
from nnetmix.hmm.gmm_likelihood import StackedGmms, pdf_loglikes  # noqa: E402
from nnetmix.hmm.gmm_mixup import mix_up  # noqa: E402
from nnetmix.hmm.gmm_stats import GmmAccs, acc_stats_ali, acc_transitions  # noqa: E402
from nnetmix.hmm.gmm_update import (MleGmmOptions, mle_am_update,  # noqa: E402
                                    mle_transition_update)
from nnetmix.kaldi import RandomAccessReader, SequentialReader  # noqa: E402

S5 = ROOT / "egs/digits/s5"


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(S5 / "data/train"), help="data directory")
    p.add_argument("--dict", default=str(S5 / "data/local/dict"), help="dict directory")
    p.add_argument("--iters", type=int, default=40, help="training iterations (train_mono: 40)")
    p.add_argument("--nutt", type=int, default=0, help="use only the first N utterances")
    return p.parse_args()


def topology(sil: list[int], nonsil: list[int]) -> str:
    """utils/gen_topo.pl's shape: 3-state left-to-right, 5-state silence."""
    t = ["<Topology>", "<TopologyEntry>", "<ForPhones>", " ".join(map(str, nonsil)),
         "</ForPhones>"]
    t += [f"<State> {s} <PdfClass> {s} <Transition> {s} 0.75 <Transition> {s + 1} 0.25 </State>"
          for s in range(3)]
    t += ["<State> 3 </State>", "</TopologyEntry>", "<TopologyEntry>", "<ForPhones>",
          " ".join(map(str, sil)), "</ForPhones>",
          "<State> 0 <PdfClass> 0 " + " ".join(f"<Transition> {j} 0.25" for j in range(4))
          + " </State>"]
    t += [f"<State> {s} <PdfClass> {s} " + " ".join(f"<Transition> {j} 0.25" for j in range(1, 5))
          + " </State>" for s in (1, 2, 3)]
    t += ["<State> 4 <PdfClass> 4 <Transition> 4 0.75 <Transition> 5 0.25 </State>",
          "<State> 5 </State>", "</TopologyEntry>", "</Topology>", ""]
    return "\n".join(t)


def build_lang(dict_dir: Path):
    sil = Path(dict_dir, "silence_phones.txt").read_text().split()
    nonsil = Path(dict_dir, "nonsilence_phones.txt").read_text().split()
    phones = {p: i + 1 for i, p in enumerate(sil + nonsil)}
    lex = [ln.split() for ln in Path(dict_dir, "lexicon.txt").read_text().splitlines() if ln]
    words = {w: i + 1 for i, w in enumerate(sorted({e[0] for e in lex}))}
    topo = khg.HmmTopology()
    topo.read(topology([phones[p] for p in sil], [phones[p] for p in nonsil]))
    ctx = khg.monophone_context_dependency(list(topo.phones),
                                           topo.get_phone_to_num_pdf_classes())
    tm = khg.TransitionModel(ctx, topo)
    # L.fst as utils/make_lexicon_fst.py with --sil-prob 0.5
    cost = -math.log(0.5)
    fst = kaldifst.StdVectorFst()
    start, loop, sil_state = fst.add_state(), fst.add_state(), fst.add_state()
    fst.start = start
    fst.set_final(loop, 0.0)
    sil_id = phones[Path(dict_dir, "optional_silence.txt").read_text().split()[0]]
    fst.add_arc(start, kaldifst.StdArc(0, 0, cost, loop))
    fst.add_arc(start, kaldifst.StdArc(0, 0, cost, sil_state))
    fst.add_arc(sil_state, kaldifst.StdArc(sil_id, 0, 0.0, loop))
    for w, *pron in lex:
        prev = loop
        for i, p in enumerate(pron[:-1]):
            nxt = fst.add_state()
            fst.add_arc(prev, kaldifst.StdArc(phones[p], words[w] if i == 0 else 0, 0.0, nxt))
            prev = nxt
        olab = words[w] if len(pron) == 1 else 0
        fst.add_arc(prev, kaldifst.StdArc(phones[pron[-1]], olab, cost, loop))
        fst.add_arc(prev, kaldifst.StdArc(phones[pron[-1]], olab, cost, sil_state))
    compiler = khg.TrainingGraphCompiler(tm, ctx, fst, [], khg.TrainingGraphCompilerOptions())
    # the compiler keeps pointers to tm, ctx and the lexicon FST, not Python references: keep
    # them alive as long as it (a collected L.fst crashes compile_graph_from_text)
    return tm, (compiler, ctx, fst), words, [phones[p] for p in sil]


def load_feats(data: Path, nutt: int):
    utt2spk = read_utt2spk(data / "utt2spk")
    cmvn = RandomAccessReader(f"scp:{data / 'cmvn.scp'}", "mat")
    keys, mats = [], []
    with SequentialReader(f"scp:{data / 'feats.scp'}", "mat") as r:
        for key, m in r:
            mats.append(add_deltas(apply_cmvn(cmvn[utt2spk[key]], m)))
            keys.append(key)
            if nutt and len(keys) >= nutt:
                break
    return keys, mats


def timed(table: list, name: str, t0: float, frames: int = 0) -> float:
    dt = time.perf_counter() - t0
    table.append((name, dt, frames / dt if frames else None))
    return dt


def main() -> None:
    args = get_args()
    rows: list = []
    t0 = time.perf_counter()
    keys, mats = load_feats(Path(args.data), args.nutt)
    nframes = sum(len(m) for m in mats)
    timed(rows, "read feats + CMVN + deltas", t0, nframes)
    t0 = time.perf_counter()
    tm, (compiler, *_keep), words, sil_phones = build_lang(Path(args.dict))
    text = read_text(Path(args.data) / "text")
    graphs = [compiler.compile_graph_from_text([words.get(w, words["<UNK>"])
                                                for w in text[k].split()]) for k in keys]
    timed(rows, f"compile {len(graphs)} training graphs", t0)
    n_tid = tm.num_transition_ids
    tid2pdf = np.array([-1] + [tm.transition_id_to_pdf(t) for t in range(1, n_tid + 1)])
    is_loop = np.array([False] + [tm.is_self_loop(t) for t in range(1, n_tid + 1)])
    id2state = np.asarray(tm.id2state, dtype=np.int64)
    log_probs = np.asarray(tm.log_probs, dtype=np.float64)
    num_pdfs = tm.num_pdfs
    t0 = time.perf_counter()
    gpdfs = [graph_pdfs(g, tid2pdf) for g in graphs]
    timed(rows, "list each graph's pdfs", t0)

    mean, var, _ = global_mean_var(mats[:10])  # subset-feats --n=10
    gmms = init_mono_gmms(num_pdfs, mean, var)
    sched = TrainMonoSchedule()
    numgauss = sched.numgauss(num_pdfs)
    t0 = time.perf_counter()
    alis = []
    for k, g, m in zip(keys, graphs, mats):
        r = equal_align_graph(g, len(m), k)
        alis.append(None if r is None else r[0])
    timed(rows, f"equal alignment ({sum(a is None for a in alis)} failed)", t0, nframes)
    allx = np.concatenate(mats).astype(np.float64)
    its = []
    rng = np.random.default_rng(777)
    for x in range(args.iters):
        it = {"iter": x}
        if x > 0 and sched.realign(x):
            t0 = time.perf_counter()
            model = StackedGmms.from_gmms(gmms)
            opts = AlignOptions(beam=sched.beam(x), retry_beam=sched.retry_beam)
            trans = scaled_transition_log_probs(log_probs, id2state, is_loop, 1.0, 0.1)
            t_ll = 0.0
            fails = retried = 0
            tot_like = 0.0
            for i, (k, g, m) in enumerate(zip(keys, graphs, mats)):
                a = time.perf_counter()
                ll = pdf_loglikes(model, m, gpdfs[i], dtype=np.float32)
                t_ll += time.perf_counter() - a
                res = align_utterance(g, ll, tid2pdf, opts, trans, gpdfs[i], key=k)
                fails += not res.ok
                retried += res.retried
                tot_like += res.like
                if res.ok:
                    alis[i] = res.alignment
            it["align_s"] = time.perf_counter() - t0
            it["align_ll_s"] = t_ll
            it["align_fail"], it["align_retry"] = fails, retried
            it["align_like"] = tot_like / nframes
        t0 = time.perf_counter()
        model = StackedGmms.from_gmms(gmms)
        accs = GmmAccs.for_model(model, n_tid)
        ok = [i for i, a in enumerate(alis) if a is not None]
        tids = np.concatenate([alis[i] for i in ok])
        feats = allx if len(ok) == len(mats) else np.concatenate([mats[i] for i in ok])
        acc_stats_ali(model, feats, tid2pdf[tids], accs)
        acc_transitions(tids, accs)
        it["acc_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        opts = MleGmmOptions(min_gaussian_occupancy=sched.first_min_gaussian_occupancy
                             if x == 0 else 10.0)
        log_probs, _, _ = mle_transition_update(log_probs, accs.trans, id2state)
        gmms, _ = mle_am_update(gmms, accs, opts)
        gmms = mix_up(gmms, accs.pdf_occs(), numgauss[x], sched.power, rng=rng)
        it["update_s"] = time.perf_counter() - t0
        it["gauss"] = sum(len(g.weights) for g in gmms)
        it["like"] = accs.tot_like / accs.tot_t
        its.append(it)
        print(f"iter {x}: {it}", file=sys.stderr, flush=True)

    model = StackedGmms.from_gmms(gmms)
    t0 = time.perf_counter()
    pdf_loglikes(model, allx.astype(np.float32), dtype=np.float32)
    timed(rows, f"pdf log-likelihoods, all {num_pdfs} pdfs x {model.num_gauss} Gauss, "
          "float32", t0, nframes)
    t0 = time.perf_counter()
    for m, p in zip(mats, gpdfs):
        pdf_loglikes(model, m, p, dtype=np.float32)
    timed(rows, "pdf log-likelihoods, each utterance's graph pdfs, float32", t0, nframes)
    t0 = time.perf_counter()
    pdf_loglikes(model, allx)
    timed(rows, "pdf log-likelihoods, all pdfs, float64", t0, nframes)

    print(f"\n{len(mats)} utterances, {nframes} frames, dim {mats[0].shape[1]}, {num_pdfs} pdfs, "
          f"{n_tid} transition-ids\n")
    print("| step | seconds | frames/s |\n| --- | ---: | ---: |")
    for name, dt, fps in rows:
        print(f"| {name} | {dt:.2f} | {'' if fps is None else f'{fps:,.0f}'} |")
    print("\n| iter | #Gauss after | avg loglike | acc s | update+mixup s | align s "
          "(of it likelihoods) | align frames/s | align fails/retried |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for it in its:
        al = (f"{it['align_s']:.2f} ({it['align_ll_s']:.2f})" if "align_s" in it else "")
        fps = f"{nframes / it['align_s']:,.0f}" if "align_s" in it else ""
        fr = f"{it['align_fail']}/{it['align_retry']}" if "align_s" in it else ""
        print(f"| {it['iter']} | {it['gauss']} | {it['like']:.3f} | {it['acc_s']:.2f} | "
              f"{it['update_s']:.2f} | {al} | {fps} | {fr} |")
    tot_acc = sum(i["acc_s"] + i["update_s"] for i in its)
    tot_al = sum(i.get("align_s", 0.0) for i in its)
    print(f"\ntotal: acc+update {tot_acc:.1f} s, alignment {tot_al:.1f} s, "
          f"{len(its)} iterations, {sum('align_s' in i for i in its)} alignment passes")


if __name__ == "__main__":
    main()
