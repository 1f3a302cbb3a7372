#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The seeds' experiment groups on egs/digits (seed 000's sweep of workers and mixings, seed
001's comparisons at 1 and N workers, seed 002's methods at 8 and 16 workers) and their sizes:
which runs each group's claims need, by the role each plays in that group's table (``ar/16``,
``nbm/8``, ``baseline/1``, ...). A digits plan's ``include`` turns them into run specs
(:mod:`bench.experiments.spec`); :mod:`bench.experiments.stored` finds the stored run of each
role; the harbour plan's runs play the same roles (:data:`bench.experiments.stored.HARBOUR_ROLES`).
A size also holds the benchmarks' options (``include = ["seed004", "scaling"]``:
bench/allreduce.py and bench/scaling.py at that size).
"""
from __future__ import annotations

import dataclasses
from typing import Iterable

from bench.experiments.spec import seeds_epoch_average

__all__ = ["Size", "Run", "SIZES", "SPEC_MIXING", "TRAINING_GROUPS", "runs_for", "group_runs"]

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
    # The recipe's own corpus and Newbob's own stopping rule.
    "full": Size("full", 2000, 300, 20, 8, (1, 2, 4, 8, 16), (4, 8, 16), 8, (8, 16),
                 (), ("--ranks", "1,2")),
    # Half the corpus, 2 epochs: a run's fixed costs, MPI launches and decoding + scoring,
    # dominate at this size.
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
    """One run of a group, in the groups' own terms (a digits plan's ``include`` makes it a
    :class:`~bench.experiments.spec.RunSpec`)."""

    workers: int
    mix: str = "ar"
    average_every: int = 10
    minibatch: int = 256
    scheduler: str = "newbob"
    optimizer: str = "ngsgd"
    pretrain: bool = True
    epoch_average: bool = True   #: false: no exact average at an epoch's end (seed 000's way)

    def __post_init__(self) -> None:
        if self.mix not in MIXES:
            raise ValueError(f"plan.py: unknown mix {self.mix!r} (expected {', '.join(MIXES)})")
        if self.workers == 1 and self.mix != "ar":   # nothing to mix with one worker
            object.__setattr__(self, "mix", "ar")

    @property
    def tag(self) -> str:
        return (f"{self.mix}_a{self.average_every}_mb{self.minibatch}_{self.scheduler}"
                + ("" if self.epoch_average else "_noepochavg"))


def group_runs(group: str, size: Size) -> dict[str, Run]:
    """The runs of one group, keyed by the role each plays in that group's table."""
    n1, n2 = 1, size.n001
    if group == "seed000":
        runs = {f"ar/{n}": Run(n) for n in size.workers}
        # butterfly and ring mixing as seed 000 ran them: no average at an epoch's end
        runs.update({f"{m}/{n}": Run(n, mix=m,
                                     epoch_average=seeds_epoch_average(SPEC_MIXING[m]))
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
    raise ValueError(f"plan.py: unknown group {group!r} (expected {', '.join(TRAINING_GROUPS)})")


def runs_for(groups: Iterable[str], size: Size) -> list[Run]:
    """Distinct runs of the groups, fewest workers first, each once."""
    seen = dict.fromkeys(run for g in groups for run in group_runs(g, size).values())
    return sorted(seen, key=lambda r: (r.workers, r.tag, r.optimizer, r.pretrain))
