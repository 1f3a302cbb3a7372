# Copyright 2026 nnetmix authors. Apache 2.0.
"""One experiment run as a small typed spec, its stable id, and the plan files that list runs.

A :class:`RunSpec` says everything that makes one DNN training + decoding run differ from another
on the same prerequisites (task and size, network, input, workers, mixing, averaging period or
BMUF block, block momentum, what a mix sends and whether it overlaps the next block, update rule
and NG-SGD's max-change limit, initialisation, learning rate, schedule, training seed).
Its id (:func:`run_id`) is a readable prefix plus a digest of the spec *and* of the prerequisites'
fingerprint, so a run made on other prerequisites can never be taken for this one.

A plan file (TOML, ``bench/plans/*.toml``) holds ``task``, ``size``, a ``[defaults]`` table and
``[[run]]`` tables (and for digits, ``include``: the seed groups of bench/experiments/plan.py at
the plan's size), and ``[[bench]]`` tables: a benchmark script and its options (a
:class:`BenchSpec`: bench/allreduce.py for seed 004, bench/scaling.py for the scaling model),
whose output is stored beside the runs; a list value in a run table is a grid (the cross
product of its lists, in the order written), e.g. ``learn_rate = [0.004, 0.008, 0.016]`` or
``seed = [1, 2, 3]``; ``learn_rate = "cv"`` is the rate the CV set chooses from that method's grid
earlier in the plan (the run waits until the grid is stored), or with ``cv_grid = "<name>"`` from
the grid of the runs of that name (an ablation at its baseline's chosen rate, so that it differs
in one thing). An unknown key, a value of the wrong type or a spec that contradicts itself is a
:class:`PlanError` naming the file and the run.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import tomllib
from pathlib import Path
from typing import Any, Optional

from nnetmix.parallel.buffers import ParallelError
from nnetmix.parallel.compress import COMPRESSIONS, check_compression
from nnetmix.parallel.overlap import check_overlap
from nnetmix.parallel.rank_models import check_epoch_average

__all__ = ["RunSpec", "BenchSpec", "Plan", "PlanError", "MIXINGS", "NETWORKS", "BENCHES",
           "CV_CHOSEN", "run_id", "bench_id", "load_plan", "spec_from_dict", "bench_from_dict",
           "method_key", "cv_grid_of", "NO_EPOCH_AVERAGE", "seeds_epoch_average"]

#: ``learn_rate = "cv"`` in a plan: the rate the CV set chose from the same method's grid in the
#: plan (:func:`bench.experiments.campaign.resolve`); the run waits until that grid is stored
CV_CHOSEN = -1.0

#: mixing methods: model averaging through an exact all-reduce, butterfly and ring mixing
#: (seed 000), BMUF with classical or Nesterov block momentum (seed 002)
MIXINGS = ("average", "butterfly", "ring", "bmuf-cbm", "bmuf-nbm")
#: each mixing as nnet-train-mpi.py's --mixing names it (BMUF filters the exact all-reduce), so
#: that a spec's mix compression and overlap go through the tool's own checks
TOOL_MIXING = {"average": "allreduce", "butterfly": "butterfly", "ring": "ring",
               "bmuf-cbm": "allreduce", "bmuf-nbm": "allreduce"}
#: the mix variant (:attr:`RunSpec.mix_variant`) of ``epoch_average = false``
NO_EPOCH_AVERAGE = "noepochavg"
NETWORKS = ("dnn", "relu", "blstm")
INITS = ("rbm", "random")
OPTIMIZERS = ("ngsgd", "sgd")
SCHEDULERS = ("newbob", "exponential")
INPUTS = ("fmllr", "mfcc")
#: benchmark entries: name -> the script (bench/experiments/benches.py runs and stores them);
#: the first two serve the seeds' claims, the others the speed plan (bench/plans/speed.toml)
BENCHES = {"allreduce": "bench/allreduce.py", "scaling": "bench/scaling.py",
           "feature_speed": "bench/feature_speed.py",
           "train_throughput": "bench/train_throughput.py",
           "rbm_throughput": "bench/rbm_throughput.py",
           "ngsgd_overhead": "bench/ngsgd_overhead.py",
           "decode_speed": "bench/decode_speed.py",
           "determinize_speed": "bench/determinize_speed.py"}
#: options through which the campaign points a benchmark at its output (never in a plan)
OUTPUT_OPTIONS = ("--out-dir", "--json", "--out")
#: a digits plan's ``include`` groups that are benchmarks, and the benchmark each one is
INCLUDED_BENCHES = {"seed004": "allreduce", "scaling": "scaling"}


class PlanError(Exception):
    """A plan file or run spec that cannot be run as written."""


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One run. Defaults are the harbour recipe's DNN (stage 10) with every epoch on the MPI
    trainer, so that every run logs the same timing line."""

    task: str
    size: str
    name: str = ""              #: the plan's label for tables (not part of the id)
    network: str = "dnn"        #: dnn (sigmoid), relu (<ParametricRelu>) or blstm
    input: str = "fmllr"        #: fmllr (tri3's features and alignments) or mfcc
    workers: int = 1
    mixing: str = "average"
    average_every: int = 10     #: minibatches between mixes; the BMUF block size tau
    block_momentum: Optional[float] = None   #: BMUF eta; None: 1 - 1/N (nnetmix's default)
    block_lr: float = 1.0       #: BMUF zeta
    mix_compression: str = "none"   #: train.sh --mix-compression: none | fp16 | bf16 | 1bit | topk
    overlap_mixing: bool = False    #: train.sh --overlap-mixing: a mix applied one block late
    epoch_average: bool = True      #: train.sh --epoch-average: false keeps each worker's model
    scale_lr: Optional[bool] = None  #: learning rate x N; None: true for averaging, false for BMUF
    optimizer: str = "ngsgd"
    #: NG-SGD's --max-change-per-sample (nnet2's limit on each layer's step); None: the tool's
    #: default, 0.075; 0 turns the limit off
    max_change: Optional[float] = None
    init: str = "rbm"           #: rbm (stage 9's DBN) or random
    learn_rate: float = 0.008
    minibatch: int = 256
    scheduler: str = "newbob"
    max_epochs: int = 20        #: Newbob's cap (its stopping rule usually ends the run earlier)
    epochs: int = 8             #: exponential schedule's epochs
    seed: int = 777             #: train.sh --seed (shuffling and initialisation)
    #: with ``learn_rate = "cv"``: the plan name of the grid whose CV choice the run takes ('':
    #: its own method's grid); not part of the id, which has the rate chosen
    cv_grid: str = ""

    def check(self, where: str = "run spec", max_workers: Optional[int] = None) -> None:
        """Raise :class:`PlanError` for a value out of range or options that contradict."""
        def bad(msg: str) -> PlanError:
            return PlanError(f"{where}: {msg}")
        for field, allowed in (("mixing", MIXINGS), ("network", NETWORKS), ("init", INITS),
                               ("optimizer", OPTIMIZERS), ("scheduler", SCHEDULERS),
                               ("input", INPUTS), ("mix_compression", COMPRESSIONS)):
            if getattr(self, field) not in allowed:
                raise bad(f"{field} {getattr(self, field)!r} is not one of {', '.join(allowed)}")
        for field in ("workers", "average_every", "minibatch", "max_epochs", "epochs"):
            if getattr(self, field) < 1:
                raise bad(f"{field} must be at least 1 (got {getattr(self, field)})")
        if not (self.learn_rate > 0 or self.learn_rate == CV_CHOSEN):
            raise bad(f"learn_rate must be positive or \"cv\" (got {self.learn_rate})")
        if self.cv_grid and not self.deferred:
            raise bad(f"cv_grid = {self.cv_grid!r} names the grid a learn_rate = \"cv\" run "
                      f"takes its rate from, but learn_rate is {self.learn_rate:g}")
        bmuf = self.mixing.startswith("bmuf")
        if not bmuf and (self.block_momentum is not None or self.block_lr != 1.0):
            raise bad(f"block_momentum / block_lr are BMUF settings, but mixing is "
                      f"{self.mixing!r} (use mixing = \"bmuf-cbm\" or \"bmuf-nbm\")")
        if self.block_momentum is not None and not 0.0 <= self.block_momentum < 1.0:
            raise bad(f"block_momentum must be in [0, 1) (got {self.block_momentum})")
        if self.workers == 1 and self.mixing != "average":
            raise bad(f"mixing {self.mixing!r} needs more than one worker")
        if self.workers == 1 and self.mix_variant:
            raise bad(f"{self._variant_option()} needs more than one worker (one worker never "
                      f"mixes)")
        try:    # the training tool's own refusals (nnet-train-mpi.py --mix-compression ...)
            check_compression(self.mix_compression, 0.01, TOOL_MIXING[self.mixing])
            check_overlap(self.overlap_mixing, TOOL_MIXING[self.mixing], "mpi",
                          self.mix_compression)
            check_epoch_average(self.epoch_average, bmuf, self.mix_compression,
                                self.overlap_mixing)
        except ParallelError as e:
            raise bad(f"mixing {self.mixing!r}, {self._variant_option()}: the training tool "
                      f"refuses it ({e})") from None
        if self.mixing == "butterfly" and self.workers & (self.workers - 1):
            raise bad(f"butterfly mixing needs a power-of-two number of workers "
                      f"(got {self.workers})")
        if max_workers is not None and self.workers > max_workers:
            raise bad(f"{self.workers} workers but the {self.task} {self.size} training set has "
                      f"only {max_workers} utterances to share among them")
        if self.max_change is not None and self.optimizer != "ngsgd":
            raise bad(f"max_change is NG-SGD's --max-change-per-sample, but optimizer is "
                      f"{self.optimizer!r}")
        if self.max_change is not None and self.max_change < 0:
            raise bad(f"max_change must be 0 (off) or positive (got {self.max_change})")
        if self.init == "rbm" and self.network != "dnn":
            raise bad(f"init \"rbm\" is for the sigmoid dnn (network {self.network!r} starts "
                      f"from random weights: set init = \"random\")")

    def key(self) -> dict[str, Any]:
        """The fields that make a run (everything but its label and where a "cv" rate comes
        from)."""
        d = dataclasses.asdict(self)
        d.pop("name")
        d.pop("cv_grid")
        return d

    @property
    def mix_variant(self) -> str:
        """'' for nnetmix's default mixing (the models, exchanged between blocks, averaged
        exactly at each epoch's end); else what a mix sends ('1bit', 'fp16', ...), 'overlap' or
        :data:`NO_EPOCH_AVERAGE` (the tool takes one of them at a time)."""
        if self.mix_compression != "none":
            return self.mix_compression
        if self.overlap_mixing:
            return "overlap"
        return "" if self.epoch_average else NO_EPOCH_AVERAGE

    def _variant_option(self) -> str:
        return ", ".join(([f"mix_compression = {self.mix_compression!r}"]
                          if self.mix_compression != "none" else [])
                         + (["overlap_mixing = true"] if self.overlap_mixing else [])
                         + ([] if self.epoch_average else ["epoch_average = false"]))

    def variant_label(self) -> str:
        """'1bit updates', 'overlapped', 'no epoch average' or '' for tables, after the
        mixing."""
        v = self.mix_variant
        return {"": "", "overlap": "overlapped",
                NO_EPOCH_AVERAGE: "no epoch average"}.get(v, f"{v} updates")

    def label(self) -> str:
        """'16 workers, bmuf-nbm every 10, lr 0.008, seed 777' for tables (', 1bit updates'
        or ', overlapped' after the mixing when it has them)."""
        what = "1 worker" if self.workers == 1 else f"{self.workers} workers, {self.mixing}"
        if self.workers > 1:
            what += f" every {self.average_every}"
            if self.mix_variant:
                what += f", {self.variant_label()}"
        lr = "chosen on CV" if self.learn_rate == CV_CHOSEN else f"{self.learn_rate:g}"
        return f"{what}, lr {lr}{self.max_change_label()}, seed {self.seed}"

    def max_change_label(self) -> str:
        """', no max-change' or ', max-change 0.1' where the spec sets NG-SGD's limit, else
        ''."""
        if self.max_change is None:
            return ""
        return ", no max-change" if self.max_change == 0 else f", max-change {self.max_change:g}"

    @property
    def deferred(self) -> bool:
        """Its learning rate is the one the CV set will choose (``learn_rate = "cv"``)."""
        return self.learn_rate == CV_CHOSEN


def seeds_epoch_average(mixing: str) -> bool:
    """Whether the seeds ended each epoch of ``mixing`` with the exact average: seed 000's
    butterfly and ring mixing have none (each node goes on from its own model)."""
    return mixing not in ("butterfly", "ring")


def method_key(spec: RunSpec) -> str:
    """What a learning-rate grid varies over: every field but the rate and the seed."""
    d = spec.key()
    d.pop("learn_rate")
    d.pop("seed")
    return json.dumps(d, sort_keys=True)


def cv_grid_of(spec: RunSpec, runs) -> list[RunSpec]:
    """The grid a ``learn_rate = "cv"`` run takes its rate from, among ``runs``: the runs at
    the first seed with a rate of their own named ``spec.cv_grid``, or else of ``spec``'s
    method."""
    return [s for s in runs if not s.deferred and s.seed == RunSpec.seed
            and (s.name == spec.cv_grid if spec.cv_grid else method_key(s) == method_key(spec))]


def run_id(spec: RunSpec, prereqs: str) -> str:
    """``<network>-w<N>-<mixing>[-<variant>]-<digest>`` (variant: ``1bit``, ``overlap``, ...,
    :attr:`RunSpec.mix_variant`): the digest (10 hex digits of sha1) covers the
    spec's fields that differ from their defaults (task and size always), not its label, and
    the prerequisites' fingerprint digest ``prereqs``. So a field added later, whose default is
    the behaviour before it, leaves every stored id as it was (mix_compression,
    overlap_mixing, epoch_average and max_change were); a default is never changed."""
    defaults = {f.name: f.default for f in dataclasses.fields(RunSpec)}
    key = {k: v for k, v in spec.key().items()
           if k in ("task", "size") or v != defaults[k]}
    blob = json.dumps({"spec": key, "prereqs": prereqs}, sort_keys=True)
    digest = hashlib.sha1(blob.encode()).hexdigest()[:10]
    variant = f"-{spec.mix_variant}" if spec.mix_variant else ""
    return f"{spec.network}-w{spec.workers}-{spec.mixing}{variant}-{digest}"


@dataclasses.dataclass(frozen=True)
class BenchSpec:
    """One benchmark entry: a script of :data:`BENCHES` and its options. It measures the
    machine, not the prerequisites, so it runs before them and its id leaves them out."""

    task: str
    bench: str                  #: a key of BENCHES
    args: tuple[str, ...] = ()  #: the script's options (the output option is the campaign's)
    name: str = ""              #: the plan's label (not part of the id)
    #: the cores it needs: on a smaller machine it waits (a timing of more processes than cores
    #: measures time sharing); not part of the id, since it does not change what is measured
    min_cores: int = 1

    def key(self) -> dict[str, Any]:
        return {"task": self.task, "bench": self.bench, "args": list(self.args)}

    def label(self) -> str:
        return f"{BENCHES[self.bench]} {' '.join(self.args)}".rstrip()


def bench_id(spec: BenchSpec) -> str:
    """``bench-<bench>-<digest>``: 10 hex digits of sha1 over the task, script and options."""
    blob = json.dumps(spec.key(), sort_keys=True)
    return f"bench-{spec.bench}-{hashlib.sha1(blob.encode()).hexdigest()[:10]}"


def bench_from_dict(d: dict[str, Any], where: str = "bench entry") -> BenchSpec:
    """A benchmark entry from a plan's ``[[bench]]`` table or a stored result.json."""
    unknown = sorted(set(d) - {"task", "bench", "args", "name", "min_cores"})
    if unknown:
        raise PlanError(f"{where}: unknown option {unknown[0]!r} (known: args, bench, "
                        f"min_cores, name)")
    if d.get("bench") not in BENCHES:
        raise PlanError(f"{where}: bench = {d.get('bench')!r} is not one of "
                        f"{', '.join(BENCHES)}")
    args = d.get("args", [])
    if not isinstance(args, (list, tuple)) or not all(isinstance(a, str) for a in args):
        raise PlanError(f"{where}: args must be a list of strings (the script's options)")
    for opt in OUTPUT_OPTIONS:
        if any(a == opt or a.startswith(opt + "=") for a in args):
            raise PlanError(f"{where}: args: {opt} is the campaign's (the output is stored)")
    if not isinstance(d.get("name", ""), str):
        raise PlanError(f"{where}: name must be a string")
    min_cores = d.get("min_cores", 1)
    if type(min_cores) is not int or min_cores < 1:
        raise PlanError(f"{where}: min_cores must be a whole number of cores, at least 1 (got "
                        f"{min_cores!r})")
    return BenchSpec(d["task"], d["bench"], tuple(args), d.get("name", ""), min_cores)


_FIELDS = {f.name: f for f in dataclasses.fields(RunSpec)}


def _typed(name: str, value: Any, where: str) -> Any:
    """A plan value checked against the field's type (ints are accepted for floats)."""
    kind = _FIELDS[name].type
    want = {"int": int, "float": float, "str": str, "bool": bool, "Optional[float]": float,
            "Optional[bool]": bool}[kind]
    if value is None and kind.startswith("Optional"):
        return None
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise PlanError(f"{where}: {name} = {value!r} is not a {want.__name__}")
    return value


def spec_from_dict(d: dict[str, Any], where: str = "run spec") -> RunSpec:
    """A spec from a plain dict (a plan entry or a stored spec.json): unknown keys are errors."""
    unknown = sorted(set(d) - set(_FIELDS))
    if unknown:
        raise PlanError(f"{where}: unknown option {unknown[0]!r} (known: "
                        f"{', '.join(sorted(_FIELDS))})")
    for need in ("task", "size"):
        if need not in d:
            raise PlanError(f"{where}: no {need}")
    return RunSpec(**{k: _typed(k, v, where) for k, v in d.items()})


def _included(groups: list, task: str, size: str, path: Path) -> list[dict]:
    """The runs of bench/experiments/plan.py's seed groups (``include = ["seed000", ...]``)
    at a digits size, as plan entries: the digits sizes' worker counts and epochs."""
    from bench.experiments import plan as digits_plan
    if not isinstance(groups, list):
        raise PlanError(f"{path}: include must be a list of groups")
    if groups and (task != "digits" or size not in digits_plan.SIZES):
        raise PlanError(f"{path}: include is for the digits sizes "
                        f"({', '.join(digits_plan.SIZES)}), not {task} {size}")
    out = []
    for g in groups:
        if g in INCLUDED_BENCHES:
            continue
        if g not in digits_plan.TRAINING_GROUPS:
            raise PlanError(f"{path}: include: unknown group {g!r} (expected "
                            f"{', '.join(digits_plan.TRAINING_GROUPS + tuple(INCLUDED_BENCHES))})")
        sz = digits_plan.SIZES[size]
        for role, run in digits_plan.group_runs(g, sz).items():
            out.append({"name": f"{g} {role}", "workers": run.workers,
                        "mixing": digits_plan.SPEC_MIXING[run.mix],
                        "average_every": run.average_every, "minibatch": run.minibatch,
                        "scheduler": run.scheduler, "optimizer": run.optimizer,
                        "init": "rbm" if run.pretrain else "random",
                        "max_epochs": sz.max_iters, "epochs": sz.exp_epochs,
                        "epoch_average": run.epoch_average})
    return out


@dataclasses.dataclass(frozen=True)
class Plan:
    """A plan file: its runs in the order written, duplicates (same key) once."""

    path: Path
    task: str
    size: str
    runs: tuple[RunSpec, ...]
    benches: tuple[BenchSpec, ...] = ()


def load_plan(path: str | Path, size: Optional[str] = None) -> Plan:
    """Read and check a plan file; ``size`` overrides the file's ``size``."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise PlanError(f"{path}: no such plan file") from None
    except tomllib.TOMLDecodeError as e:
        raise PlanError(f"{path}: not a TOML file ({e})") from None
    unknown = sorted(set(doc) - {"task", "size", "include", "defaults", "run", "bench"})
    if unknown:
        raise PlanError(f"{path}: unknown top-level key {unknown[0]!r} (expected task, size, "
                        f"include, [defaults], [[run]], [[bench]])")
    entries = list(doc.get("run", []))
    if "task" not in doc or not isinstance(entries, list) or not isinstance(
            doc.get("bench", []), list) or not (entries or doc.get("include") or doc.get("bench")):
        raise PlanError(f"{path}: a plan needs task = \"...\" and at least one [[run]] table, "
                        f"[[bench]] table or include")
    task, size = doc["task"], size or doc.get("size", "full")
    defaults = doc.get("defaults", {})
    entries = _included(doc.get("include", []), task, size, path) + entries
    specs: dict[str, RunSpec] = {}
    for i, entry in enumerate(entries, 1):
        where = f"{path}: run {i}" + (f" ({entry['name']})" if "name" in entry else "")
        merged = {**defaults, **entry, "task": task, "size": size}
        grid = [k for k, v in merged.items() if isinstance(v, list)]
        for values in itertools.product(*(merged[k] for k in grid)):
            d = {**merged, **dict(zip(grid, values))}
            if d.get("learn_rate") == "cv":
                d["learn_rate"] = CV_CHOSEN
            spec = spec_from_dict(d, where)
            spec.check(where)
            specs.setdefault(json.dumps(spec.key(), sort_keys=True), spec)
            if spec.deferred:
                _check_cv_grid(spec, cv_grid_of(spec, specs.values()), where)
    return Plan(path, task, size, tuple(specs.values()), _benches(doc, task, size, path))


def _check_cv_grid(spec: RunSpec, grid: list[RunSpec], where: str) -> None:
    if not grid:
        raise PlanError(f"{where}: learn_rate = \"cv\", but no run before it in the plan " + (
            f"is named {spec.cv_grid!r}" if spec.cv_grid else "has this method")
            + " with a learning rate to choose from")
    if len({method_key(s) for s in grid}) > 1:
        raise PlanError(f"{where}: cv_grid = {spec.cv_grid!r} names runs of more than one "
                        f"method (a grid varies the learning rate alone)")


def _benches(doc: dict, task: str, size: str, path: Path) -> tuple[BenchSpec, ...]:
    """The plan's ``[[bench]]`` entries after the benchmarks ``include`` names (a digits
    size's bench/allreduce.py and bench/scaling.py options), each once."""
    from bench.experiments import plan as digits_plan
    entries = []
    for g in doc.get("include", []):
        if g in INCLUDED_BENCHES:
            sz = digits_plan.SIZES[size]
            entries.append({"name": g, "bench": INCLUDED_BENCHES[g],
                            "args": list(sz.allreduce_args if g == "seed004"
                                         else sz.scaling_args)})
    entries += doc.get("bench", [])
    out: dict[str, BenchSpec] = {}
    for i, entry in enumerate(entries, 1):
        where = f"{path}: bench {i}" + (f" ({entry['name']})" if isinstance(entry, dict)
                                         and "name" in entry else "")
        if not isinstance(entry, dict):
            raise PlanError(f"{where}: not a table")
        spec = bench_from_dict({**entry, "task": task}, where)
        out.setdefault(bench_id(spec), spec)
    return tuple(out.values())
