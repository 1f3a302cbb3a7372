#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Which egs/digits runs each experiment group needs, at each size: the one list that
bench/run_experiments.sh runs and the table modules read back.

A run is one stages-6-7 pass of egs/digits/s5/run.sh (DNN training and decoding) in a work
directory whose stages 0-5 (corpus, features, monophone alignments, RBMs) are shared by every run
of that size. Runs with the same settings are the same directory, so a configuration two groups
need (the 8-worker all-reduce run is in seeds 000, 001 and 002) is trained once. The directory is
named as run.sh names it, ``exp/dnn_<rbm|rand>_w<N>[_sgd]_<tag>``, the tag spelling out the rest:
``<mix>_a<average-every>_mb<minibatch>_<scheduler>``, mix one of ar (all-reduce averaging),
bf (butterfly mixing), ring (ring mixing), cbm / nbm (BMUF, classical / Nesterov block momentum).

Every run uses the MPI trainer (train.sh ``--use-mpi true``, also at 1 worker) so that every
epoch log has the same ``MPI summary`` timing line.

Usage (what run_experiments.sh calls):
  python3 -m bench.experiments.plan --size quick runs seed000,seed001   # one run per line
  python3 -m bench.experiments.plan --size quick prefix                  # run.sh args, stages 0-5
  python3 -m bench.experiments.plan --size quick allreduce               # bench/allreduce.py args
  python3 -m bench.experiments.plan --size quick scaling                 # bench/scaling.py args
  python3 -m bench.experiments.plan --size quick --work DIR estimate seed000,...   # minutes
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Iterable, Optional

__all__ = ["Size", "Run", "SIZES", "GROUPS", "SPEC_MIXING", "TRAINING_GROUPS", "runs_for", "group_runs",
           "run_seconds", "estimate_seconds", "parse_groups", "main"]

GROUPS = ("seed004", "seed000", "seed001", "seed002", "scaling")
TRAINING_GROUPS = ("seed000", "seed001", "seed002")
MIXES = {"ar": "all-reduce averaging", "bf": "butterfly mixing", "ring": "ring mixing",
         "cbm": "BMUF-CBM", "nbm": "BMUF-NBM"}
#: each mix as the campaign's RunSpec.mixing (bench/experiments/spec.py) names it
SPEC_MIXING = {"ar": "average", "bf": "butterfly", "ring": "ring", "cbm": "bmuf-cbm",
               "nbm": "bmuf-nbm"}


@dataclasses.dataclass(frozen=True)
class Size:
    """One experiment size: corpus, epochs and the worker counts of each group."""

    name: str
    train_utts: int            #: run.sh --num-train-utts
    test_utts: int             #: run.sh --num-test-utts
    max_iters: int             #: Newbob's most epochs (train.sh --max-iters; 20 is its default)
    exp_epochs: int            #: epochs of the exponential schedule (train.sh --num-epochs)
    workers: tuple             #: seed 000 all-reduce rows
    mixing_workers: tuple      #: seed 000 butterfly and ring rows (at 1 and 2 they are all-reduce)
    n001: int                  #: seed 001's "many workers" column (the seed: 16)
    n002: tuple                #: seed 002's worker counts (the seed: 8, 16, 32, 64)
    allreduce_args: tuple      #: bench/allreduce.py options for seed 004
    scaling_args: tuple        #: bench/scaling.py options (compute time for the scaling model)


SIZES = {
    # The recipe's own corpus and Newbob's own stopping rule: about 2 hours on 2 cores
    # (estimate_seconds below).
    "full": Size("full", 2000, 300, 20, 8, (1, 2, 4, 8, 16), (4, 8, 16), 8, (8, 16),
                 (), ("--ranks", "1,2")),
    # Half the corpus, 2 epochs: every group in under an hour on this machine (estimate_seconds:
    # 54 min; a run's fixed costs, MPI launches and decoding + scoring, dominate at this size).
    "quick": Size("quick", 1000, 100, 2, 2, (1, 2, 4, 8, 16), (4, 8, 16), 4, (8, 16),
                  ("--quick",), ("--ranks", "1,2", "--minibatches", "8")),
    # Plumbing only (a test runs it): tiny corpus, 1 epoch, 1 and 2 workers, every option once.
    "smoke": Size("smoke", 100, 30, 1, 1, (1, 2), (2,), 2, (2,),
                  ("--sizes", "4096,65536", "--ranks", "2", "--reps", "2", "--algorithms",
                   "mpi,ring,tree"),
                  ("--quick", "--ranks", "1", "--minibatches", "3")),
}


@dataclasses.dataclass(frozen=True)
class Run:
    """One DNN training + decoding run (run.sh stages 6-7)."""

    workers: int
    mix: str = "ar"
    average_every: int = 10
    minibatch: int = 256
    scheduler: str = "newbob"
    optimizer: str = "ngsgd"
    pretrain: bool = True

    def __post_init__(self) -> None:
        if self.mix not in MIXES:
            raise ValueError(f"plan.py: unknown mix {self.mix!r} (expected {', '.join(MIXES)})")
        if self.workers == 1 and self.mix != "ar":   # nothing to mix with one worker
            object.__setattr__(self, "mix", "ar")

    @property
    def tag(self) -> str:
        return f"{self.mix}_a{self.average_every}_mb{self.minibatch}_{self.scheduler}"

    @property
    def dnn_dir(self) -> str:
        """exp/... as run.sh names it from --pretrain, --dnn-num-workers, --dnn-optimizer and
        --dnn-tag."""
        d = f"exp/dnn_{'rbm' if self.pretrain else 'rand'}_w{self.workers}"
        if self.optimizer != "ngsgd":
            d += f"_{self.optimizer}"
        return f"{d}_{self.tag}"

    def label(self) -> str:
        init = "RBM" if self.pretrain else "random"
        what = "1 worker" if self.workers == 1 else f"{self.workers} workers, {MIXES[self.mix]}"
        return (f"{what}, every {self.average_every}, minibatch {self.minibatch}, "
                f"{self.scheduler}, {self.optimizer}, {init} init")

    def run_args(self, size: Size) -> list[str]:
        """run.sh options for stages 6-7 of this run."""
        opts = ["--use-mpi", "true", "--minibatch-size", str(self.minibatch),
                "--scheduler", self.scheduler]
        if self.scheduler == "exponential":
            opts += ["--num-epochs", str(size.exp_epochs)]
        elif size.max_iters != 20:
            opts += ["--max-iters", str(size.max_iters)]
        if self.mix in ("bf", "ring"):
            opts += ["--mixing", {"bf": "butterfly", "ring": "ring"}[self.mix]]
        elif self.mix in ("cbm", "nbm"):
            opts += ["--bmuf", "true", "--bmuf-nesterov", "true" if self.mix == "nbm" else "false"]
        return ["--stage", "6", "--stop-stage", "7",
                "--pretrain", "true" if self.pretrain else "false",
                "--dnn-num-workers", str(self.workers),
                "--dnn-average-every", str(self.average_every),
                "--dnn-optimizer", self.optimizer,
                "--dnn-opts", " ".join(opts), "--dnn-tag", self.tag]


def group_runs(group: str, size: Size) -> dict[str, Run]:
    """The runs of one group, keyed by the role each plays in that group's table."""
    n1, n2 = 1, size.n001
    if group == "seed000":
        runs = {f"ar/{n}": Run(n) for n in size.workers}
        runs.update({f"{m}/{n}": Run(n, mix=m)
                     for m in ("bf", "ring") for n in size.mixing_workers})
        return runs
    if group == "seed001":
        runs = {f"avg{k}/{n2}": Run(n2, average_every=k) for k in (5, 10, 20, 50)}
        for n in (n1, n2):
            runs[f"avg10/{n}"] = Run(n)
            runs[f"mb256/{n}"] = Run(n)
            runs[f"mb1024/{n}"] = Run(n, minibatch=1024)
            runs[f"newbob/{n}"] = Run(n)
            runs[f"exponential/{n}"] = Run(n, scheduler="exponential")
            runs[f"ngsgd/{n}"] = Run(n)
            runs[f"sgd/{n}"] = Run(n, optimizer="sgd")
            runs[f"rbm/{n}"] = Run(n)
            runs[f"random/{n}"] = Run(n, pretrain=False)
        return runs
    if group == "seed002":
        runs = {"baseline/1": Run(1)}
        runs.update({f"{m}/{n}": Run(n, mix=m) for n in size.n002 for m in ("ar", "cbm", "nbm")})
        return runs
    if group in ("seed004", "scaling"):
        return {}
    raise SystemExit(f"plan.py: unknown group {group!r} (expected {', '.join(GROUPS)})")


def runs_for(groups: Iterable[str], size: Size) -> list[Run]:
    """Distinct runs of the groups, cheapest first (fewest workers), each once."""
    seen: dict[str, Run] = {}
    for g in groups:
        for run in group_runs(g, size).values():
            seen.setdefault(run.dnn_dir, run)
    return sorted(seen.values(), key=lambda r: (r.workers, r.dnn_dir))


# Wall-time model, calibrated on runs measured while writing this (load average 7-15 from other
# work on the 2 cores, so an idle machine should take less): the smoke runs (100/30 utterances:
# stages 0-5 201 s; 1-epoch runs 96-117 s, of which stage 7 80-100 s) and the recipe's own
# full-size runs (exp/dnn_rbm_w8_sgd: 9 epochs, a training job 14 s of which 10.8 s epoch wall at
# 26.9k frames/s over 8 oversubscribed ranks, a CV job 9-10 s; decoding 300 utterances 15-34 s
# per job, scoring 20-40 s). An MPI job costs LAUNCH_S + LAUNCH_PER_RANK_S per rank (start-up and
# tear-down), EPOCH_S of fixed work, and its frames at FRAMES_PER_S over all ranks.
LAUNCH_S, LAUNCH_PER_RANK_S, EPOCH_S = 2.0, 0.3, 1.5
FRAMES_PER_S = 30000.0
FRAMES_PER_UTT = 162.0               # 290,816 frames in 1,800 training utterances
STAGE6_SETUP_S = 10.0                # targets, priors, feature transform, initialisation
DECODE_S, DECODE_PER_UTT_S = 50.0, 0.1
PREFIX_S, PREFIX_PER_UTT_S = 150.0, 0.1
SEED004_S = {"full": 600.0, "quick": 90.0, "smoke": 20.0}
SCALING_S = {"full": 120.0, "quick": 60.0, "smoke": 15.0}
NEWBOB_EPOCHS = 6                    # Newbob's typical count on the full corpus, rejected ones too


def run_seconds(run: Run, size: Size) -> float:
    """Estimated wall seconds of one run's stages 6-7."""
    epochs = size.exp_epochs if run.scheduler == "exponential" else min(size.max_iters,
                                                                       NEWBOB_EPOCHS)
    frames = size.train_utts * FRAMES_PER_UTT

    def job(f: float) -> float:
        return LAUNCH_S + LAUNCH_PER_RANK_S * run.workers + EPOCH_S + f / FRAMES_PER_S
    stage6 = STAGE6_SETUP_S + job(0.1 * frames) + epochs * (job(0.9 * frames) + job(0.1 * frames))
    return stage6 + DECODE_S + DECODE_PER_UTT_S * size.test_utts


def estimate_seconds(groups: Iterable[str], size: Size, work: Optional[Path] = None) -> float:
    """Estimated wall seconds of the groups; with ``work``, what is finished there (the driver's
    markers: <dnn-dir>/.done, .prefix_done, allreduce/allreduce.json, scaling.txt) is left out."""
    groups = list(groups)

    def done(rel: str) -> bool:
        return work is not None and (work / rel).exists()
    total = sum(run_seconds(r, size) for r in runs_for(groups, size)
                if not done(f"{r.dnn_dir}/.done"))
    if any(g in TRAINING_GROUPS for g in groups) and not done(".prefix_done"):
        total += PREFIX_S + PREFIX_PER_UTT_S * (size.train_utts + size.test_utts)
    if "seed004" in groups and not done("allreduce/allreduce.json"):
        total += SEED004_S[size.name]
    if "scaling" in groups and not done("scaling.txt"):
        total += SCALING_S[size.name]
    return total


def parse_groups(text: str) -> list[str]:
    groups = [g for g in text.replace(",", " ").split() if g]
    for g in groups:
        if g not in GROUPS:
            raise SystemExit(f"plan.py: unknown group {g!r} (expected {', '.join(GROUPS)})")
    return groups


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=sorted(SIZES), default="full")
    p.add_argument("--work", default="", help="estimate: leave out what is finished here")
    p.add_argument("what", choices=("runs", "prefix", "allreduce", "scaling", "estimate"))
    p.add_argument("groups", nargs="?", default=",".join(GROUPS))
    args = p.parse_args(argv)
    size = SIZES[args.size]
    if args.what == "runs":
        for run in runs_for(parse_groups(args.groups), size):
            print("\t".join([run.dnn_dir, str(run.workers)] + run.run_args(size)))
    elif args.what == "prefix":
        print("\t".join(["--num-train-utts", str(size.train_utts), "--num-test-utts",
                         str(size.test_utts), "--corpus", "corpus", "--stage", "0",
                         "--stop-stage", "5"]))
    elif args.what == "allreduce":
        print("\t".join(size.allreduce_args))
    elif args.what == "scaling":
        print("\t".join(size.scaling_args))
    else:
        groups = parse_groups(args.groups)
        print(f"{estimate_seconds(groups, size, Path(args.work) if args.work else None) / 60:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
