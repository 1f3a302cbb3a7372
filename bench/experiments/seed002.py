# Copyright 2026 nnetmix authors. Apache 2.0.
"""Seed 002's claims (Tables 3-4): model averaging against BMUF-CBM and BMUF-NBM.

Table 3: %WER and CV frame accuracy at each worker count beside the 1-worker baseline. Table 4:
the time split per epoch (the seed: per sweep), mean per rank, from the MPI summary lines:
optimize and aggregate of the training jobs, validate of the cross-validation jobs, i/o of both.
BMUF here: block = the averaging interval (10 minibatches of 256), block momentum 1 - 1/N, block
learning rate 1 (the seed: 0.9 at 8, 0.94 at 16; blocks of 22.5 minutes of speech per worker).
:func:`blstm_claims`: the BLSTM runs of the harbour plan.
"""
from __future__ import annotations

import os
from typing import Optional

from bench.experiments.plan import Size
from bench.experiments.report import num
from bench.experiments.verdict import (TIMING_NOTE, Claim, all_of, cell, higher, lower,
                                       no_higher, wer_test)

__all__ = ["METHODS", "AGG_SHARE", "AGG_BMUF_OVER_MA", "claims", "blstm_claims"]

METHODS = (("ar", "MA (all-reduce averaging)"), ("cbm", "BMUF-CBM"), ("nbm", "BMUF-NBM"))
AGG_SHARE = 0.10          # seed 002 Table 4: aggregate is 3-7% of optimize; "small" = under 10%
AGG_BMUF_OVER_MA = 1.25   # seed 002 Table 4: BMUF aggregates 4-16% longer than MA; 25% allowed


def claims(res: dict, size: Size, cores: Optional[int] = None) -> list:
    """The claims on ``res`` (role -> run); ``cores``: the machine's (default this one's)."""
    ns = size.n002
    w = {k: (r.wer if r else None) for k, r in res.items()}
    cores = cores or os.cpu_count() or 1
    over = TIMING_NOTE["oversubscribed" if any(n > cores for n in ns) else "measured"]
    out = []
    bmuf = {(m, n): wer_test(res.get(f"ar/{n}"), res.get(f"{m}/{n}"))
            for n in ns for m in ("cbm", "nbm")}
    out.append(Claim(
        "seed 002, Table 3", "BMUF (CBM and NBM) is more accurate than model averaging",
        "Eval2000 MA 14.2 / 14.8, CBM 13.4 / 13.4, NBM 13.3 / 13.4 (8 / 16 GPUs)",
        "WER_cbm(N) - WER_ma(N) and WER_nbm(N) - WER_ma(N) significantly below 0, every N",
        "; ".join(f"{n}: MA {num(w.get(f'ar/{n}'))}, CBM {num(w.get(f'cbm/{n}'))} "
                  f"({cell(bmuf['cbm', n])}), NBM {num(w.get(f'nbm/{n}'))} "
                  f"({cell(bmuf['nbm', n])})" for n in ns),
        all_of([lower(t) for t in bmuf.values()])))
    nbm = {n: wer_test(res.get(f"cbm/{n}"), res.get(f"nbm/{n}")) for n in ns}
    out.append(Claim(
        "seed 002, Table 3", "NBM is better than CBM", "13.3 vs 13.4 (8), 13.4 vs 13.4 (16); "
        "RT03S 17.8 vs 18.0, 17.9 vs 18.1", "WER_nbm(N) - WER_cbm(N) significantly below 0, "
        "every N",
        "; ".join(f"{n}: {num(w.get(f'nbm/{n}'))} vs {num(w.get(f'cbm/{n}'))}, {cell(t)}"
                  for n, t in nbm.items()),
        all_of([lower(t) for t in nbm.values()])))
    one = {n: wer_test(res.get("baseline/1"), res.get(f"nbm/{n}")) for n in ns}
    out.append(Claim(
        "seed 002, Table 3", "BMUF-NBM loses nothing against one worker",
        "13.3 / 13.4 vs single-GPU 14.0", "WER_nbm(N) - WER(1) not significantly above 0, "
        "every N",
        f"1: {num(w.get('baseline/1'))}; "
        + "; ".join(f"{n}: {num(w.get(f'nbm/{n}'))}, {cell(t)}" for n, t in one.items()),
        all_of([no_higher(t) for t in one.values()])))
    if len(ns) > 1:
        a, b = ns[0], ns[-1]
        t = wer_test(res.get(f"ar/{a}"), res.get(f"ar/{b}"))
        out.append(Claim(
            "seed 002, Table 3", "model averaging degrades as workers are added",
            "MA 14.2 (8) -> 14.8 (16) -> 15.5 (32)", f"WER_ma({b}) - WER_ma({a}) significantly "
            "above 0", f"{num(w.get(f'ar/{a}'))} -> {num(w.get(f'ar/{b}'))}: {cell(t)}",
            higher(t)))
    shares, here = [], []
    for n in ns:
        for m, _ in METHODS:
            r = res.get(f"{m}/{n}")
            if r is None:
                shares.append(None)
                continue
            sp = r.split_per_epoch()
            share = sp["aggregate"] / sp["optimize"] if sp["optimize"] > 0 else None
            shares.append(None if share is None else share < AGG_SHARE)
            here.append(f"{m}/{n}: {num(100 * share if share is not None else None, '{:.0f}')}%")
    out.append(Claim(
        "seed 002, Table 4", "aggregation is a small part of the time",
        "aggregate / optimize 5.2% (MA 8), 6.4% (MA 16), 5.4-7.5% (BMUF)",
        f"aggregate / optimize < {AGG_SHARE:.0%} for every run", ", ".join(here) or "-",
        all_of(shares), over))
    res2, here = [], []
    for n in ns:
        ma = res.get(f"ar/{n}")
        for m in ("cbm", "nbm"):
            r = res.get(f"{m}/{n}")
            if ma is None or r is None:
                res2.append(None)
                continue
            a, b = r.split_per_epoch()["aggregate"], ma.split_per_epoch()["aggregate"]
            res2.append(a <= AGG_BMUF_OVER_MA * b)
            here.append(f"{m}/{n} {a:.2f} vs MA {b:.2f} s")
    out.append(Claim(
        "seed 002, Table 4", "BMUF communicates as much as model averaging",
        "aggregate 17.2 / 17.4 vs 16.5 min (8), 11.3 / 11.9 vs 10.3 (16)",
        f"aggregate s/epoch(BMUF) <= {AGG_BMUF_OVER_MA} x MA's, every N", "; ".join(here) or "-",
        all_of(res2), over))
    return out


BLSTM_WORKERS = (2, 4)


def blstm_claims(res: dict) -> list:
    """Seed 002 Table 1 (the CSC-BPTT DBLSTM on SWB) on ``res``: ``blstm/1``, ``blstm-ma/N``,
    ``blstm-nbm/N`` (N in :data:`BLSTM_WORKERS`) and ``dnn/1``, the DNN on the same input."""
    w = {k: (r.wer if r else None) for k, r in res.items()}
    ns = BLSTM_WORKERS
    out = []
    ma = {n: wer_test(res.get("blstm/1"), res.get(f"blstm-ma/{n}")) for n in ns}
    out.append(Claim(
        "seed 002, Table 1", "for the CSC-BPTT BLSTM, model averaging loses accuracy against one "
        "worker", "MA 15.4 (8), 16.0 (16) vs single-GPU 14.8 (Eval2000)",
        "WER_ma(N) - WER(1) significantly above 0, every N",
        f"1: {num(w.get('blstm/1'))}; " + "; ".join(
            f"{n}: {num(w.get(f'blstm-ma/{n}'))}, {cell(t)}" for n, t in ma.items()),
        all_of([higher(t) for t in ma.values()])))
    nbm = {n: wer_test(res.get("blstm/1"), res.get(f"blstm-nbm/{n}")) for n in ns}
    out.append(Claim(
        "seed 002, Table 1", "for the CSC-BPTT BLSTM, BMUF-NBM loses nothing against one worker",
        "NBM 14.9 (8), 14.8 (16) vs 14.8", "WER_nbm(N) - WER(1) not significantly above 0, "
        "every N", f"1: {num(w.get('blstm/1'))}; " + "; ".join(
            f"{n}: {num(w.get(f'blstm-nbm/{n}'))}, {cell(t)}" for n, t in nbm.items()),
        all_of([no_higher(t) for t in nbm.values()])))
    vs = {n: wer_test(res.get(f"blstm-ma/{n}"), res.get(f"blstm-nbm/{n}")) for n in ns}
    out.append(Claim(
        "seed 002, Table 1", "for the CSC-BPTT BLSTM, BMUF-NBM is more accurate than model "
        "averaging", "14.9 vs 15.4 (8), 14.8 vs 16.0 (16)",
        "WER_nbm(N) - WER_ma(N) significantly below 0, every N", "; ".join(
            f"{n}: {num(w.get(f'blstm-nbm/{n}'))} vs {num(w.get(f'blstm-ma/{n}'))}, {cell(t)}"
            for n, t in vs.items()), all_of([lower(t) for t in vs.values()])))
    t = wer_test(res.get("dnn/1"), res.get("blstm/1"))
    out.append(Claim(
        "seed 002 (its reason to train one)", "the CSC-BPTT BLSTM is more accurate than the DNN "
        "on the same features", "none on one task (its DBLSTM is on SWB, its DNN on SWB+Fisher)",
        "WER_blstm(1) - WER_dnn(1) significantly below 0",
        f"{num(w.get('blstm/1'))} vs {num(w.get('dnn/1'))}: {cell(t)}", lower(t)))
    return out
