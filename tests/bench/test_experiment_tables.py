"""bench/experiments: the seed groups' roles, reading a finished run, the verdict rules, and
each seed's claims on run directories written in code (the campaign's tables, which print them
from the store, are tests/bench/test_campaign.py's)."""
import json
import re
from pathlib import Path

import pytest

from helpers import allreduce_rows, load_script, write_run

from bench.experiments import plan, seed000, seed001, seed002, seed004, verdict
from nnetmix.score import ScoreError
from nnetmix.train import runlog as results

def test_plan_shares_runs_and_normalises_one_worker():
    size = plan.SIZES["quick"]
    runs = plan.runs_for(plan.TRAINING_GROUPS, size)
    assert len(set(runs)) == len(runs)
    # the 8-worker all-reduce run serves seeds 000 and 002 once
    assert sum(r == plan.Run(8) for r in runs) == 1
    assert plan.Run(1, mix="ring") == plan.Run(1)            # nothing to mix with one worker
    with pytest.raises(ValueError, match="unknown mix"):
        plan.Run(2, mix="gossip")
    with pytest.raises(ValueError, match="unknown group"):
        plan.group_runs("seed999", size)


def test_read_run(tmp_path):
    d = write_run(tmp_path / "exp" / "dnn_x", wer=5.0, cv_acc=72.5, workers=2, epochs=3,
                  wall=10.0, aggregate=0.5, minibatches=100, mixes=10)
    r = results.read_run(d)
    assert (r.epochs, r.rejected, r.workers) == (3, 1, 2)
    assert r.cv_acc == pytest.approx(70.5)           # epoch 2, the last one kept
    assert (r.wer, r.wer_errors, r.wer_words) == (5.0, 20, 400)
    assert r.fps == pytest.approx(3 * 51200 / 30.0)
    sp = r.split_per_epoch()
    assert sp["optimize"] == pytest.approx(8.5) and sp["aggregate"] == pytest.approx(0.5)
    # validate: the CV pass after each epoch, 0.6 s (the initial model's pass is no epoch's)
    assert sp["validate"] == pytest.approx(0.6)
    assert r.ms_per_minibatch == pytest.approx(1e3 * 9.5 / 100)
    assert r.mixes == 30 and r.seconds == 60
    assert results.read_run(tmp_path / "missing") is None
    unfinished = write_run(tmp_path / "exp" / "dnn_y", wer=5.0, done=False)
    (unfinished / "final.nnet").unlink()
    assert results.read_run(unfinished) is None


def test_summarize_dnn_table(tmp_path, capsys):
    """egs/digits/s5/local/summarize_dnn.py (run_parallel_variants.sh's table) reads runs
    through the same reader."""
    d = write_run(tmp_path / "exp" / "dnn_rbm_w2", wer=5.0, cv_acc=72.5, workers=2, epochs=3)
    path = Path(__file__).resolve().parents[2] / "egs/digits/s5/local/summarize_dnn.py"
    mod = load_script(path, "summarize_dnn")
    assert mod.main([str(d)]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    best = results.read_run(d).wer_file
    assert best.startswith("wer_")
    assert row == f"| dnn_rbm_w2 | 3 (1 rejected) | 70.50% | 5.00 (20/400, {best}) | 60 s |"
    with pytest.raises(SystemExit, match="no finished training"):
        mod.main([str(tmp_path / "missing")])


def test_read_run_resumed_before_its_epochs_were_logged_again(tmp_path):
    """A run resumed by a scheduler that did not log the finished epochs again: the epochs come
    from the log that steps/nnet/train.sh kept (train_scheduler.log.1), a later log's line of an
    epoch replacing an earlier one's."""
    d = write_run(tmp_path / "exp" / "dnn_x", wer=5.0, cv_acc=72.5, workers=2, epochs=3)
    log = d / "log" / "train_scheduler.log"
    lines = log.read_text().splitlines(keepends=True)
    last = max(i for i, x in enumerate(lines) if "ITERATION 03" in x)
    (d / "log" / "train_scheduler.log.1").write_text("".join(lines[:last]))   # killed in epoch 3
    log.write_text("LOG (...) resuming after epoch 2: ...\n" + "".join(lines[last:]))
    r = results.read_run(d)
    assert (r.epochs, r.rejected) == (3, 1) and r.cv_acc == pytest.approx(70.5)
    log.write_text("LOG (...) resuming after epoch 2: ...\n")                # nor epoch 3
    assert results.read_run(d).epochs == 2


def test_read_run_bad_log(tmp_path):
    d = write_run(tmp_path / "d", wer=5.0)
    (d / "log" / "train_scheduler.log").write_text("not a scheduler log\n")
    with pytest.raises(results.ResultError, match="train_scheduler.log: no CROSSVAL PRERUN"):
        results.read_run(d)


def test_verdict_numeric_rules():
    assert verdict.worse_by(4.1, 3.5, 0.5) and not verdict.worse_by(3.9, 3.5, 0.5)
    assert verdict.close(3.0, 3.5, 0.5) and not verdict.close(3.0, 3.6, 0.5)
    assert verdict.close(None, 3.5, 0.5) is None
    H, N, T, M = verdict.HELD, verdict.NOT_HELD, verdict.TIE, verdict.NOT_MEASURED
    assert [verdict.as_verdict(x) for x in (True, False, None, T)] == [H, N, M, T]
    assert verdict.all_of([True, H]) == H and verdict.all_of([True, None]) == M
    assert verdict.all_of([None, False]) == N and verdict.all_of([]) == M
    assert verdict.all_of([H, T]) == T and verdict.all_of([T, None]) == M
    with pytest.raises(ValueError, match="unknown verdict"):
        verdict.as_verdict("held up")
    md = verdict.claims_markdown([verdict.Claim("s", "c", "n", "r", "h", None),
                                  verdict.Claim("s", "d", "n", "r", "h", T)])
    assert "| not measured |" in md and "| not significant (a tie) |" in md
    assert "MAPSSWE" in md


def test_verdict_wer_rules_go_through_the_significance_tests(tmp_path):
    """1200 words, nested errors (write_run): 3 more errors is a tie, 24 more is significant;
    a tie is never held nor refuted, whatever the claim."""
    run = lambda name, wer: results.read_run(write_run(tmp_path / name, wer=wer, words=1200))
    a, tie, worse, better = run("a", 4.0), run("tie", 4.25), run("worse", 6.0), run("better", 2.0)
    t = verdict.wer_test(a, tie)
    assert not t.significant and t.sign == 0 and t.diff == pytest.approx(0.25)
    assert t.low <= 0.0 <= t.high
    for rule in (verdict.lower, verdict.higher, verdict.no_higher, verdict.same):
        assert rule(t) == verdict.TIE
    t = verdict.wer_test(a, worse)
    assert t.significant and t.sign == 1 and t.low > 0 and t.p_value < verdict.ALPHA
    assert (verdict.higher(t), verdict.lower(t)) == (verdict.HELD, verdict.NOT_HELD)
    assert (verdict.no_higher(t), verdict.same(t)) == (verdict.NOT_HELD, verdict.NOT_HELD)
    t = verdict.wer_test(a, better)
    assert t.sign == -1 and verdict.no_higher(t) == verdict.HELD
    assert verdict.same(t) == verdict.NOT_HELD
    assert re.fullmatch(r"-2\.00 \[-\d\.\d\d, -\d\.\d\d\], p < 0\.0001", t.cell())
    assert verdict.wer_test(a, None) is None and verdict.lower(None) == verdict.NOT_MEASURED
    assert verdict.cell(None) == "-"
    # (6.0 - 4.0) - (4.25 - 4.0): the first change costs 21 words more than the second
    t = verdict.change_test(a, worse, a, tie)
    assert t.diff == pytest.approx(1.75) and t.significant and verdict.higher(t) == verdict.HELD
    t = verdict.change_test(a, worse, a, worse)             # the same change twice
    assert t.diff == 0.0 and verdict.higher(t) == verdict.TIE
    assert verdict.change_test(a, worse, None, tie) is None
    other = run("other", 4.0)
    (other.path / "decode_test" / "scoring" / "test_filt.txt").write_text("utt0000 w0\n")
    with pytest.raises(ScoreError):
        verdict.change_test(a, worse, other, tie)


def group_results(work, group, size, wers):
    """Each role of ``group`` at ``size`` as a finished run (written once per distinct run),
    WER from ``wers(run)``."""
    out, made = {}, {}
    for role, run in plan.group_runs(group, size).items():
        if run not in made:
            made[run] = results.read_run(write_run(
                work / f"run{len(made)}", wer=wers(run), workers=run.workers, words=1200,
                wall=10.0 / min(run.workers, 2) * 1.02, aggregate=0.1 * run.workers,
                mixes=200 // run.average_every))
        out[role] = made[run]
    return out


def test_seed002_verdicts(tmp_path):
    size = plan.SIZES["smoke"]
    # BMUF better than MA, NBM better than CBM, each by 12 of 1200 words (nested errors):
    # the seed's claims hold; NBM against one worker: 4.0 against 4.1 (1 word), a tie
    res = group_results(tmp_path, "seed002", size, lambda r: {"cbm": 4.0, "nbm": 3.0}.get(
        r.mix, 5.0) if r.workers > 1 else 3.1)
    claims = {c.claim: c for c in seed002.claims(res, size)}
    assert claims["BMUF (CBM and NBM) is more accurate than model averaging"].verdict == \
        verdict.HELD
    assert claims["NBM is better than CBM"].verdict == verdict.HELD
    assert claims["BMUF-NBM loses nothing against one worker"].verdict == verdict.TIE


def test_seed001_verdicts(tmp_path):
    size = plan.SIZES["smoke"]
    # plain SGD degrades 1 -> N by 2.0 (24 of 1200 words), NG-SGD by 0.25 (3): the NG-SGD claim
    # holds; the exponential schedule is 1.0 (12 words) worse: "similar" does not hold
    def wer(r):
        w = 4.0 + (0.25 if r.workers > 1 else 0.0)
        if r.optimizer == "sgd":
            w = 4.0 + (2.0 if r.workers > 1 else 0.0)
        if r.scheduler == "exponential":
            w += 1.0
        return w
    claims = {c.claim: c for c in seed001.claims(group_results(tmp_path, "seed001", size, wer),
                                                 size)}
    assert claims["NG-SGD is crucial under model averaging: plain SGD loses more going from 1 "
                  "to N workers"].verdict == verdict.HELD
    assert claims["Newbob and exponential decay give similar WER"].verdict == verdict.NOT_HELD


def seed000_claims(res, size, cores, link=None, params=None):
    rows, factors = seed000.scaling_rows(res, size, cores, link, params)
    return rows, {c.claim: c for c in seed000.claims(res, size, cores, factors)}


def test_seed000_small_size_is_measured(tmp_path):
    size = plan.SIZES["smoke"]                      # 1 and 2 workers: no model needed
    res = group_results(tmp_path, "seed000", size, lambda r: 4.0 + 0.1 * r.workers)
    rows, claims = seed000_claims(res, size, cores=2)
    # 4.2 against 4.1: one word of 1200
    assert claims["all-reduce averaging keeps WER close to 1 worker up to 16 workers"].verdict \
        == verdict.TIE
    two = next(r for r in rows if r[:2] == ["all-reduce", "2"])
    assert "(measured)" in two[6]
    assert claims["all-reduce averaging scales nearly linearly at small N"].verdict != \
        verdict.NOT_MEASURED


def test_seed000_uses_the_model_beyond_the_cores(tmp_path):
    from bench.scaling_model import Link, fit_link
    size = plan.SIZES["quick"]
    res = group_results(tmp_path, "seed000", size, lambda r: 4.0)
    fit = fit_link(allreduce_rows(5e-6, 1 / 3e9, ranks=(2,)), "ring")
    rows, claims = seed000_claims(res, size, 2, Link(fit["alpha"], fit["beta"]), 370755)
    row16 = next(r for r in rows if r[:2] == ["butterfly", "16"])
    assert "(model)" in row16[6] and row16[-1] == "yes"
    # a 0.37M-parameter model: communication is negligible, the topology cannot matter
    better = "butterfly and ring mixing scale better than all-reduce"
    assert claims[better].verdict == verdict.NOT_HELD
    # a slow link (1 MB/s): one exchange per mix beats the all-reduce's 2(p-1)/p n beta
    fit = fit_link(allreduce_rows(5e-6, 1 / 1e6, ranks=(2,)), "ring")
    _, claims = seed000_claims(res, size, 2, Link(fit["alpha"], fit["beta"]), 370755)
    assert claims[better].verdict == verdict.HELD
    # without the link, nothing beyond the cores is decided
    _, claims = seed000_claims(res, size, 2)
    assert claims[better].verdict == verdict.NOT_MEASURED


def test_seed004_claims():
    rows = allreduce_rows(5e-6, 1 / 3e9, ranks=(4, 8))   # at 2, ring = recursive doubling
    for r in rows:                                  # MPI's own: slower on large messages
        r["mpi"] = r["tree"] * (1.0 if r["bytes"] < 1 << 20 else 2.0 * r["ranks"])
    got = {c.claim.split(" ")[0] + str(i): c.verdict
           for i, c in enumerate(seed004.claims(rows, 2))}
    assert got["ring0"] == got["ring1"] == got["the2"] == verdict.HELD
    assert got["butterfly3"] == verdict.HELD        # log2 P messages beat 2(P-1) at 4 KB
    assert "oversubscribed" in seed004.claims(rows, 2)[0].note
    rows[-1]["ring"] = rows[-1]["ring-async"] = 10.0          # a slow ring at 8 ranks, 64 MB
    assert seed004.claims(rows, 8)[0].verdict == verdict.NOT_HELD


def _harbour_store(tmp_path, runs):
    """A harbour store holding ``runs``: (name, spec fields, WER on the trigram, CV accuracy),
    1200 words with nested errors (write_run's seed 0), so 3 words more is a tie, 24 more is
    significant."""
    from bench.experiments.spec import RunSpec
    from bench.experiments.store import Store
    store = Store(tmp_path / "results", "harbour")
    for name, fields, wer, cv_acc in runs:
        _store_harbour_run(store, tmp_path, RunSpec("harbour", "full", name=name, **fields), wer,
                           cv_acc)
    return store


def _store_harbour_run(store, tmp_path, spec, wer, cv_acc, words=1200, limited=None):
    """One run of ``spec`` (prerequisites "p") in ``store``, decoded on the trigram only;
    ``limited``: write_run's NG-SGD counts per epoch."""
    from bench.experiments.collect import collect
    from bench.experiments.spec import run_id
    from helpers import write_decode
    rid = run_id(spec, "p")
    d = write_run(tmp_path / "runs" / rid, wer=wer, words=words, cv_acc=cv_acc,
                  workers=spec.workers, limited=limited)
    write_decode(d / "decode_test_tg", wer=wer, words=words)
    result, rows, texts = collect(d, ("decode_test_tg",), {
        "run_id": rid, "spec": spec.key(), "name": spec.name, "prereqs": "p",
        "machine": {"cpu": "x", "cores": 2}, "seconds": {"run": 60.0}})
    store.write(result, rows, texts)


def test_every_claim_of_the_full_harbour_plan_is_decided_once_its_runs_are_stored(tmp_path):
    """bench/plans/harbour-full.toml holds the runs every claim needs: with a stand-in record
    for each of its runs (each "cv" run at the rate its grid chose) and the store's own
    all-reduce and scaling benchmarks, every claim has a verdict but the one seed 004 claim that
    needs all-reduce timings at two rank counts within the cores, which a 2-core machine cannot
    give (its row says so; with such timings stored, none is left)."""
    import shutil
    from bench.experiments.campaign import resolve
    from bench.experiments.campaign_tables import all_claims
    from bench.experiments.spec import bench_id, load_plan, run_id
    from bench.experiments.store import Store
    from helpers import ROOT
    committed = ROOT / "bench" / "results" / "harbour"
    store = Store(tmp_path / "results", "harbour")
    store.dir.mkdir(parents=True)
    for bench in committed.glob("bench-*"):
        shutil.copytree(bench, store.dir / bench.name)
    full = load_plan(ROOT / "bench" / "plans" / "harbour-full.toml")
    pending, n = list(full.runs), 0
    while pending:      # a "cv" run resolves once its grid is stored
        resolved = [(s, resolve(s, full, store, "p")) for s in pending]
        ready = [r for _, r in resolved if r is not None]
        assert ready, f"{len(pending)} plan runs never resolve: {pending[0].name}"
        for r in ready:
            if not store.has(run_id(r, "p")):
                # WERs 2.0-2.9% and CV accuracies that vary with the run, the same each time
                _store_harbour_run(store, tmp_path, r, 2.0 + 0.1 * (n % 10), 60.0 + n % 7,
                                   words=400)
                n += 1
        pending = [s for s, r in resolved if r is None]
    assert n == 57          # the plan's runs, each stored once
    undecided = [c for c in all_claims(store, ["decode_test_wp", "decode_test_tg"])
                 if c.verdict == verdict.NOT_MEASURED]
    # the stored all-reduce timings' rank counts that fit their machine's cores
    fitting = {r["ranks"] for b in store.benches() if b.spec.bench == "allreduce"
               for r in json.loads(b.text("allreduce.json"))
               if r["ranks"] <= b.result["machine"]["cores"]}
    if len(fitting) >= 2:
        assert undecided == []
    else:
        assert [c.claim for c in undecided] == [
            "the ring's advantage over MPI's all-reduce grows with the number of processes"]
        assert "needs bench/allreduce.py at two or more rank counts within the cores" in \
            undecided[0].note
    # the plan's benchmarks for a machine of more cores, measured on one of 16: none is left
    waiting = [b for b in full.benches if not store.has(bench_id(b))]
    assert waiting and all(b.min_cores > 2 for b in waiting)
    for b in waiting:
        _store_bench(store, b, {"cpu": "stand-in", "cores": 16}, ranks=(2, 4, 8, 16))
    assert [c.claim for c in all_claims(store, ["decode_test_wp", "decode_test_tg"])
            if c.verdict == verdict.NOT_MEASURED] == []


def _scaling_text(dims: str, cpus: int, ranks) -> str:
    """bench/scaling.py's stdout for ``ranks``: 2 s of compute per rank, 2 mixes of 0.05 s."""
    rows = [f"{p:5d} {10000.0 * p / (1 + 0.025 * (p > 1)):10.1f} "
            f"{p / (1 + 0.025 * (p > 1)):8.2f} {2.0:11.2f} {0.05 * (p > 1):12.3f} "
            f"{2.0 + 0.05 * (p > 1):8.2f} {2:6d}     host  0.1 0.1 0.1 -> 0.1 0.1 0.1"
            for p in ranks]
    return "\n".join([
        f"# network {dims}, minibatch 1024, allreduce mixing (mpi all-reduce) every 10 "
        f"minibatches, 20 timed minibatches per rank, 1 thread per rank, {cpus} CPUs, backend cpu",
        "ranks   frames/s  speedup  optimize s  aggregate s   wall s  mixes  buffers  load "
        "average (1/5/15 min) before -> after", *rows]) + "\n"


def _store_bench(store, spec, machine: dict, ranks) -> None:
    """A stand-in record of ``spec`` (bench/allreduce.py or bench/scaling.py) measured on
    ``machine`` at ``ranks``: alpha-beta all-reduce rows in which MPI's own all-reduce is slower
    than the ring on large messages, or a scaling output of the recipe's network."""
    from bench.experiments.spec import bench_id
    if spec.bench == "allreduce":
        rows = allreduce_rows(5e-6, 1 / 3e9, ranks=ranks)
        for r in rows:
            r["mpi"] = r["tree"] * (1.0 if r["bytes"] < 1 << 20 else 2.0 * r["ranks"])
        files = {"allreduce.json": json.dumps(rows)}
    else:
        files = {"scaling.txt": _scaling_text("440-512-512-1464", machine["cores"],
                                              (1,) + tuple(ranks))}
    store.write_bench({"run_id": bench_id(spec), "kind": "bench", "bench": spec.key(),
                       "name": spec.name, "command": [f"bench/{spec.bench}.py", *spec.args],
                       "code": "abc1234", "machine": machine, "load": "0.1 0.1 0.1 -> 0.1 0.1 0.1",
                       "seconds": {"run": 10.0}, "files": sorted(files)},
                      {k: v.encode() for k, v in files.items()})


def test_seed004_is_decided_on_the_machine_that_measured_most_process_counts(tmp_path):
    """Two machines' all-reduce timings: seed 004's claims are decided once, on the 16-core
    machine's (four rank counts with a core each against one), and the 2-core machine's
    section says so; each scaling output is modelled with its own machine's link, fitted to
    that machine's rows with a core each, and checked at its own rank counts with a core each."""
    from bench.experiments.campaign_tables import all_claims, render
    from bench.experiments.spec import BenchSpec, bench_id
    from bench.experiments.store import Store
    store = Store(tmp_path / "results", "harbour")
    small, big = {"cpu": "small", "cores": 2}, {"cpu": "big", "cores": 16}
    specs = {}
    for machine, ranks, ar_args, sc_args in ((small, (2,), ("--ranks", "2"), ("--ranks", "1,2")),
                                             (big, (2, 4, 8, 16), ("--ranks", "2,4,8,16"),
                                              ("--ranks", "1,2,4,8,16"))):
        for bench, args in (("allreduce", ar_args), ("scaling", sc_args)):
            spec = BenchSpec("harbour", bench, args, f"{bench} {machine['cpu']}")
            _store_bench(store, spec, machine, ranks)
            specs[bench, machine["cpu"]] = bench_id(spec)
    text = render(store, ["decode_test_wp", "decode_test_tg"])
    seed004 = [c for c in all_claims(store, ["decode_test_tg"]) if c.source.startswith("seed 004")]
    assert len(seed004) == 4 and verdict.NOT_MEASURED not in [c.verdict for c in seed004]
    assert seed004[2].claim.endswith("grows with the number of processes")
    assert seed004[2].verdict == verdict.HELD
    grows = next(ln for ln in text.splitlines() if "grows with the number of processes" in ln)
    # ring / mpi = (2(p-1)/p n beta) / (2 log2 p n beta x 2p) at 64 MiB: 1/8 at 2 ranks, 3/64 at 4
    assert "2 ranks 0.13, 4 ranks 0.05, 8 ranks 0.02, 16 ranks 0.01" in grows
    assert text.count("grows with the number of processes") == 1
    big_ar, small_ar = specs["allreduce", "big"], specs["allreduce", "small"]
    assert (f"Seed 004's claims are decided on [{big_ar}]({big_ar}/result.json), whose machine "
            f"measured more process counts with a core each.") in text
    assert f"rows with 2, 4, 8, 16 ranks of {big_ar}/allreduce.json" in text
    assert f"rows with 2 ranks of {small_ar}/allreduce.json" in text
    assert "at the rank counts with a core each (16 CPUs)" in text
    assert "at the rank counts with a core each (2 CPUs)" in text
    assert "| 16 | 2 | 15.61 |" in text
    # two machines of as many rank counts with a core each: the first in id order decides
    store = Store(tmp_path / "two", "harbour")
    ids = []
    for cpu, args in (("one", ("--ranks", "2")), ("other", ("--ranks", "2", "--quick"))):
        spec = BenchSpec("harbour", "allreduce", args)
        _store_bench(store, spec, {"cpu": cpu, "cores": 2}, (2,))
        ids.append(bench_id(spec))
    first = min(ids)
    text = render(store, ["decode_test_tg"])
    assert text.count("grows with the number of processes") == 1
    assert (f"decided on [{first}]({first}/result.json), whose machine measured as many process "
            f"counts with a core each (the first in id order of those).") in text


NBM16 = {"workers": 16, "mixing": "bmuf-nbm", "block_momentum": 0.94}


def test_compressed_and_overlapped_nbm_against_nbm_in_the_claims(tmp_path):
    """Issue 33's rows: each variant against BMUF-NBM of the same spec and learning rate (not
    the CV-chosen NBM 16), through the significance tests; the variants play no seed role even
    with the best CV accuracy; the runs table names their mixing."""
    from bench.experiments.campaign_tables import render
    store = _harbour_store(tmp_path, [
        ("NBM 16", {**NBM16, "learn_rate": 0.008}, 4.0, 70.0),
        ("NBM 16", {**NBM16, "learn_rate": 0.004}, 5.0, 71.0),      # the CV-chosen rate
        ("NBM 16 1bit", {**NBM16, "learn_rate": 0.008, "mix_compression": "1bit"}, 6.0, 72.0),
        ("NBM 16 overlap", {**NBM16, "learn_rate": 0.008, "overlap_mixing": True}, 4.25, 72.0)])
    text = render(store, ["decode_test_wp", "decode_test_tg"])
    rows = {line.split(" (issue 33)")[0].lstrip("| "): line for line in text.splitlines()
            if "(issue 33)" in line}
    one_bit = rows["BMUF-NBM with 1bit-compressed updates (error feedback) loses nothing "
                   "against BMUF-NBM mixing whole models"]
    assert "| 16: 1bit 6.00 vs NBM 4.00, +2.00 [" in one_bit and one_bit.endswith(
        "| **not held** |")
    overlap = rows["BMUF-NBM with overlapped mixing (each mix applied one block late) loses "
                   "nothing against BMUF-NBM mixing whole models"]
    assert "| 16: overlap 4.25 vs NBM 4.00, +0.25 [" in overlap and overlap.endswith(
        "| not significant (a tie) |")
    # seed 002's NBM 16 is the plain run at its CV-chosen rate, never a variant
    assert "| 1: -; 8: -, -; 16: 5.00, - |" in text
    assert "| NBM 16 1bit | 16 | bmuf-nbm (eta 0.94), 1bit updates |" in text
    assert "| NBM 16 overlap | 16 | bmuf-nbm (eta 0.94), overlapped |" in text


def test_compressed_and_overlapped_claims_wait_for_their_runs(tmp_path):
    """Without the variants' runs the rows read "not measured", as every claim whose runs are
    not stored yet does; a variant without its uncompressed twin is not measured either."""
    from bench.experiments.campaign_tables import render
    store = _harbour_store(tmp_path, [
        ("NBM 16", {**NBM16, "learn_rate": 0.004}, 4.0, 70.0),
        ("NBM 16 1bit", {**NBM16, "learn_rate": 0.008, "mix_compression": "1bit"}, 4.0, 70.0)])
    lines = [line for line in render(store, ["decode_test_tg"]).splitlines()
             if "(issue 33)" in line]
    assert len(lines) == 2 and all(line.endswith("| not measured |") for line in lines)
    assert "| 16: 1bit 4.00 vs NBM -, - |" in lines[0]
    assert "| 16: overlap - vs NBM -, - |" in lines[1]


def test_butterfly_and_ring_claims_use_the_seeds_way_and_set_the_average_beside_it(tmp_path):
    """Seed 000's rows take butterfly and ring mixing without the end-of-epoch average (the
    seed's way), even when a run with the average has the better CV accuracy; issue 31's rows
    set the averaged run against it (same spec and rate) through the significance tests; the
    runs table names the variant; the WER chart takes the seed's way too."""
    from bench.experiments.campaign_plots import _default_dnn
    from bench.experiments.campaign_tables import render
    from bench.experiments.store import Store
    ring, bf = {"workers": 16, "mixing": "ring"}, {"workers": 16, "mixing": "butterfly"}
    store = _harbour_store(tmp_path, [
        ("MA 16", {"workers": 16}, 4.0, 70.0),
        ("ring 16", {**ring, "epoch_average": False}, 6.0, 68.0),
        ("ring 16 + average", ring, 4.0, 71.0),
        ("butterfly 16", {**bf, "epoch_average": False}, 4.0, 70.0),
        ("butterfly 16 + average", bf, 4.25, 71.0)])
    text = render(store, ["decode_test_tg"])
    rows = {line.split(" (issue 31)")[0].lstrip("| "): line for line in text.splitlines()
            if "(issue 31)" in line}
    r = rows["ring mixing loses nothing with the exact average at each epoch's end (nnetmix's "
             "default) against none (the seed's way)"]
    assert "| 4.00 vs 6.00: -2.00 [" in r and r.endswith("| **held** |")
    b = rows["butterfly mixing loses nothing with the exact average at each epoch's end "
             "(nnetmix's default) against none (the seed's way)"]
    assert "| 4.25 vs 4.00: +0.25 [" in b and b.endswith("| not significant (a tie) |")
    seed = [line for line in text.splitlines() if line.startswith(
        "| ring mixing degrades WER at 16 workers (seed 000, Table 3) |")]
    assert len(seed) == 1 and "| 6.00 vs 4.00: +2.00 [" in seed[0]
    assert seed[0].endswith("| **held** |")
    assert "| ring 16 | 16 | ring, no epoch average |" in text
    assert "| ring 16 + average | 16 | ring |" in text
    drawn = {rec.spec.name for rec in Store(tmp_path / "results", "harbour").records()
             if _default_dnn(rec)}
    assert drawn == {"MA 16", "ring 16", "butterfly 16"}


@pytest.mark.parametrize("x1_wer, verdict_cell", [(6.0, "| **held** |"),
                                                  (4.25, "| not significant (a tie) |")])
def test_learning_rate_times_n_claim_sets_x1_against_xn_at_one_rate(tmp_path, x1_wer,
                                                                    verdict_cell):
    """Seed 001's section 5.6: model averaging at 16 with the rate x 1 against the same run and
    base rate x 16, not against the CV-chosen MA 16 of another rate."""
    from bench.experiments.campaign_tables import render
    store = _harbour_store(tmp_path, [
        ("MA 16", {"workers": 16, "learn_rate": 0.008}, 4.0, 70.0),
        ("MA 16", {"workers": 16, "learn_rate": 0.002}, 5.0, 72.0),     # the CV-chosen rate
        ("MA 16, lr x 1", {"workers": 16, "learn_rate": 0.008, "scale_lr": False}, x1_wer,
         73.0)])
    rows = [line for line in render(store, ["decode_test_tg"]).splitlines()
            if "(seed 001, section 5.6)" in line and "needs the learning rate x N" in line]
    assert len(rows) == 1
    assert f"| x 1 {x1_wer:.2f} vs x 16 4.00: +{x1_wer - 4:.2f} [" in rows[0]
    assert rows[0].endswith(verdict_cell)


@pytest.mark.parametrize("off_wer, verdict_cell", [(6.0, "| **not held** |"),
                                                   (4.25, "| not significant (a tie) |")])
def test_max_change_claim_sets_the_limit_off_against_on_at_one_rate(tmp_path, off_wer,
                                                                   verdict_cell):
    """Model averaging at 16 with NG-SGD's max-change limit off against the same run and rate
    with it; the run without the limit plays no seed role (here its CV accuracy is the
    highest, and the MA 16 row of the claims still is the 0.008 run's). The Runs table shows
    each run's share of limited updates from its epochs' counts (- where none were kept)."""
    from bench.experiments.campaign_tables import render
    from bench.experiments.spec import RunSpec
    store = _harbour_store(tmp_path, [
        ("MA 16", {"workers": 16, "learn_rate": 0.004}, 5.0, 69.0)])
    for name, fields, wer, counts in (
            ("MA 16", {}, 4.0, [(300, 300), (300, 300), (150, 300)]),
            ("MA 16, no max-change", {"max_change": 0.0}, off_wer, [(0, 300)] * 3)):
        spec = RunSpec("harbour", "full", name=name, workers=16, learn_rate=0.008, **fields)
        _store_harbour_run(store, tmp_path, spec, wer, 70.0 if not fields else 80.0,
                           limited=counts)
    text = render(store, ["decode_test_tg"])
    rows = [line for line in text.splitlines()
            if "(issue 31)" in line and "max-change limit" in line]
    assert len(rows) == 1
    assert f"| no limit {off_wer:.2f} vs limit 4.00: {off_wer - 4:+.2f} [" in rows[0]
    assert rows[0].endswith(verdict_cell)
    runs = {line.split(" | ")[1]: line for line in text.splitlines()
            if line.startswith("| [dnn-w16-")}
    assert "| 0.008 x 16 | ngsgd | 83 | rbm |" in runs["MA 16"]          # 750 of 900
    assert "| 0.008 x 16 | ngsgd, no max-change | 0 | rbm |" in runs["MA 16, no max-change"]
    assert "| 0.004 x 16 | ngsgd | - | rbm |" in [
        line for line in text.splitlines() if "| 0.004 x 16 |" in line][0]
    # a share that rounds to 0 or 100 but is neither says so
    from bench.experiments.campaign_tables import _limited_cell
    rec = store.read(next(r.run_id for r in store.records() if r.spec.name == "MA 16"
                          and r.spec.learn_rate == 0.008))
    for counts, cell in (([1, 0], "<1"), ([0, 0], "0"), ([1000, 999], ">99"),
                         ([1000, 1000], "100")):
        for e, n in zip(rec.epochs[1:], counts):
            e["limited"], e["updates"] = n, 1000
        rec.epochs[3]["limited"] = rec.epochs[3]["updates"] = None
        assert _limited_cell(rec) == cell
    # the seed 001 rows compare the run with the limit: the one playing avg10/16
    ma = [line for line in text.splitlines() if "(seed 001, Table 3)" in line][0]
    assert "every 10: 4.00" in ma


ONE_BIT = ("| BMUF-NBM with 1bit-compressed updates (error feedback) loses nothing against "
           "BMUF-NBM mixing whole models (issue 33) |")


def _one_bit_row(text):
    rows = [line for line in text.splitlines() if line.startswith(ONE_BIT)]
    assert len(rows) == 1
    return rows[0]


@pytest.mark.parametrize("seed2_wer, expected", [(6.0, "| **not held** |"),
                                                 (4.25, "| not significant (a tie) |")])
def test_claims_compare_seed_by_seed_where_every_run_has_the_seeds(tmp_path, seed2_wer,
                                                                   expected):
    """Runs stored at seeds 777, 1 and 2 on both sides: one test per seed, each seed's runs
    against each other; refuted only when every seed's difference is significant the same way
    (24 words of 1200 is, 3 is not)."""
    from bench.experiments.campaign_tables import render
    nbm = {**NBM16, "learn_rate": 0.008}
    runs = []
    for seed, wer in ((777, 6.0), (1, 6.0), (2, seed2_wer)):
        runs += [("NBM 16", {**nbm, "seed": seed}, 4.0, 70.0),
                 ("NBM 16 1bit", {**nbm, "seed": seed, "mix_compression": "1bit"}, wer, 70.0)]
    text = render(_harbour_store(tmp_path, runs), ["decode_test_tg"])
    row = _one_bit_row(text)
    assert row.endswith(expected)
    assert "seed 1 +2.00 [" in row and "seed 777 +2.00 [" in row
    assert f"seed 2 {seed2_wer - 4.0:+.2f} [" in row
    assert row.index("seed 1 ") < row.index("seed 2 ") < row.index("seed 777 ")


def test_a_seed_on_one_side_only_leaves_the_single_comparison(tmp_path):
    """NBM 16 1bit at seeds 777 and 1, NBM 16 at 777 alone: the claim is the one pair at 777."""
    from bench.experiments.campaign_tables import render
    nbm = {**NBM16, "learn_rate": 0.008}
    store = _harbour_store(tmp_path, [
        ("NBM 16", nbm, 4.0, 70.0),
        ("NBM 16 1bit", {**nbm, "mix_compression": "1bit"}, 6.0, 70.0),
        ("NBM 16 1bit", {**nbm, "mix_compression": "1bit", "seed": 1}, 4.0, 70.0)])
    row = _one_bit_row(render(store, ["decode_test_tg"]))
    assert "| 16: 1bit 6.00 vs NBM 4.00, +2.00 [" in row and "seed " not in row
    assert row.endswith("| **not held** |")


def test_the_runs_table_says_what_a_minibatch_is(tmp_path):
    """A DNN's mixing period is minibatches of frames; a BLSTM's, multi-stream steps of CSC
    chunks (seed 002's 21-64+21, the training tool's 20 streams), as its rank logs say."""
    from bench.experiments.campaign_tables import render
    store = _harbour_store(tmp_path, [
        ("MA 2", {"workers": 2}, 4.0, 70.0),
        ("BLSTM MA", {"workers": 2, "network": "blstm", "init": "random", "optimizer": "sgd",
                      "learn_rate": 0.0001}, 4.0, 70.0)])
    text = render(store, ["decode_test_tg"])
    assert "| MA 2 | 2 | average | 10 x 256 frames (" in text
    assert "| BLSTM MA | 2 | average | 10 x 20 chunks 21-64+21 (" in text


def test_wer_by_test_condition_splits_each_run_s_errors(tmp_path):
    """The store's test-set conditions split each run's errors by noise and reverberation: the
    groups' words are the test set's, the noise groups' errors add up to the whole set's WER, an
    utterance the conditions lack is named, and a store without conditions has no section."""
    from bench.experiments import campaign_tables
    from bench.experiments.store import StoreError
    store = _harbour_store(tmp_path, [("1 worker", {"workers": 1, "learn_rate": 0.004}, 2.0, 70.0),
                                      ("MA 16", {"workers": 16}, 3.0, 69.0)])
    assert "WER by test condition" not in campaign_tables.render(store, ["decode_test_tg"])
    # 120 utterances of 10 words: 60 clean and dry, 30 at 20 dB dry, 30 at 6 dB reverberant
    cond = [f"utt{u:04d} " + ("clean 0.0 - 0.9" if u < 60 else "white 20.0 - 0.9" if u < 90
                              else "pink 6.0 0.40 0.9") for u in range(120)]
    store.write_conditions("full", "\n".join(cond) + "\n")
    assert store.conditions("full")["utt0100"] == ["pink", "6.0", "0.40", "0.9"]
    text = campaign_tables.render(store, ["decode_test_tg"])
    assert ("| run | workers | mixing | learning rate | seed | all (1,200 words) | clean (600 "
            "words) | SNR >= 10 dB (300 words) | SNR < 10 dB (300 words) | dry (900 words) | "
            "reverberant (300 words) |") in text
    section = text.split("### WER by test condition")[1].split("###")[0]
    for name, wer in (("1 worker", 2.0), ("MA 16", 3.0)):
        row = next(line for line in section.splitlines() if line.startswith(f"| {name} |"))
        cells = [float(c) for c in row.split(" | ")[-6:-1] + [row.split(" | ")[-1][:-2]]]
        every, clean, high, low, dry, reverb = cells
        assert every == wer
        assert (600 * clean + 300 * high + 300 * low) / 1200 == pytest.approx(wer, abs=0.01)
        assert (900 * dry + 300 * reverb) / 1200 == pytest.approx(wer, abs=0.01)
        assert reverb == low           # the same 30 utterances
    store.write_conditions("full", "\n".join(cond[:-1]) + "\n")
    with pytest.raises(StoreError, match=r"utterance utt0119 has no line in the test set's "
                                         r"conditions"):
        campaign_tables.render(store, ["decode_test_tg"])
    store.write_conditions("full", "\n".join(cond[:-1] + ["utt0119 pink loud"]) + "\n")
    with pytest.raises(StoreError, match=r"utterance utt0119: 'pink loud' is not harbour's "
                                         r"'kind snr reverb gain'"):
        campaign_tables.render(store, ["decode_test_tg"])
    store.write_conditions("full", "utt0000\n")
    with pytest.raises(StoreError, match=r"conditions-full.txt.gz: line 1: utterance utt0000 "
                                         r"has no condition fields"):
        store.conditions("full")
