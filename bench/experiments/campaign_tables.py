# Copyright 2026 nnetmix authors. Apache 2.0.
"""The campaign's tables, written from the results store alone (``bench/results/<task>/``), so
that ``bench/campaign.py --tables-only`` on any clone rewrites them byte for byte: no clock, no
host name, nothing read from a work directory.

``bench/results/<task>/RESULTS.md`` holds, per size: every stored run (spec, epochs, kept CV
frame accuracy, WER per test condition with its 95% bootstrap interval, hours and load); the
learning-rate choice of each method from its grid, on the CV set (the highest CV frame accuracy
of the model kept, then the lower CV loss), as seed 002 chose them; and each multi-worker run
against the one-worker run of the same seed, update rule and initialisation at that one's chosen
learning rate, through compare-wer.py's two tests (a difference is significant when MAPSSWE's
p < 0.05 and the bootstrap interval leaves out 0; otherwise it is a tie).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Optional

from nnetmix.score import CompareOptions, format_p
from nnetmix.score.compare import compare_systems
from nnetmix.train.seqstreams import PerUttOptions

from bench.experiments.report import num, table, write_atomic
from bench.experiments import campaign_plots, conditions, mix_variants, plan, seed000, \
    seed001, seed002, seed004
from bench.experiments.spec import NO_EPOCH_AVERAGE, method_key
from bench.experiments.store import BenchRecord, Record, Store
from bench.experiments.stored import FIRST_SEED, HARBOUR_ROLES, blstm_roles, cv_rank, \
    lr_scale_pair, max_change_pair, roles, variant_pairs
from bench.experiments.tasks import CSC
from bench.experiments.verdict import HELD, NOT_HELD, NOT_MEASURED, TIE, Claim, claims_markdown

__all__ = ["write_tables", "render", "chosen_learning_rates", "versus_one_worker",
           "readme_summary", "summary_block"]

ALPHA = 0.05


def chosen_learning_rates(records: list[Record]) -> dict[str, dict[float, Record]]:
    """Per method key: learning rate -> the record that stands for it (the grid's seed, 777;
    another seed's only where that one is missing)."""
    groups: dict[str, dict[float, Record]] = defaultdict(dict)
    for r in sorted(records, key=lambda r: (r.spec.seed != FIRST_SEED, r.run_id)):
        groups[method_key(r.spec)].setdefault(r.spec.learn_rate, r)
    return groups


def _kept_train_acc(r: Record) -> Optional[float]:
    """The training frame accuracy the kept model's epoch logged (None: no epoch was kept)."""
    kept = r.result["kept"]["epoch"]
    return next((e["train_acc"] for e in r.epochs if e["epoch"] == kept and kept > 0), None)


def _best_rate(rates: dict[float, Record]) -> float:
    return max(rates, key=lambda lr: cv_rank(rates[lr]))


@dataclasses.dataclass
class Versus:
    run: Record
    base: Record
    decode: str
    wer_base: float
    wer_run: float
    diff: float
    low: float
    high: float
    p: float
    significant: bool


def _compare(a: Record, b: Record, decode: str) -> Versus:
    refs = a.tokens(decode, "ref")
    hyp_a, hyp_b = dict(a.tokens(decode, "hyp")), dict(b.tokens(decode, "hyp"))
    c = compare_systems(refs, hyp_a, hyp_b, (f"{a.path}/ref.{decode}.txt.gz",
                                             f"{a.path}/hyp.{decode}.txt.gz",
                                             f"{b.path}/hyp.{decode}.txt.gz"),
                        (a.run_id, b.run_id), CompareOptions(alpha=ALPHA))
    boot = c.bootstrap
    return Versus(b, a, decode, boot.wer_a.value, boot.wer_b.value, boot.diff.value,
                  boot.diff.low, boot.diff.high, c.mapsswe.p_value,
                  c.mapsswe.significant and boot.significant)


def versus_one_worker(records: list[Record], decodes: list[str]) -> list[Versus]:
    """Each multi-worker run against the one-worker run of its seed, update rule, init and
    network, at the learning rate chosen for one worker (None when there is no such run)."""
    groups = chosen_learning_rates(records)
    base: dict[tuple, Record] = {}
    for key, rates in groups.items():
        if json.loads(key)["workers"] == 1:
            lr = _best_rate(rates)
            for r in records:
                if method_key(r.spec) == key and r.spec.learn_rate == lr:
                    base.setdefault((_base_key(r.spec), r.spec.seed), r)
    out = []
    for r in records:
        b = base.get((_base_key(r.spec), r.spec.seed))
        if r.spec.workers > 1 and b is not None:
            out += [_compare(b, r, d) for d in decodes if d in r.result["decodes"]]
    return out


def _base_key(spec) -> tuple:
    return (spec.size, spec.network, spec.input, spec.init, spec.optimizer, spec.minibatch,
            spec.scheduler, spec.max_epochs)


def _wer_cell(r: Record, decode: str, intervals: dict) -> str:
    d = r.result["decodes"].get(decode)
    if d is None:
        return "-"
    ci = intervals.get((r.run_id, decode))
    return f"{d['wer']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _intervals(records: list[Record], decodes: list[str]) -> dict:
    """Each run's WER interval (the bootstrap of compare-wer.py, run against itself)."""
    out = {}
    for r in records:
        for d in decodes:
            if d in r.result["decodes"]:
                c = compare_systems(r.tokens(d, "ref"), dict(r.tokens(d, "hyp")),
                                    dict(r.tokens(d, "hyp")), ("ref", "a", "b"),
                                    opts=CompareOptions(alpha=ALPHA))
                out[(r.run_id, d)] = (c.bootstrap.wer_a.low, c.bootstrap.wer_a.high)
    return out


def _hours_cell(res: dict) -> str:
    """The run's hours; where they are fewer than its epochs' own job walls (a record made by a
    driver that did not clock the starts before a resume), those, as a lower bound."""
    run, train = res["seconds"]["run"], res.get("train_seconds", 0.0)
    return f"{run / 3600:.2f}" if run >= train else f">= {train / 3600:.2f}"


def _mixing_cell(spec) -> str:
    if spec.workers == 1:
        return "-"
    m = spec.mixing
    if m.startswith("bmuf"):
        eta = "1-1/N" if spec.block_momentum is None else f"{spec.block_momentum:g}"
        m += f" (eta {eta})"
    return m + (f", {spec.variant_label()}" if spec.mix_variant else "")


def _blocks(r: Record) -> str:
    """'10 x 256 frames (39/epoch)': minibatches between mixes, what a minibatch is (a BLSTM's:
    one multi-stream step of CSC chunks, the training tool's default number of streams), and the
    mixes an epoch holds per rank."""
    s = r.spec
    if s.workers == 1:
        return "-"
    mbs = next((e["minibatches"] for e in r.epochs if e.get("minibatches")), None)
    per = f" ({mbs // s.average_every}/epoch)" if mbs else ""
    what = (f"{PerUttOptions().num_streams} chunks {CSC[0]}-{CSC[1]}+{CSC[2]}"
            if s.network == "blstm" else f"{s.minibatch} frames")
    return f"{s.average_every} x {what}{per}"


def _limited_cell(r: Record) -> str:
    """The share, %, of rank 0's NG-SGD layer updates limited by --max-change-per-sample over
    the epochs that counted them; '-' where none did."""
    counted = [e for e in r.epochs if e.get("limited") is not None and e.get("updates")]
    if not counted:
        return "-"
    limited, updates = sum(e["limited"] for e in counted), sum(e["updates"] for e in counted)
    share = f"{100.0 * limited / updates:.0f}"
    # a few limited, or all but a few, never round to "none" or "every one"
    if share == "0" and limited:
        return "<1"
    if share == "100" and limited < updates:
        return ">99"
    return share


def _lr_cell(spec) -> str:
    if spec.workers == 1:
        return f"{spec.learn_rate:g}"
    scaled = spec.scale_lr if spec.scale_lr is not None else not spec.mixing.startswith("bmuf")
    return f"{spec.learn_rate:g}" + (f" x {spec.workers}" if scaled else "")


def render(store: Store, decodes: list[str], draw: bool = False) -> str:
    """RESULTS.md's text; with ``draw``, the charts (campaign_plots) are drawn first. The
    text links each chart the store holds, so it does not depend on matplotlib."""
    return _render(store, decodes, draw)[0]


def _render(store: Store, decodes: list[str], draw: bool = False) -> tuple[str, list[Claim]]:
    """RESULTS.md's text and every claim it decides (the README summary counts them)."""
    found: list[Claim] = []
    records = list(store.records())
    benches = list(store.benches())
    lines = [f"# The {store.task} experiment campaign", "",
             "Written by `bench/campaign.py` from the run records in this directory alone "
             "(`--tables-only` rewrites it byte for byte). Each run is one DNN training to its "
             "schedule's end and its decoding; its directory holds the spec, the epochs, the "
             "machine and load, and the per-utterance hypotheses the tests below use. Runs with "
             "more workers than the machine has cores are oversubscribed: their WER and "
             "accuracy are real, their times are not speedups.", ""]
    if not records:
        lines += ["No run is stored yet.", ""]
        return "\n".join(lines + _bench_section(store, benches, found)), found
    machines = defaultdict(int)
    for r in records:
        m = r.result["machine"]
        machines[f"{m['cpu']}, {m['cores']} cores"] += 1
    lines += ["Machines: " + "; ".join(f"{k} ({v} run{'s' if v > 1 else ''})"
                                       for k, v in sorted(machines.items())) + ".", ""]
    intervals = _intervals(records, decodes)
    by_size = defaultdict(list)
    for r in records:
        by_size[r.spec.size].append(r)
    for size in sorted(by_size):
        recs = by_size[size]
        digest = recs[0].result.get("prereqs")
        lines += [f"## Size {size}", "",
                  f"Prerequisites: [prereqs-{size}.md](prereqs-{size}.md) (digest {digest}).", "",
                  "### Runs", "",
                  "WER in %, with the 95% bootstrap interval; CV frame accuracy of the model "
                  "kept; epochs run (rejected); hours of the whole run (training, decoding, every "
                  "start of it) on its machine (at least the epochs' own hours, marked >=, where "
                  "a record's clock missed starts before a resume); load average before -> after; "
                  "max-change %: the share of rank 0's NG-SGD layer updates that "
                  "--max-change-per-sample (nnet2's limit, 0.075) scaled down, over the "
                  "epochs that counted them (- where none did: plain SGD, or stored before the "
                  "count was kept).", ""]
        head = ["run", "name", "workers", "mixing", "every", "learning rate", "update",
                "max-change %", "init", "seed", "epochs", "CV acc %"] + [
                    f"WER {d}" for d in decodes] + ["hours", "load"]
        rows = []
        for r in _in_runs_order(recs):
            s = r.spec
            res = r.result
            rows.append([f"[{r.run_id}]({r.run_id}/result.json)", s.name or "-", str(s.workers),
                         _mixing_cell(s), _blocks(r), _lr_cell(s),
                         s.optimizer + s.max_change_label(), _limited_cell(r), s.init,
                         str(s.seed), f"{res['epochs_run']} ({res['epochs_rejected']})",
                         f"{res['kept']['cv_acc']:.2f}"]
                        + [_wer_cell(r, d, intervals) for d in decodes]
                        + [_hours_cell(res), res.get("load", "")])
        lines += [table(head, rows, right=(2, 7, 10, 11, len(head) - 2))]
        decode = CLAIMS_DECODE.get(store.task, decodes[0])
        if draw:
            campaign_plots.draw(store.dir, store.task, size, recs, decode, intervals)
        for png, what in zip(campaign_plots.plot_names(size),
                             (f"WER ({decode}) against workers", "CV frame accuracy per epoch")):
            if (store.dir / png).exists():
                lines += [f"![{what}]({png})", ""]
        groups = {k: v for k, v in chosen_learning_rates(recs).items() if len(v) > 1}
        if groups:
            lines += ["### Learning rates chosen on the CV set", "",
                      "Per method, each rate of its grid (the first seed in run-id order); the "
                      "chosen one (**bold**) has the highest CV frame accuracy of the model kept, "
                      "then the lower CV loss; one at an end of its grid is marked: the CV set's "
                      "best rate may lie beyond it (a plan extends such a grid once, a factor of 2 "
                      "past that end: docs/experiments.md). The test WERs are beside it to show "
                      "whether the CV set chose what the test set would have; they take no part "
                      "in the choice. Beside the CV figures, how far each rate fitted the "
                      "training set: the kept model's training frame accuracy (as its epoch "
                      "logged it) and the epochs run.", ""]
            rows = []
            for key, rates in sorted(groups.items()):
                best = _best_rate(rates)
                for lr in sorted(rates):
                    r = rates[lr]
                    k = r.result["kept"]
                    cell = f"{lr:g}" if lr != best else f"**{lr:g}**" + (
                        " (grid's end)" if lr in (min(rates), max(rates)) else "")
                    rows.append([r.spec.name or r.spec.label(), str(r.spec.workers),
                                 _mixing_cell(r.spec), cell, f"{k['cv_acc']:.2f}",
                                 f"{k['cv_loss']:.4f}", num(_kept_train_acc(r), "{:.2f}"),
                                 str(r.result["epochs_run"])]
                                + [num(r.result["decodes"].get(d, {}).get("wer"), "{:.2f}")
                                   for d in decodes])
            lines += [table(["method", "workers", "mixing", "learning rate", "CV acc %",
                             "CV loss", "train acc %", "epochs"]
                            + [f"WER {d}" for d in decodes], rows,
                            right=(1,) + tuple(range(4, 8 + len(decodes))))]
            lines += _cv_against_test(groups, recs, decodes)
        vs = versus_one_worker(recs, decodes)
        if vs:
            lines += ["### Against one worker", "",
                      "Each multi-worker run against the one-worker run of the same seed, update "
                      "rule and initialisation at the one worker's chosen learning rate: the WER "
                      "difference (run minus one worker) with its 95% bootstrap interval and "
                      "MAPSSWE's p; significant when p < 0.05 and the interval leaves out 0, "
                      "otherwise a tie.", ""]
            rows = []
            for v in sorted(vs, key=lambda v: (v.run.spec.workers, v.run.spec.mixing,
                                               v.run.spec.learn_rate, v.run.run_id, v.decode)):
                verdict = ("tie" if not v.significant else
                           ("worse" if v.diff > 0 else "better"))
                rows.append([v.run.spec.name or v.run.spec.label(), str(v.run.spec.workers),
                             _mixing_cell(v.run.spec), _lr_cell(v.run.spec),
                             str(v.run.spec.seed), v.decode,
                             f"{v.wer_base:.2f}",
                             f"{v.wer_run:.2f}", f"{v.diff:+.2f} [{v.low:+.2f}, {v.high:+.2f}]",
                             format_p(v.p), verdict])
            lines += [table(["run", "workers", "mixing", "learning rate", "seed", "test",
                             "WER 1 worker", "WER", "difference", "p", "verdict"], rows,
                            right=(1, 4, 6, 7))]
        lines += _seeds_section(recs, vs, decodes)
        lines += conditions.section(
            store.task, _in_runs_order(recs), store.conditions(size), decode,
            lambda r: [r.spec.name or r.spec.label(), str(r.spec.workers),
                       _mixing_cell(r.spec), _lr_cell(r.spec), str(r.spec.seed)],
            ["run", "workers", "mixing", "learning rate", "seed"], right=(1, 4))
        lines += _claims_section(store.task, size, recs, decodes, found,
                                 _allreduce(benches, recs[0].result["machine"]))
    return "\n".join(lines + _bench_section(store, benches, found)), found


def _in_runs_order(recs: list[Record]) -> list[Record]:
    """The Runs table's order: workers, mixing, learning rate, seed."""
    return sorted(recs, key=lambda r: (r.spec.workers, r.spec.mixing, r.spec.learn_rate,
                                       r.spec.seed, r.run_id))


def _cv_against_test(groups: dict[str, dict[float, Record]], recs: list[Record],
                     decodes: list[str]) -> list[str]:
    """Whether the CV set ranks models as the test set does: per test condition, the grids
    whose CV-chosen rate also has the grid's lowest WER, and Spearman's rank correlation
    between the kept model's CV frame accuracy and the WER over the runs of each network (runs
    of every method: a method the CV set ranks high may decode worse; one network against
    another would measure the networks, not the CV set), and the same of its training frame
    accuracy (how far a run fitted the training set). Said, not acted on: the choice stays
    the CV set's (choosing on the test set would bias every comparison)."""
    parts = []
    for d in decodes:
        wer = {r.run_id: r.result["decodes"].get(d, {}).get("wer") for r in recs}
        agree = 0
        for rates in groups.values():
            wers = [wer[x.run_id] for x in rates.values() if wer[x.run_id] is not None]
            agree += bool(wers) and wer[rates[_best_rate(rates)].run_id] == min(wers)
        parts.append((d, agree, _rhos(recs, wer, lambda r: r.result["kept"]["cv_acc"]),
                      _rhos(recs, wer, _kept_train_acc)))
    (d0, agree0, rho0, _), rest = parts[0], parts[1:]
    text = (f"Does the CV set rank the models as the test set does? On {d0}, the CV choice is "
            f"also the lowest WER of its grid in {agree0} of {len(groups)} grids, and over the "
            f"runs above of each network Spearman's rank correlation of CV frame accuracy with "
            f"WER is {rho0}"
            + "".join(f"; on {d}, {a} of {len(groups)} and {rho}" for d, a, rho, _ in rest)
            + ". A positive correlation means that the runs with the higher CV frame accuracy "
            "decoded worse. The kept model's training frame accuracy against WER, the same way: "
            + "; ".join(f"{train} on {d}" for d, _, _, train in parts)
            + " (negative: the runs that fitted the training set further decoded better).")
    return [text, ""]


def _rhos(recs: list[Record], wer: dict, acc) -> str:
    """'+0.50 (blstm, 3 runs), +0.80 (dnn, 25 runs)': per network, Spearman's correlation of
    ``acc(run)`` with the run's WER (``wer``: run id -> WER), over the runs that have both."""
    out = []
    for net in sorted({r.spec.network for r in recs}):
        rho, n = _spearman([(acc(r), wer[r.run_id]) for r in recs if r.spec.network == net
                            and wer[r.run_id] is not None and acc(r) is not None])
        out.append(f"{rho} ({net}, {n} runs)")
    return ", ".join(out)


def _spearman(pairs: list[tuple[float, float]]) -> tuple[str, int]:
    """Spearman's rank correlation of the pairs, signed to 2 places ("undefined" for fewer
    than 3 pairs or a constant side), and how many pairs."""
    from scipy.stats import spearmanr
    x, y = zip(*pairs) if pairs else ((), ())
    if len(pairs) > 2 and len(set(x)) > 1 and len(set(y)) > 1:
        return f"{spearmanr(x, y).statistic:+.2f}", len(pairs)
    return "undefined", len(pairs)


def _seeds_section(recs: list[Record], vs: list, decodes: list[str]) -> list[str]:
    """Methods trained with more than one seed at one learning rate: WER mean and spread, and
    the verdict against one worker over the seeds (the rule: better or worse when significant
    in the same direction for every seed; otherwise a tie)."""
    groups = defaultdict(list)
    for r in recs:
        groups[(method_key(r.spec), r.spec.learn_rate)].append(r)
    groups = {k: sorted(v, key=lambda r: r.spec.seed) for k, v in groups.items() if len(v) > 1}
    if not groups:
        return []
    rows = []
    for (key, lr), rs in sorted(groups.items(), key=lambda kv: (kv[1][0].spec.workers,
                                                                kv[1][0].spec.mixing, kv[0])):
        for d in decodes:
            wers = [r.result["decodes"][d]["wer"] for r in rs if d in r.result["decodes"]]
            if len(wers) < 2:
                continue
            mean = sum(wers) / len(wers)
            sd = (sum((w - mean) ** 2 for w in wers) / (len(wers) - 1)) ** 0.5
            mine = [v for v in vs if v.decode == d and v.run in rs]
            signs = {0 if not v.significant else (1 if v.diff > 0 else -1) for v in mine}
            if not mine:
                verdict = "-"
            elif len(mine) < len(rs):
                verdict = f"{len(mine)} of {len(rs)} seeds compared"
            elif signs == {1}:
                verdict = "worse for every seed"
            elif signs == {-1}:
                verdict = "better for every seed"
            else:
                verdict = "tie"
            s = rs[0].spec
            rows.append([s.name or s.label(), str(s.workers), _mixing_cell(s), f"{lr:g}", d,
                         ", ".join(str(r.spec.seed) for r in rs),
                         ", ".join(f"{w:.2f}" for w in wers), f"{mean:.2f}", f"{sd:.2f}",
                         verdict])
    return ["### Repeated seeds", "",
            "Methods trained with several training seeds at one learning rate: each seed's WER, "
            "their mean and standard deviation, and the verdict against one worker over the "
            "seeds (each seed against the one-worker run of the same seed): better or worse "
            "only when significant in the same direction for every seed, otherwise a tie.", "",
            table(["method", "workers", "mixing", "learning rate", "test", "seeds", "WER",
                   "mean", "sd", "against one worker"], rows, right=(1, 7, 8))]


#: the test condition the seeds' WER claims are decided on (the trigram: more errors, so more
#: power to separate systems, than the word-pair grammar)
CLAIMS_DECODE = {"harbour": "decode_test_tg", "digits": "decode_test"}


def _same_machine(a: dict, b: dict) -> bool:
    return (a.get("cpu"), a.get("cores")) == (b.get("cpu"), b.get("cores"))


def _allreduce(benches: list[BenchRecord], machine: dict) -> Optional[BenchRecord]:
    """The stored bench/allreduce.py run a link is fitted to for work done on ``machine``: the
    first measured on the same machine (CPU model and cores), else the first stored."""
    ars = [b for b in benches if b.spec.bench == "allreduce"]
    return next((b for b in ars if _same_machine(b.result["machine"], machine)),
                ars[0] if ars else None)


def _fitting_ranks(b: BenchRecord) -> set:
    """The rank counts of a stored bench/allreduce.py run that had a core each."""
    return {r["ranks"] for r in json.loads(b.text("allreduce.json"))
            if r["ranks"] <= b.result["machine"]["cores"]}


def _deciding_allreduce(benches: list[BenchRecord]) -> Optional[BenchRecord]:
    """The stored bench/allreduce.py run seed 004's claims are decided on: the one with the most
    rank counts that had a core each (the first in id order of those), so that one machine decides
    every claim and a larger machine's timings replace a smaller one's."""
    ars = [b for b in benches if b.spec.bench == "allreduce"]
    return max(ars, key=lambda b: len(_fitting_ranks(b)), default=None)


def _scaling_factors(res: dict, roles_size, cores: int, allreduce: Optional[BenchRecord]
                     ) -> dict:
    """seed000's scaling factors: measured where the workers fit the cores, the scaling model's
    beyond them (ring all-reduce fitted to the stored bench/allreduce.py rows, the parameter
    count from the one-worker record) when both are stored."""
    link, params = None, None
    base = res.get("ar/1")
    if allreduce is not None and base is not None:
        from bench.scaling_model import Link, fit_link
        fit = fit_link(json.loads(allreduce.text("allreduce.json")), "ring",
                       allreduce.result["machine"]["cores"])
        link, params = Link(fit["alpha"], fit["beta"]), base.record.result.get("params")
    return seed000.scaling_rows(res, roles_size, cores, link, params)[1]


def _claims(task: str, size: str, recs: list[Record], decodes: list[str],
            allreduce: Optional[BenchRecord] = None) -> list[Claim]:
    """Every claim of the seed tables (seeds 000, 001, 002) on this size's runs, and on
    harbour issue 33's (:mod:`bench.experiments.mix_variants`)."""
    roles_size = HARBOUR_ROLES if task == "harbour" else plan.SIZES.get(size)
    decode = CLAIMS_DECODE.get(task, decodes[0])
    if roles_size is None or decode not in decodes:
        return []
    cores = min(r.result["machine"]["cores"] for r in recs)
    claims = []
    res000 = roles("seed000", roles_size, recs, size, decode)
    claims += seed000.claims(res000, roles_size, cores,
                             _scaling_factors(res000, roles_size, cores, allreduce))
    claims += seed001.claims(roles("seed001", roles_size, recs, size, decode), roles_size, cores)
    claims += seed002.claims(roles("seed002", roles_size, recs, size, decode), roles_size, cores)
    if task == "harbour":
        claims += seed002.blstm_claims(blstm_roles(recs, size, decode, seed002.BLSTM_WORKERS))
        claims.append(seed001.lr_scale_claim(*lr_scale_pair(roles_size, recs, size, decode),
                                             roles_size.n001))
        claims.append(seed001.max_change_claim(*max_change_pair(roles_size, recs, size, decode),
                                               roles_size.n001))
        mmax = max(roles_size.mixing_workers)
        claims += seed000.epoch_average_claims({
            mix: variant_pairs("seed000", f"{mix}/{mmax}", NO_EPOCH_AVERAGE, roles_size, recs,
                               size, decode) for mix in ("bf", "ring")}, mmax)
        claims += mix_variants.claims({
            (v, n): variant_pairs("seed002", f"nbm/{n}", v, roles_size, recs, size, decode)
            for v in mix_variants.VARIANTS for n in mix_variants.WORKERS})
    return claims


def _claims_section(task: str, size: str, recs: list[Record], decodes: list[str],
                    found: list[Claim], allreduce: Optional[BenchRecord] = None) -> list[str]:
    """The claims' section of one size; its claims are added to ``found``."""
    claims = _claims(task, size, recs, decodes, allreduce)
    found += claims
    if not claims:
        return []
    decode = CLAIMS_DECODE.get(task, decodes[0])
    return ["### The seeds' claims", "",
            f"Each claim of the seeds' tables, decided on `{decode}` by the rule beside it, on "
            f"the runs above at seed {777} (a method with a learning-rate grid at its CV-chosen "
            f"rate); where every run of a comparison was also trained with other seeds, it is "
            f"made once per seed (\"seed S ...\", each seed's runs against each other) and is "
            f"significant only when it is for every seed, in the same direction. A claim whose "
            f"runs are not stored yet reads \"not measured\"; seed 000's "
            f"scaling factors are the runs' measured frames per second where the workers fit "
            f"the cores and the scaling model's beyond them, which needs a stored "
            f"bench/allreduce.py run (a [[bench]] entry of the plan).", "",
            claims_markdown(claims)]


def _bench_section(store: Store, benches: list[BenchRecord], found: list[Claim]) -> list[str]:
    """The stored benchmarks: seed 004's claims on bench/allreduce.py's rows with its tables,
    and bench/scaling_model.py's predictions from the stored bench/scaling.py output."""
    if not benches:
        return []
    from bench.allreduce import ALGS, report
    lines = ["## Benchmarks", "",
             "Measured on the machine each names, one at a time, before the runs; stored by the "
             "plan's `[[bench]]` entries.", ""]
    deciding = _deciding_allreduce(benches)
    for b in benches:
        res, m = b.result, b.result["machine"]
        where = (f"[{b.path.name}]({b.path.name}/result.json): `{' '.join(res['command'])}` on "
                 f"{m['cpu']}, {m['cores']} cores, load {res.get('load', '')}, "
                 f"{res['seconds']['run']:.0f} s.")
        if b.spec.bench == "allreduce":
            rows = json.loads(b.text("allreduce.json"))
            algs = [a for a in ALGS if any(a in r for r in rows)]
            ranks = sorted({r["ranks"] for r in rows})
            lines += ["### Seed 004: all-reduce algorithms against message size and processes",
                      "", where + " Median of the slowest rank's time per call, float32 buffers.",
                      ""]
            if b is deciding:
                claims = seed004.claims(rows, m["cores"])
                found += claims
                lines += [claims_markdown(claims)]
            else:
                more = len(_fitting_ranks(deciding)) > len(_fitting_ranks(b))
                lines += [f"Seed 004's claims are decided on [{deciding.path.name}]"
                          f"({deciding.path.name}/result.json), whose machine measured "
                          f"{'more' if more else 'as many'} process counts with a core each"
                          f"{'' if more else ' (the first in id order of those)'}.", ""]
            lines += [("##" + ln if ln.startswith("#") else ln)      # under this ###
                      for ln in report(rows, algs, ranks, m["cores"]).splitlines()[1:]] + [""]
        elif b.spec.bench == "scaling":
            ar = _allreduce(benches, m)
            lines += ["### Scaling model", "", where, ""]
            if ar is None:
                lines += ["The scaling model needs a stored bench/allreduce.py run as well "
                          "(not stored yet).", ""]
                continue
            from bench import scaling_model
            argv = ["--allreduce-json", f"{ar.path.name}/allreduce.json", "--scaling-output",
                    f"{b.path.name}/scaling.txt", "--max-ranks",
                    str(ar.result["machine"]["cores"]), "--out-dir", "."]
            with contextlib.chdir(store.dir):
                text, _ = scaling_model.build(scaling_model.get_args(argv))
            lines += [("#" + ln if ln.startswith("#") else ln) for ln in text.splitlines()[1:]]
            lines += [""]
    return lines


def all_claims(store: Store, decodes: list[str]) -> list[Claim]:
    """Every claim RESULTS.md decides: each size's, then seed 004's on the stored all-reduce
    benchmark."""
    return _render(store, decodes)[1]


SUMMARY_BEGIN = "<!-- the {task} campaign's verdicts: written by bench/campaign.py -->"
SUMMARY_END = "<!-- end of the {task} campaign's verdicts -->"


def summary_block(store: Store, decodes: list[str],
                  claims: Optional[list[Claim]] = None) -> str:
    """README's short table of the campaign: per seed, how many of its claims (``claims``, else
    :func:`all_claims`) held, did not hold, tied or wait for their runs, with a link to
    RESULTS.md, where each claim's rule and figures are. Between the two markers, both
    included."""
    claims = all_claims(store, decodes) if claims is None else claims
    kinds = (HELD, NOT_HELD, TIE, NOT_MEASURED)
    counts: dict = {}
    for c in claims:
        m = re.match(r"(seed|issue) \d+", c.source)
        row = counts.setdefault(m.group(0) if m else c.source, dict.fromkeys(kinds, 0))
        row[c.verdict] += 1
    rel = f"bench/results/{store.task}/RESULTS.md"
    runs = sum(1 for _ in store.records())
    rows = [[src, str(sum(n.values()))] + [str(n[k]) for k in kinds]
            for src, n in sorted(counts.items(), key=lambda kv: (kv[0].startswith("issue"),
                                                                 kv[0]))]
    return "\n".join([
        SUMMARY_BEGIN.format(task=store.task),
        textwrap.fill(f"The seeds' claims tested on {store.task} so far ({runs} training runs "
                      f"stored), each by a stated rule on compare-wer.py's significance tests; "
                      f"every claim with its rule and figures is in [{rel}]({rel}).", 99,
                      break_long_words=False, break_on_hyphens=False), "",
        table(["claims of", "claims", "held", "not held", "tie", "not measured yet"], rows,
              right=(1, 2, 3, 4, 5)).rstrip("\n"),
        SUMMARY_END.format(task=store.task)])


def readme_summary(store: Store) -> Optional[Path]:
    """The README.md, two levels above the store (the repository's), that holds this task's
    summary markers; None where there is none (a store elsewhere, or no markers)."""
    parents = store.dir.resolve().parents
    path = parents[2] / "README.md" if len(parents) > 2 else None
    if path is None or not path.is_file():
        return None
    text = path.read_text()
    ok = SUMMARY_BEGIN.format(task=store.task) in text and SUMMARY_END.format(
        task=store.task) in text
    return path if ok else None


def with_summary(text: str, block: str, task: str) -> str:
    """``text`` with its summary block (markers included) replaced by ``block``."""
    i = text.index(SUMMARY_BEGIN.format(task=task))
    j = text.index(SUMMARY_END.format(task=task)) + len(SUMMARY_END.format(task=task))
    return text[:i] + block + text[j:]


def write_tables(store: Store, decodes: list[str]) -> list[Path]:
    """Rewrite ``<store>/<task>/RESULTS.md`` and its charts, and the summary in the README
    that holds its markers; the files written."""
    path = store.dir / "RESULTS.md"
    text, claims = _render(store, decodes, draw=True)
    write_atomic(path, text)
    out = [path] + sorted(store.dir.glob("*.png"))
    readme = readme_summary(store)
    if readme is not None:
        write_atomic(readme, with_summary(readme.read_text(),
                                          summary_block(store, decodes, claims), store.task))
        out.append(readme)
    return out

