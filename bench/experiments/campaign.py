# Copyright 2026 nnetmix authors. Apache 2.0.
"""The experiment campaign: a plan's runs, each trained and decoded by the task's recipe, its
results stored and committed the moment it finishes, so that the campaign can be stopped at any
moment and started again, here or on a fresh clone on another machine.

One pass of :func:`run_campaign`:

0. the plan's benchmarks (``[[bench]]``: bench/allreduce.py, bench/scaling.py) the store does
   not hold run first, one at a time and before anything else loads the machine, each stored
   and committed (:mod:`bench.experiments.benches`);
1. the prerequisites are built in the work directory (or found there) and fingerprinted; a
   store that already holds another fingerprint for this size stops the campaign with one line;
2. every run of the plan whose id the store holds is skipped; a run another driver is running
   (its pid file names a live process) is left to it;
3. the others run in plan order (a ``learn_rate = "cv"`` run in its place once its grid is
   stored), ``--jobs`` at a time while their workers fit the cores (a later run that fits
   starts before an earlier one that does not yet, and with ``--until`` one expected to
   finish by then before one that would not, :func:`next_fitting`): each is
   ``run.sh`` with the run's options and ``--dnn-tag <run-id>`` (train.sh resumes a directory
   that survived after its last finished epoch), then :func:`~bench.experiments.collect.collect`
   into the store, the tables rewritten, and one git commit of that record and the tables.

A failed run is named with its log and the campaign goes on with the others (exit 1 at the end).
SIGINT / SIGTERM end the runs in progress (their process groups) and leave their directories to
resume from.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from bench.experiments import prereqs as prq
from bench.experiments.benches import run_bench
from bench.experiments.collect import collect, machine
from bench.experiments.procs import alive, end_groups, owner, write_pid
from bench.experiments.spec import BenchSpec, Plan, RunSpec, bench_id, cv_grid_of, run_id
from bench.experiments.store import BENCH_PREFIX, Store, StoreError
from bench.experiments.stored import cv_rank
from bench.experiments.tasks import Task

__all__ = ["CampaignOptions", "CampaignError", "run_campaign", "status", "commit_paths",
           "estimate_core_seconds", "git_root", "next_fitting", "expect", "parse_until"]

PROG = "campaign.py"


class CampaignError(Exception):
    """A campaign that cannot go on (one line says why)."""


@dataclasses.dataclass
class CampaignOptions:
    """Where a campaign works and how much of the machine it takes."""

    work: Path                  #: the task's recipe work directory (prerequisites and runs)
    store: Path                 #: bench/results
    repo: Path                  #: the repository (recipes, steps/, utils/, bin/; git commits)
    jobs: int = 1               #: runs side by side (while their workers fit the cores)
    benches_only: bool = False  #: run the plan's benchmarks and stop (no prerequisites, no runs)
    nj: int = 2                 #: parallel jobs of the prerequisite stages
    commit: bool = True         #: one git commit per finished run
    cores: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)
    #: --until: a run is started ahead of earlier ones only when it is expected to finish by
    #: then (seconds since the epoch; None: plan order only)
    until: Optional[float] = None


def log(msg: str) -> None:
    print(f"{PROG}: {msg}", flush=True)


def warn(msg: str) -> None:
    print(f"{PROG}: WARNING: {msg}", file=sys.stderr, flush=True)


# ---- git
def git_root(path: Path) -> Optional[Path]:
    """The work tree holding ``path`` (the store), None outside git."""
    path = Path(path)
    while not path.is_dir():
        path = path.parent
    p = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"],
                       capture_output=True, text=True)
    return Path(p.stdout.strip()) if p.returncode == 0 else None


def code_version(repo: Path) -> str:
    """``git describe --always --dirty`` of the code a run used ('' outside git)."""
    p = subprocess.run(["git", "-C", str(repo), "describe", "--always", "--dirty"],
                       capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else ""


def commit_paths(paths: list[Path], message: str, tries: int = 5) -> bool:
    """Commit exactly ``paths`` in the work tree that holds them (nothing else staged goes
    in). Retries while another git holds the index lock; False (with a warning) when it could
    not, or outside git."""
    repo = git_root(paths[0])
    if repo is None:
        return False
    rel = [str(Path(p).resolve().relative_to(repo.resolve())) for p in paths]
    err = ""
    for attempt in range(tries):
        add = subprocess.run(["git", "-C", str(repo), "add", "-A", "--"] + rel,
                             capture_output=True, text=True)
        if add.returncode == 0:
            st = subprocess.run(["git", "-C", str(repo), "diff", "--cached", "--quiet", "--"]
                                + rel)
            if st.returncode == 0:
                return True     # nothing changed
            p = subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", message, "--"]
                               + rel, capture_output=True, text=True)
            if p.returncode == 0:
                return True
            err = p.stderr.strip()
        else:
            err = add.stderr.strip()
        if "index.lock" not in err:
            break
        time.sleep(2 + 2 * attempt)
    warn(f"could not commit {', '.join(rel)}: {err.splitlines()[-1] if err else 'git failed'} "
         f"(the next start commits it)")
    return False


# ---- runs
@dataclasses.dataclass
class _Run:
    spec: RunSpec
    id: str
    proc: Optional[subprocess.Popen] = None
    load: str = ""
    log: Optional[Path] = None
    order: int = 0              #: its place in the plan: runs start in this order
    wall: Optional[float] = None  #: seconds it is expected to take from here (None: unknown)


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return ""


def _pid_file(work: Path, rid: str) -> Path:
    return work / "runs" / f"{rid}.pid"


def _clock_file(work: Path, rid: str) -> Path:
    return work / "runs" / f"{rid}.clock"


def _tick(work: Path, rid: str, new: bool = False) -> float:
    """The run's wall seconds over every start of it in this work directory: ``runs/<id>.clock``
    holds one ``start last`` line per start (``new`` opens one), its last line brought up to now
    at each call; the sum of the lines is returned. A driver stopped in any way loses at most the
    time since its last tick, so a resumed run's record counts the earlier starts too."""
    path, now = _clock_file(work, rid), time.time()
    try:
        spans = [[float(x) for x in ln.split()] for ln in path.read_text().splitlines()]
        spans = [sp for sp in spans if len(sp) == 2]
    except (OSError, ValueError):
        spans = []
    if new or not spans:
        spans.append([now, now])
    spans[-1][1] = now
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(f"{a:.1f} {b:.1f}\n" for a, b in spans))
    tmp.replace(path)
    return round(sum(b - a for a, b in spans), 1)


def _run_dir(work: Path, rid: str) -> Path:
    found = sorted((work / "exp").glob(f"*_{rid}"))
    if len(found) != 1:
        raise StoreError(f"{work}/exp: {len(found)} directories end in _{rid} (expected one)")
    return found[0]


def epochs_done(work: Path, rid: str) -> int:
    """Epochs a run's surviving directory holds finished (train.sh's ``.done_iterNN`` marks),
    which it resumes after; 0 with no directory."""
    try:
        return len(list(_run_dir(work, rid).glob(".done_iter*")))
    except StoreError:
        return 0


def resolve(spec: RunSpec, plan: Plan, store: Store, digest: Optional[str]) -> Optional[RunSpec]:
    """A ``learn_rate = "cv"`` run at the rate chosen on the CV set (:func:`~bench.experiments.
    stored.cv_rank`) from its grid in the plan (:func:`~bench.experiments.spec.cv_grid_of`);
    None while a run of that grid is not stored. Any other run as it is."""
    if not spec.deferred:
        return spec
    if digest is None:
        return None
    grid = cv_grid_of(spec, plan.runs)
    ids = [run_id(s, digest) for s in grid]
    if not grid or not all(store.has(i) for i in ids):
        return None
    best = max((store.read(i) for i in ids), key=cv_rank)
    return dataclasses.replace(spec, learn_rate=best.spec.learn_rate, cv_grid="")


def plan_ids(plan: Plan, digest: Optional[str], store: Store
             ) -> list[tuple[RunSpec, Optional[str]]]:
    """Each plan run (resolved where it can be) and its id (None until it has one)."""
    out = []
    for s in plan.runs:
        r = resolve(s, plan, store, digest)
        out.append((r or s, run_id(r, digest) if r is not None and digest else None))
    return out


def _cores(spec: RunSpec, cores: int) -> int:
    return max(1, min(spec.workers, cores))


def _finish(r: _Run, task: Task, opts: CampaignOptions, store: Store, tables) -> bool:
    rc = r.proc.wait()
    _pid_file(opts.work, r.id).unlink(missing_ok=True)
    secs = _tick(opts.work, r.id)
    if rc != 0:
        log(f"run {r.id} ({r.spec.label()}) failed after {secs:.0f} s (exit {rc}), log is in "
            f"{r.log}")
        return False
    try:
        result = {"run_id": r.id, "spec": r.spec.key(), "name": r.spec.name,
                  "prereqs": store.stored_prereqs(r.spec.size), "code": code_version(opts.repo),
                  "command": ["./run.sh"] + task.run_args(r.spec, r.id),
                  "machine": machine(), "load": f"{r.load} -> {_load()}",
                  "seconds": {"run": secs}}
        result, rows, texts = collect(_run_dir(opts.work, r.id), task.decodes, result)
        path = store.write(result, rows, texts)
    except StoreError as e:
        log(f"run {r.id}: {e}")
        return False
    wers = ", ".join(f"{d} {v['wer']:.2f}%" for d, v in result["decodes"].items())
    log(f"run {r.id} ({r.spec.label()}) done in {secs:.0f} s: {result['epochs_run']} epochs, "
        f"CV frame accuracy {result['kept']['cv_acc']:.2f}%, WER {wers}")
    written = tables(store)
    if opts.commit:
        commit_paths([path] + written,
                     f"bench/results/{task.name}: {r.spec.label()} ({r.id})")
    return True


def _start(r: _Run, task: Task, opts: CampaignOptions) -> None:
    (opts.work / "runs").mkdir(exist_ok=True)
    r.log = opts.work / "logs" / f"{r.id}.log"
    cmd = ["./run.sh"] + task.run_args(r.spec, r.id)
    r.load = _load()
    _tick(opts.work, r.id, new=True)
    with open(r.log, "a") as f:
        f.write(f"# {' '.join(cmd)}\n")
        f.flush()
        r.proc = subprocess.Popen(cmd, cwd=opts.work, stdout=f, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    write_pid(_pid_file(opts.work, r.id), r.proc.pid)
    log(f"run {r.id} ({r.spec.name or r.spec.label()}) started: {r.spec.label()} "
        f"(log: {r.log})")


def _commit_leftovers(task: Task, opts: CampaignOptions, store: Store, tables) -> None:
    """Records an earlier driver stored but could not commit (stopped in between)."""
    repo = git_root(store.dir) if opts.commit and store.dir.exists() else None
    if repo is None:
        return
    p = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all",
                        "--", str(store.dir)], capture_output=True, text=True)
    top = store.dir.resolve()
    ids = set()
    for line in p.stdout.splitlines():
        path = (repo / line[3:].strip()).resolve()
        if top in path.parents:
            name = path.relative_to(top).parts[0]
            if not name.startswith(".") and store.has(name):
                ids.add(name)
    for rid in sorted(ids):
        rec = store.read_bench(rid) if rid.startswith(BENCH_PREFIX) else store.read(rid)
        log(f"committing {rec.path}, stored by an earlier start")
        commit_paths([rec.path] + tables(store),
                     f"bench/results/{task.name}: {rec.spec.label()} ({rid})")


def _bench_state(spec: BenchSpec, store: Store, cores: int) -> str:
    """done (stored), waits (needs more cores than ``cores``) or left."""
    if store.has(bench_id(spec)):
        return "done"
    return "waits" if cores < spec.min_cores else "left"


def run_benches(task: Task, plan: Plan, opts: CampaignOptions, store: Store, tables) -> int:
    """The plan's benchmarks the store does not hold, one after another; how many failed."""
    failed = 0
    for spec in plan.benches:
        bid = bench_id(spec)
        if store.has(bid):
            store.read_bench(bid)          # a damaged record stops here, named
            continue
        if _bench_state(spec, store, opts.cores) == "waits":
            log(f"benchmark {bid} waits for a machine of {spec.min_cores} or more cores (this "
                f"one has {opts.cores}): {spec.label()}")
            continue
        log(f"benchmark {bid} started: {spec.label()} (log: {opts.work / 'logs' / bid}.log)")
        try:
            path = run_bench(spec, opts.repo, opts.work, store, code_version(opts.repo))
        except StoreError as e:
            log(f"benchmark {bid} failed: {e}")
            failed += 1
            continue
        log(f"benchmark {bid} done in {store.read_bench(bid).result['seconds']['run']:.0f} s")
        written = tables(store)          # with or without --commit, as after a run
        if opts.commit:
            commit_paths([path] + written, f"bench/results/{task.name}: {spec.label()} ({bid})")
    return failed


def prepare(task: Task, size: str, opts: CampaignOptions, store: Store) -> str:
    """Build or find the prerequisites; their digest, checked against the store's."""
    prq.link_recipe(task, opts.repo, opts.work)
    prq.build(task, size, opts.work, opts.nj, log)
    digest, text = prq.fingerprint(task, size, opts.work)
    stored = store.stored_prereqs(size)
    if stored is None:
        path = store.write_prereqs(size, text)
        log(f"prerequisites {digest} recorded in {path}")
        if opts.commit:
            commit_paths([path], f"bench/results/{task.name}: the {size} prerequisites' "
                                 f"fingerprint")
    elif stored != digest:
        raise CampaignError(
            f"the prerequisites in {opts.work} (digest {digest}) are not those of "
            f"{store.prereqs_path(size)} (digest {stored}): results from different "
            f"prerequisites are never mixed (compare {opts.work / prq.CACHE} with it; use "
            f"another --store, or find why this machine built other files)")
    if task.conditions and not store.conditions_path(size).exists():
        src = opts.work / task.conditions
        if not src.exists():
            raise CampaignError(f"{src}: no such file (the test set's conditions, which "
                                f"{task.recipe}/run.sh makes with the prerequisites)")
        path = store.write_conditions(size, src.read_text())
        log(f"the test set's conditions recorded in {path}")
        if opts.commit:
            commit_paths([path], f"bench/results/{task.name}: the {size} test set's "
                                 f"conditions")
    return digest


def run_campaign(task: Task, plan: Plan, opts: CampaignOptions, tables) -> int:
    """Run what is left of ``plan``; 0 when every run it started finished. ``tables(store)``
    rewrites the tables and returns the files it wrote (committed with each run)."""
    store = Store(opts.store, task.name)
    for tmp in store.stale_temporaries():
        warn(f"{tmp}: a record an interrupted write left half-made; removed")
        shutil.rmtree(tmp)
    for i, spec in enumerate(plan.runs, 1):
        task.check(spec, f"{plan.path}: run {i}")
    _commit_leftovers(task, opts, store, tables)
    failed = run_benches(task, plan, opts, store, tables)
    if not plan.runs or opts.benches_only:
        waits = sum(_bench_state(b, store, opts.cores) == "waits" for b in plan.benches)
        log(f"{len(plan.benches)} benchmarks in {plan.path}, {failed} failed"
            + (f", {waits} waiting for more cores" if waits else ""))
        return 1 if failed else 0
    digest = prepare(task, plan.size, opts, store)
    todo, skipped, waiting = [], 0, []
    seen: set = set()
    for order, (spec, rid) in enumerate(plan_ids(plan, digest, store)):
        if rid is None:
            waiting.append(spec)
        elif rid in seen:
            continue             # a "cv" run that resolved to a run of its grid
        elif store.has(rid):
            store.read(rid)       # a damaged record stops here, named
            skipped += 1
        elif alive(_pid_file(opts.work, rid)):
            log(f"run {rid} is running under another driver ({_pid_file(opts.work, rid)}); "
                f"leaving it")
        else:
            todo.append(_Run(spec, rid, order=order))
        if rid:
            seen.add(rid)
    log(f"{len(plan.runs)} runs in {plan.path}: {skipped} stored, {len(todo)} to run, "
        f"{len(waiting)} waiting for a learning-rate grid, {opts.jobs} at a time on "
        f"{opts.cores} cores" + (f", until {_clock(opts.until)}" if opts.until else ""))
    if opts.until is not None:
        expect(todo, _measured(store, plan), opts)
    running: list[_Run] = []

    stopping: list = []

    def stop(signum, _frame):
        if stopping:      # once: a second SIGTERM would stop the recipes' exit traps
            return
        stopping.append(signum)
        end_groups([r.proc for r in running if r.proc is not None])   # None: while it started
        for r in running:
            if r.proc is not None:
                _tick(opts.work, r.id)
            _pid_file(opts.work, r.id).unlink(missing_ok=True)
        log(f"stopped by signal {signum}; {len(running)} run(s) in progress left to resume")
        sys.exit(128 + signum)
    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    ticked = time.time()
    try:
        while todo or running:
            while (i := next_fitting(todo, running, opts)) is not None:
                first = next_fitting(todo, running, dataclasses.replace(opts, until=None))
                if first != i:
                    _log_ahead(todo[i], todo[first], opts)
                r = todo.pop(i)
                running.append(r)   # first: a signal while it starts stops it and its pid file
                _start(r, task, opts)
            time.sleep(0.2 if not running else 1.0)
            if time.time() - ticked > 30:
                ticked = time.time()
                for r in running:
                    _tick(opts.work, r.id)
            for r in [r for r in running if r.proc.poll() is not None]:
                running.remove(r)
                failed += not _finish(r, task, opts, store, tables)
                todo += _resolved(waiting, plan, store, digest, seen)
                todo.sort(key=lambda r: r.order)    # a run its grid let go takes its place
                if opts.until is not None:          # one more run measured, new ones to time
                    expect(todo, _measured(store, plan), opts)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if failed:
        log(f"{failed} run(s) failed")
        return 1
    if waiting:
        log(f"{len(waiting)} run(s) wait for a learning-rate grid that is not all stored")
        return 1
    log("every run of the plan is stored")
    return 0


def next_fitting(todo: list, running: list, opts: CampaignOptions,
                 now: Optional[float] = None) -> Optional[int]:
    """The index in ``todo`` of the run to start now, or None: the first whose workers fit the
    cores beside the running ones (any one when none runs), while fewer than ``--jobs`` run. A
    later run starts before an earlier one that does not fit yet (a one-worker run beside
    another while a 16-worker run waits for both cores), so that no core is left idle. With
    ``--until``, the first of those expected to finish by then (its ``wall``; unknown counts as
    in time) goes first: on a machine that is taken away at a known time, a run cut short there
    is lost with it, while one that fits is stored. When none is expected to, plan order again
    (a directory that survives resumes)."""
    if len(running) >= opts.jobs:
        return None
    busy = sum(_cores(r.spec, opts.cores) for r in running)
    fits = [i for i, r in enumerate(todo)
            if not running or busy + _cores(r.spec, opts.cores) <= opts.cores]
    if not fits:
        return None
    if opts.until is not None:
        left = opts.until - (time.time() if now is None else now)
        in_time = [i for i in fits if todo[i].wall is None or todo[i].wall <= left]
        if in_time:
            return in_time[0]
    return fits[0]


def _measured(store: Store, plan: Plan) -> list:
    """The stored runs of the plan's size: every one measures per-epoch times, also one that
    a "cv" run of the plan no longer takes (a grid extended past its choice)."""
    return [r for r in store.records() if r.spec.size == plan.size]


def parse_until(text: str, now: Optional[float] = None) -> float:
    """``--until``'s value as seconds since the epoch: ``HH:MM`` (the next such time of day,
    local time) or ``YYYY-MM-DD HH:MM`` (also with a ``T``)."""
    now_dt = dt.datetime.fromtimestamp(time.time() if now is None else now)
    try:
        if len(text) <= 5:
            t = dt.datetime.strptime(text, "%H:%M").time()
            when = dt.datetime.combine(now_dt.date(), t)
            if when < now_dt:
                when += dt.timedelta(days=1)
        else:
            when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--until {text!r}: expected HH:MM or YYYY-MM-DD HH:MM") from None
    return when.timestamp()


def _clock(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def _hours(wall: Optional[float]) -> str:
    return "time unknown" if wall is None else f"about {wall / 3600:.1f} h"


def _log_ahead(r: _Run, first: _Run, opts: CampaignOptions) -> None:
    left = (opts.until - time.time()) / 3600
    log(f"run {r.id} ({_hours(r.wall)}) goes ahead of {first.id} ({_hours(first.wall)}): "
        f"{left:.1f} h left until {_clock(opts.until)}")


def expect(todo: list, done: list, opts: CampaignOptions) -> None:
    """Set each run's ``wall``: the seconds it is expected to take on this machine from the
    epochs its directory holds (:func:`estimate_core_seconds` over the cores it can use)."""
    for r in todo:
        cs = estimate_core_seconds(r.spec, done, opts.cores, epochs_done(opts.work, r.id))
        r.wall = None if cs is None else cs / _cores(r.spec, opts.cores)


def _resolved(waiting: list, plan: Plan, store: Store, digest: str, seen: set) -> list:
    """The waiting runs whose grid is now stored (removed from ``waiting``), as new runs."""
    out = []
    for spec in list(waiting):
        r = resolve(spec, plan, store, digest)
        if r is None:
            continue
        waiting.remove(spec)
        rid = run_id(r, digest)
        if rid not in seen and not store.has(rid):
            out.append(_Run(r, rid, order=plan.runs.index(spec)))
        seen.add(rid)
    return out


# ---- status
def estimate_core_seconds(spec: RunSpec, done: list, cores: int, epochs_done: int = 0
                          ) -> Optional[float]:
    """Core-seconds a run will take, from the finished runs' measured per-epoch times: the
    finished runs of the same network (all of them when none is), their per-epoch core-seconds
    (training and CV job walls x the cores the run could use) times their mean epoch count
    less the ``epochs_done`` its surviving directory holds, plus their mean remaining
    (decoding, set-up) core-seconds. None with no finished run."""
    same = [r for r in done if r.spec.network == spec.network] or done
    if not same:
        return None
    per_epoch, rest, epochs = [], [], []
    for r in same:
        c = min(r.result["machine"]["cores"], max(1, r.spec.workers))
        n = max(1, r.result["epochs_run"])
        per_epoch.append(r.result["train_seconds"] * c / n)
        total = r.result.get("seconds", {}).get("run", r.result["train_seconds"])
        rest.append(max(0.0, total - r.result["train_seconds"]) * r.result["machine"]["cores"])
        epochs.append(n)
    n = statistics.mean(epochs) if spec.scheduler == "newbob" else spec.epochs
    return (statistics.median(per_epoch) * max(0.0, min(n, spec.max_epochs) - epochs_done)
            + statistics.mean(rest))


#: --status's id of a run whose id is not known yet
_NO_ID_YET = "(id after the prerequisites or its grid)"


def status(task: Task, plan: Plan, opts: CampaignOptions) -> str:
    """Runs done, running and left, and the CPU-hours left."""
    store = Store(opts.store, task.name)
    digest = store.stored_prereqs(plan.size)
    built = "built" if (opts.work / prq.DONE).exists() else "not built"
    if (builder := owner(opts.work / prq.PID)) != 0:
        built = f"being built (pid {builder})"
    lines = [f"{PROG}: {task.name} size {plan.size}, plan {plan.path} ({len(plan.runs)} runs"
             + (f", {len(plan.benches)} benchmarks" if plan.benches else "")
             + f"); store {store.dir}; work {opts.work}"]
    if plan.runs:          # a plan of benchmarks only has no prerequisites
        lines.append(f"prerequisites: {built} in {opts.work}; "
                     f"fingerprint {digest or 'not recorded yet'}")
    bench_states, bench_line = [], None
    # columns as wide as the plan's longest name and id, so the labels line up
    name_w = max([16] + [len(s.name) for s in (*plan.runs, *plan.benches)])
    ids = plan_ids(plan, digest, store) if plan.runs else []
    id_w = max([34] + [len(rid or _NO_ID_YET) for _, rid in ids])
    for spec in plan.benches:
        bid = bench_id(spec)
        state = _bench_state(spec, store, opts.cores)
        needs = (f" (needs {spec.min_cores} or more cores)" if state == "waits" else "")
        lines.append(f"  {state:<7} {bid:<{id_w}} {spec.name or '-':<{name_w}} "
                     f"{spec.label()}{needs}")
        bench_states.append(state)
    if bench_states:
        bench_line = (f"benchmarks: {bench_states.count('done')} done, "
                      f"{bench_states.count('left')} left, {bench_states.count('waits')} "
                      f"waiting for a machine of more cores than this one's {opts.cores}")
    if not plan.runs:
        return "\n".join(lines + ([bench_line] if bench_line else []))
    done = _measured(store, plan)
    states, seen, est = [], set(), []   # est: one estimate per run not done
    for spec, rid in ids:
        if rid is not None and rid in seen:
            continue           # a "cv" run that is a run of its grid
        seen.add(rid)
        if spec.deferred:
            state = "waits"
        elif rid and store.has(rid):
            state = "done"
        elif rid and alive(_pid_file(opts.work, rid)):
            state = "running"
        else:
            state = "left"
        states.append(state)
        done_epochs = epochs_done(opts.work, rid) if rid and state in ("left", "running") else 0
        notes = [f"{done_epochs} epoch{'s' * (done_epochs > 1)} done"] if done_epochs else []
        if state != "done":
            est.append(estimate_core_seconds(spec, done, opts.cores, done_epochs))
            if est[-1] is not None:
                notes.append(_hours(est[-1] / _cores(spec, opts.cores)))
        lines.append(f"  {state:<7} {rid or _NO_ID_YET:<{id_w}} "
                     f"{spec.name or '-':<{name_w}} {spec.label()}"
                     + (f" ({', '.join(notes)})" if notes else ""))
    counts = {s: states.count(s) for s in ("done", "running", "left", "waits")}
    lines.append(f"runs: {counts['done']} done, {counts['running']} running, "
                 f"{counts['left'] + counts['waits']} left ({counts['waits']} of them wait for "
                 f"their learning-rate grid)")
    if bench_line:
        lines.append(bench_line)
    if not est:
        lines.append("CPU-hours left: none")
    elif any(e is None for e in est):
        lines.append("CPU-hours left: unknown (no finished run to measure per-epoch times on)")
    else:
        hours = sum(est) / 3600
        lines.append(f"CPU-hours left: about {hours:.1f} (the finished runs' median "
                     f"per-epoch core-seconds per network x their mean epoch count less the "
                     f"epochs a run's directory holds, plus decoding; {len(done)} finished "
                     f"runs measured): about {hours / opts.cores:.1f} hours of this machine's "
                     f"{opts.cores} cores (beside each run, its own hours on the cores it can "
                     f"use here)")
    return "\n".join(lines)
