# Copyright 2026 nnetmix authors. Apache 2.0.
"""Stored runs as the seed tables read runs, so that the seeds' claims
(:mod:`bench.experiments.seed000`, ``seed001``, ``seed002``) are tested on the campaign's
records exactly as they were on digits work directories.

:class:`StoredRun` is a :class:`nnetmix.train.runlog.RunResult` made from a store record and
one of its test conditions (its ``texts`` are that decode's reference and hypotheses);
:func:`roles` finds, for each role a seed group's table names (``ar/16``, ``nbm/8``,
``baseline/1``, ...), the stored run that plays it: the run of that configuration at the
plan's first seed (777) and, where the plan gave a learning-rate grid, at the rate chosen on the
CV set, carrying the same run at every other training seed the store holds (:func:`with_seeds`),
which the claims compare seed by seed. A run with compressed or overlapped mixing plays none of
them (the seeds mixed whole models between blocks), nor does a run with NG-SGD's max-change
limit set otherwise than the tool's default; :func:`variant_pairs`, :func:`lr_scale_pair` and
:func:`max_change_pair` pair each such run with the run it is compared with.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from nnetmix.train.runlog import EpochTiming, RunResult

from bench.experiments.plan import SPEC_MIXING, Size, group_runs
from bench.experiments.spec import NO_EPOCH_AVERAGE
from bench.experiments.store import Record

__all__ = ["StoredRun", "stored_run", "with_seeds", "roles", "blstm_roles", "variant_pairs",
           "lr_scale_pair", "max_change_pair", "HARBOUR_ROLES", "MIX_OF", "cv_rank", "FIRST_SEED"]

#: plan.py's mix names -> RunSpec.mixing
MIX_OF = SPEC_MIXING

#: The roles of the seed tables on harbour: worker counts of seed 000's sweep, seed 001's N and
#: seed 002's worker counts (plan.Size's fields; corpus sizes unused).
HARBOUR_ROLES = Size("harbour", 5100, 1200, 20, 8, (1, 2, 4, 8, 16), (16,), 16, (8, 16), (), ())

#: the seed every learning-rate grid and every seed-table role is run at (RunSpec's default)
FIRST_SEED = 777


class StoredRun(RunResult):
    """A record's numbers under RunResult's names, and its decode's texts."""

    record: Record
    decode: str
    seed_runs: dict   #: training seed -> this run at that seed (itself included); see with_seeds

    def texts(self) -> tuple[list, dict, tuple[str, str]]:
        ref = self.record.tokens(self.decode, "ref")
        hyp = dict(self.record.tokens(self.decode, "hyp"))
        where = str(self.record.path)
        return ref, hyp, (f"{where}/ref.{self.decode}.txt.gz", f"{where}/hyp.{self.decode}.txt.gz")


def stored_run(rec: Record, decode: str) -> StoredRun:
    res, spec = rec.result, rec.spec
    train, cv = [], []
    for e in rec.epochs[1:]:
        if e.get("train_wall") is not None:
            train.append(EpochTiming(spec.workers, e["frames"] or 0, e["train_wall"],
                                     e["optimize"] or 0.0, e["aggregate"] or 0.0, 0.0,
                                     e["io"] or 0.0, e["minibatches"] or 0, e["mixes"] or 0))
        if e.get("cv_wall") is not None:
            cv.append(EpochTiming(spec.workers, 0, e["cv_wall"], 0.0, 0.0,
                                  e["validate"] or 0.0, 0.0))
    d = res["decodes"].get(decode)
    r = StoredRun(path=rec.path, workers=spec.workers, epochs=res["epochs_run"],
                  rejected=res["epochs_rejected"], cv_loss=res["kept"]["cv_loss"],
                  cv_acc=res["kept"]["cv_acc"], wer=d["wer"] if d else None,
                  wer_errors=d["errors"] if d else None, wer_words=d["words"] if d else None,
                  train=train, cv=cv, seconds=int(res["seconds"]["run"]),
                  load=res.get("load", ""), wer_file=d["best"] if d else "")
    r.record, r.decode = rec, decode
    return r


def with_seeds(rec: Record, records: list[Record], decode: str) -> StoredRun:
    """``rec``'s stored run with its ``seed_runs``: the same run (every field of its spec but
    the training seed) at each seed the store holds, for the per-seed comparisons of
    :func:`bench.experiments.verdict.wer_test`."""
    run = stored_run(rec, decode)
    key = dict(rec.spec.key(), seed=None)
    run.seed_runs = {r.spec.seed: run if r is rec else stored_run(r, decode)
                     for r in records if dict(r.spec.key(), seed=None) == key}
    return run


def _matches(rec: Record, run, size: str, variant: str = "",
             scale_lr: Optional[bool] = None, max_change: Optional[float] = None) -> bool:
    """The record is ``run`` of a seed group at the first seed, with mixing ``variant``,
    ``scale_lr`` (None: the tool's default for the mixing) and NG-SGD's ``max_change`` (None:
    the tool's default)."""
    s = rec.spec
    return (s.size == size and s.network == "dnn" and s.workers == run.workers
            and s.mixing == MIX_OF[run.mix] and s.average_every == run.average_every
            and s.minibatch == run.minibatch and s.scheduler == run.scheduler
            and s.optimizer == run.optimizer and s.init == ("rbm" if run.pretrain else "random")
            and s.scale_lr == scale_lr and s.max_change == max_change and s.block_lr == 1.0
            and s.seed == FIRST_SEED
            and s.epoch_average == run.epoch_average
            and s.mix_variant == (variant or ("" if run.epoch_average else NO_EPOCH_AVERAGE)))


def cv_rank(rec: Record) -> tuple:
    """How a learning-rate grid is decided on the CV set: the highest CV frame accuracy of the
    model kept, then the lower CV loss, then the lower rate."""
    k = rec.result["kept"]
    return (k["cv_acc"], -k["cv_loss"], -rec.spec.learn_rate)


def _chosen(recs: list[Record]) -> Optional[Record]:
    return max(recs, key=cv_rank, default=None)


def roles(group: str, roles_size: Size, records: list[Record], size: str,
          decode: str) -> dict[str, Optional[StoredRun]]:
    """Role -> the stored run playing it (None when the store has none)."""
    out = {}
    for role, run in group_runs(group, roles_size).items():
        rec = _chosen([r for r in records if _matches(r, run, size)])
        out[role] = with_seeds(rec, records, decode) if rec is not None else None
    return out


def blstm_roles(records: list[Record], size: str, decode: str,
                workers: tuple[int, ...]) -> dict[str, Optional[StoredRun]]:
    """seed002.blstm_claims' roles: the BLSTM at 1 worker, with model averaging and BMUF-NBM at
    ``workers``, and the sigmoid DNN at 1 worker (CV-chosen rate), all at seed 777 and on the
    same input."""
    def pick(network: str, n: int, mixing: str) -> Optional[StoredRun]:
        found = [r for r in records if r.spec.size == size and r.spec.network == network
                 and r.spec.workers == n and r.spec.mixing == mixing and r.spec.seed == FIRST_SEED
                 and r.spec.average_every == 10 and r.spec.scale_lr is None
                 and r.spec.max_change is None and not r.spec.mix_variant
                 and (network == "blstm" or (r.spec.init == "rbm" and r.spec.optimizer == "ngsgd"
                                             and r.spec.minibatch == 256
                                             and r.spec.scheduler == "newbob"))]
        rec = _chosen(found)
        return with_seeds(rec, records, decode) if rec is not None else None
    out = {"blstm/1": pick("blstm", 1, "average"), "dnn/1": pick("dnn", 1, "average")}
    for n in workers:
        out[f"blstm-ma/{n}"] = pick("blstm", n, "average")
        out[f"blstm-nbm/{n}"] = pick("blstm", n, "bmuf-nbm")
    return out


def variant_pairs(group: str, role: str, variant: str, roles_size: Size, records: list[Record],
                  size: str, decode: str) -> tuple[Optional[StoredRun], Optional[StoredRun]]:
    """(the run of ``role`` in ``group``'s table with nnetmix's default mixing, the same run
    with ``variant``, :attr:`~bench.experiments.spec.RunSpec.mix_variant`: '1bit', 'overlap',
    'noepochavg' ...) at the same learning rate: the variant's rate chosen on the CV set where
    it has a grid. Either is None when the store lacks it."""
    run = group_runs(group, roles_size)[role]
    rec = _chosen([r for r in records if _matches(r, run, size, variant)])
    return _with_twin(rec, records, decode, mix_compression="none", overlap_mixing=False,
                      epoch_average=True)


def lr_scale_pair(roles_size: Size, records: list[Record], size: str, decode: str
                  ) -> tuple[Optional[StoredRun], Optional[StoredRun]]:
    """(model averaging at seed 001's N with the learning rate x N, the same run at x 1) at the
    x 1 run's base rate (its CV-chosen one where it has a grid). Either is None when the store
    lacks it."""
    return _averaging_pair(roles_size, records, size, decode, scale_lr=False)


def max_change_pair(roles_size: Size, records: list[Record], size: str, decode: str
                    ) -> tuple[Optional[StoredRun], Optional[StoredRun]]:
    """(model averaging at seed 001's N with NG-SGD's max-change limit as the tool has it, the
    same run with the limit off, ``max_change = 0``) at the second run's rate. Either is None
    when the store lacks it."""
    return _averaging_pair(roles_size, records, size, decode, max_change=0.0)


def _averaging_pair(roles_size: Size, records: list[Record], size: str, decode: str, **setting
                    ) -> tuple[Optional[StoredRun], Optional[StoredRun]]:
    """(model averaging at seed 001's N with the tool's defaults, the same run with one
    ``setting`` of :func:`_matches` (``scale_lr`` or ``max_change``, whose default is None))."""
    run = group_runs("seed001", roles_size)[f"avg10/{roles_size.n001}"]
    rec = _chosen([r for r in records if _matches(r, run, size, **setting)])
    return _with_twin(rec, records, decode, **dict.fromkeys(setting))


def _with_twin(rec: Optional[Record], records: list[Record], decode: str, **fields
               ) -> tuple[Optional[StoredRun], Optional[StoredRun]]:
    """(the stored run whose spec is ``rec``'s with ``fields``, ``rec``'s run), each None when
    absent."""
    if rec is None:
        return None, None
    twin = dataclasses.replace(rec.spec, **fields).key()
    base = next((r for r in records if r.spec.key() == twin), None)
    return ((with_seeds(base, records, decode) if base is not None else None),
            with_seeds(rec, records, decode))
