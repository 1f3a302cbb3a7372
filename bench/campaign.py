#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The experiment driver: runs a plan's DNN trainings on a task's prerequisites, stores each
finished run in bench/results/<task>/<run-id>/ and commits it at once, so a campaign stopped at
any moment (a preemptible machine, the end of a session) loses at most the epoch in progress and
is picked up by the same command on a fresh clone (bench/experiments/campaign.py says how).

Usage: bench/campaign.py [options] --plan <plan.toml>
 e.g.: bench/campaign.py --plan bench/plans/harbour.toml              # run what is left
       bench/campaign.py --plan bench/plans/harbour.toml --status     # done, running, left
       bench/campaign.py --plan bench/plans/harbour.toml --tables-only
       bench/campaign.py --plan bench/plans/digits.toml --size quick --jobs 2
       bench/campaign.py --plan bench/plans/speed.toml                # bench/RESULTS.md
       bench/campaign.py --plan bench/plans/harbour-full.toml --benches-only   # 4+ cores
       bench/campaign.py --plan bench/plans/harbour-full.toml --jobs 2 --until 01:55

Plans are TOML (bench/experiments/spec.py); the prerequisites are built by the task's recipe in
--work (default ~/.cache/nnetmix/experiments/<task>/<size>) and must match the fingerprint the
store holds for that size (bench/results/<task>/prereqs-<size>.md). A plan of benchmarks only
(bench/plans/speed.toml) has no prerequisites; its tables are bench/RESULTS.md and the charts
in docs/img (bench/experiments/speed_tables.py). A benchmark entry with ``min_cores`` waits
for a machine of that many cores; --benches-only runs the benchmarks alone there.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.experiments.campaign import (CampaignError, CampaignOptions, PROG,  # noqa: E402
                                        parse_until, run_campaign, status)
from bench.experiments.campaign_tables import write_tables  # noqa: E402
from bench.experiments.prereqs import PrereqError  # noqa: E402
from bench.experiments.spec import PlanError, load_plan  # noqa: E402
from bench.experiments.speed_tables import write_speed_tables  # noqa: E402
from bench.experiments.store import Store, StoreError  # noqa: E402
from bench.experiments.tasks import get_task  # noqa: E402


def _bool(v: str) -> bool:
    if v not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {v!r}")
    return v == "true"


def _until(v: str) -> float:
    try:
        return parse_until(v)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).split(": ", 1)[1]) from None


def get_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--plan", required=True, help="the plan file (TOML)")
    p.add_argument("--size", default=None, help="the task size (default: the plan's)")
    p.add_argument("--work", default=None, help="the recipe work directory "
                   "(default: ~/.cache/nnetmix/experiments/<task>/<size>)")
    p.add_argument("--store", default=str(ROOT / "bench" / "results"),
                   help="the results store (default: %(default)s)")
    p.add_argument("--recipe", default=None, help="another recipe directory for the task")
    p.add_argument("--jobs", type=int, default=1, help="runs side by side, while their workers "
                   "fit the cores (default: %(default)s)")
    p.add_argument("--nj", type=int, default=2,
                   help="parallel jobs of the prerequisite stages (default: %(default)s)")
    p.add_argument("--commit", type=_bool, default=True,
                   help="git-commit each finished run (true|false, default: true)")
    p.add_argument("--benches-only", action="store_true",
                   help="run the plan's [[bench]] entries the store lacks, and stop (a "
                        "machine lent for its cores: no prerequisites, no runs)")
    p.add_argument("--until", type=_until, default=None, metavar="WHEN",
                   help="when the machine will be taken away (HH:MM or YYYY-MM-DD HH:MM, local "
                        "time): runs expected to finish by then start first, from the times "
                        "measured so far (default: plan order only)")
    p.add_argument("--status", action="store_true", help="say what is done, running and left")
    p.add_argument("--tables-only", action="store_true",
                   help="rewrite the tables from the store alone")
    args = p.parse_args(argv)
    if args.jobs < 1 or args.nj < 1:
        p.error("--jobs and --nj must be at least 1")
    return args


def main(argv=None) -> int:
    args = get_args(argv)
    try:
        plan = load_plan(args.plan, args.size)
        task = get_task(plan.task, args.recipe)
        for i, spec in enumerate(plan.runs, 1):
            task.check(spec, f"{plan.path}: run {i}")
        work = Path(args.work or Path.home() / ".cache" / "nnetmix" / "experiments" / task.name
                    / plan.size).expanduser().resolve()
        opts = CampaignOptions(work=work, store=Path(args.store).resolve(), repo=ROOT,
                               jobs=args.jobs, nj=args.nj, commit=args.commit,
                               benches_only=args.benches_only, until=args.until)

        def tables(store: Store):
            if task.name == "speed":      # bench/RESULTS.md and docs/img's charts
                return write_speed_tables(store)
            return write_tables(store, list(task.decodes))
        if args.status:
            print(status(task, plan, opts))
            return 0
        if args.tables_only:
            for path in tables(Store(opts.store, task.name)):
                print(f"{PROG}: wrote {path}")
            return 0
        print(f"{PROG}: {' '.join(sys.argv)}", file=sys.stderr)
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        return run_campaign(task, plan, opts, tables)
    except (PlanError, StoreError, CampaignError, PrereqError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
