# Copyright 2026 nnetmix authors. Apache 2.0.
"""The results store, ``bench/results/<task>/``: what the repository keeps of every finished run,
small text only (no models, features or lattices), so that the tables can be rebuilt from it
alone and a campaign started again on a fresh clone skips every run it holds.

Layout::

    bench/results/<task>/prereqs-<size>.md    the prerequisites' fingerprint (rows, digest)
    bench/results/<task>/conditions-<size>.txt.gz   the test set's per-utterance conditions
                                              (harbour: noise, SNR, reverberation), copied
                                              from the prerequisites once
    bench/results/<task>/<run-id>/result.json spec, command, machine, load, seconds, model md5,
                                              CV loss / accuracy kept, WER per test condition
    bench/results/<task>/<run-id>/epochs.tsv  per epoch: learning rate, train / CV loss and
                                              frame accuracy, verdict, job seconds split
    bench/results/<task>/<run-id>/{ref,hyp}.<decode>.txt.gz   the best-scoring decode's
                                              reference and hypothesis per utterance (what
                                              compare-wer.py's tests need)
    bench/results/<task>/bench-<name>-<digest>/result.json, and the benchmark's own output
                                              (allreduce.json, scaling.txt): a plan's
                                              ``[[bench]]`` entry (bench/experiments/benches.py)

A record is written into ``.<run-id>.tmp/`` and renamed into place whole; a record without its
``result.json`` (cut short some other way) is an error naming it, never read as a run.
"""
from __future__ import annotations

import dataclasses
import gzip
import io
import json
import os
import shutil
from pathlib import Path
from typing import Iterator, Optional

from bench.experiments.spec import BenchSpec, PlanError, RunSpec, bench_from_dict, spec_from_dict

__all__ = ["StoreError", "Record", "BenchRecord", "Store", "EPOCH_COLUMNS", "BENCH_PREFIX"]

#: the directory names of benchmark records
BENCH_PREFIX = "bench-"

EPOCH_COLUMNS = ("epoch", "learn_rate", "train_loss", "train_acc", "cv_loss", "cv_acc",
                 "verdict", "train_wall", "cv_wall", "optimize", "aggregate", "validate", "io",
                 "frames", "minibatches", "mixes", "limited", "updates")
#: the columns of records stored before NG-SGD's max-change counts were kept ("limited" of
#: "updates": rank 0's layer updates scaled down by --max-change-per-sample, of all of them);
#: read with those two empty
EPOCH_COLUMNS_BEFORE_LIMITED = EPOCH_COLUMNS[:-2]
_INT_COLUMNS = ("epoch", "frames", "minibatches", "mixes", "limited", "updates")
RECORD_FILES = ("result.json", "epochs.tsv")


class StoreError(Exception):
    """A results store that cannot be read or written as it is."""


@dataclasses.dataclass
class Record:
    """One stored run: its result.json as a dict, its epochs, and where it lives."""

    path: Path
    result: dict
    epochs: list[dict]

    @property
    def run_id(self) -> str:
        return self.result["run_id"]

    @property
    def spec(self) -> RunSpec:
        return spec_from_dict({**self.result["spec"], "name": self.result.get("name", "")},
                              f"{self.path}/result.json")

    def tokens(self, decode: str, which: str) -> list[tuple[str, list[str]]]:
        """(utterance, words) of the stored reference (``which`` = "ref") or hypothesis."""
        f = self.path / f"{which}.{decode}.txt.gz"
        if not f.exists():
            raise StoreError(f"{f}: no such file (the record has no {decode} decode)")
        out = []
        for line in gzip.decompress(f.read_bytes()).decode().splitlines():
            key, *words = line.split()
            out.append((key, words))
        return out


@dataclasses.dataclass
class BenchRecord:
    """One stored benchmark: its result.json and the files its script wrote."""

    path: Path
    result: dict

    @property
    def spec(self) -> BenchSpec:
        return bench_from_dict({**self.result["bench"], "name": self.result.get("name", "")},
                               f"{self.path}/result.json")

    def text(self, name: str) -> str:
        f = self.path / name
        if not f.exists():
            raise StoreError(f"{f}: no such file (the benchmark record has no {name})")
        return f.read_text()


def _gzip(data: bytes) -> bytes:
    """gzip without a timestamp or name, so the same text gives the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as g:
        g.write(data)
    return buf.getvalue()


def _tsv(rows: list[dict]) -> str:
    lines = ["\t".join(EPOCH_COLUMNS)]
    for r in rows:
        lines.append("\t".join("" if r.get(c) is None else str(r[c]) for c in EPOCH_COLUMNS))
    return "\n".join(lines) + "\n"


def _read_tsv(path: Path) -> list[dict]:
    lines = path.read_text().splitlines()
    header = tuple(lines[0].split("\t")) if lines else ()
    if header not in (EPOCH_COLUMNS, EPOCH_COLUMNS_BEFORE_LIMITED):
        raise StoreError(f"{path}: not an epochs table (header {EPOCH_COLUMNS!r} expected)")
    rows = []
    for n, line in enumerate(lines[1:], 2):
        cells = line.split("\t")
        if len(cells) != len(header):
            raise StoreError(f"{path}:{n}: {len(cells)} columns, expected {len(header)}")
        row = dict.fromkeys(EPOCH_COLUMNS)
        for c, v in zip(header, cells):
            row[c] = None if v == "" else (v if c == "verdict" else
                                           (int(v) if c in _INT_COLUMNS else float(v)))
        rows.append(row)
    return rows


class Store:
    """``bench/results/<task>/`` for one task."""

    def __init__(self, root: Path, task: str):
        self.root = Path(root)
        self.dir = self.root / task
        self.task = task

    # ---- prerequisites
    def prereqs_path(self, size: str) -> Path:
        return self.dir / f"prereqs-{size}.md"

    def stored_prereqs(self, size: str) -> Optional[str]:
        """The digest stored for this size's prerequisites, None when none is stored yet."""
        p = self.prereqs_path(size)
        if not p.exists():
            return None
        for line in p.read_text().splitlines():
            if line.startswith("digest: "):
                return line.split()[1]
        raise StoreError(f"{p}: no 'digest: <md5>' line (not written by bench/campaign.py?)")

    def write_prereqs(self, size: str, text: str) -> Path:
        p = self.prereqs_path(size)
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, p)
        return p

    # ---- the test set's per-utterance conditions
    def conditions_path(self, size: str) -> Path:
        return self.dir / f"conditions-{size}.txt.gz"

    def write_conditions(self, size: str, text: str) -> Path:
        """The test set's per-utterance conditions as the prerequisites made them (harbour's
        data/test/utt2cond: noise kind, SNR, reverberation, gain), gzipped, written whole."""
        p = self.conditions_path(size)
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_bytes(_gzip(text.encode()))
        os.replace(tmp, p)
        return p

    def conditions(self, size: str) -> Optional[dict[str, list[str]]]:
        """utterance -> its condition fields, None when the store has none for this size."""
        p = self.conditions_path(size)
        if not p.exists():
            return None
        out = {}
        for n, line in enumerate(gzip.decompress(p.read_bytes()).decode().splitlines(), 1):
            key, *fields = line.split()
            if not fields:
                raise StoreError(f"{p}: line {n}: utterance {key} has no condition fields")
            out[key] = fields
        return out

    # ---- records
    def path(self, run_id: str) -> Path:
        return self.dir / run_id

    def has(self, run_id: str) -> bool:
        return (self.path(run_id) / "result.json").exists()

    def stale_temporaries(self) -> list[Path]:
        """Records an interrupted write left half-made (never read; the driver removes them)."""
        return sorted(self.dir.glob(".*.tmp")) if self.dir.exists() else []

    def write(self, result: dict, epochs: list[dict], texts: dict[str, bytes]) -> Path:
        """Write one record whole: into ``.<id>.tmp/``, then renamed to ``<id>/``. ``texts``
        maps file names (``ref.<decode>.txt``...) to their bytes, stored gzipped."""
        files = {f"{name}.gz": _gzip(data) for name, data in texts.items()}
        files["epochs.tsv"] = _tsv(epochs).encode()
        return self._write_whole(result, files)

    def write_bench(self, result: dict, files: dict[str, bytes]) -> Path:
        """Write one benchmark record whole (its outputs as they are, small text files)."""
        if not result["run_id"].startswith(BENCH_PREFIX):
            raise StoreError(f"{result['run_id']}: a benchmark id starts with {BENCH_PREFIX}")
        return self._write_whole(result, files)

    def _write_whole(self, result: dict, files: dict[str, bytes]) -> Path:
        run_id = result["run_id"]
        final = self.path(run_id)
        if final.exists():
            raise StoreError(f"{final}: exists already (a run is stored once)")
        tmp = self.dir / f".{run_id}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        try:
            for name, data in sorted(files.items()):
                (tmp / name).write_bytes(data)
            (tmp / "result.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
            os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final

    def read_bench(self, bench_id: str) -> BenchRecord:
        d = self.path(bench_id)
        try:
            result = json.loads((d / "result.json").read_text())
        except FileNotFoundError:
            raise StoreError(f"{d}: incomplete benchmark record (no result.json; remove the "
                             f"directory to run it again)") from None
        except json.JSONDecodeError as e:
            raise StoreError(f"{d}/result.json: not JSON ({e})") from None
        if result.get("run_id") != bench_id:
            raise StoreError(f"{d}/result.json: run_id {result.get('run_id')!r} is not the "
                             f"directory's name")
        rec = BenchRecord(d, result)
        try:
            rec.spec
        except (PlanError, KeyError, TypeError) as e:
            raise StoreError(f"{d}/result.json: not a benchmark record ({e})") from None
        for name in result.get("files", []):
            if not (d / name).exists():
                raise StoreError(f"{d}: incomplete benchmark record (no {name})")
        return rec

    def benches(self) -> Iterator[BenchRecord]:
        """Every stored benchmark, in id order."""
        if not self.dir.exists():
            return
        for d in sorted(p for p in self.dir.iterdir() if p.is_dir()
                        and p.name.startswith(BENCH_PREFIX)):
            yield self.read_bench(d.name)

    def read(self, run_id: str) -> Record:
        d = self.path(run_id)
        for f in RECORD_FILES:
            if not (d / f).exists():
                raise StoreError(f"{d}: incomplete run record (no {f}; remove the directory to "
                                 f"run it again)")
        try:
            result = json.loads((d / "result.json").read_text())
        except json.JSONDecodeError as e:
            raise StoreError(f"{d}/result.json: not JSON ({e})") from None
        if result.get("run_id") != run_id:
            raise StoreError(f"{d}/result.json: run_id {result.get('run_id')!r} is not the "
                             f"directory's name")
        try:
            spec = spec_from_dict(result.get("spec", {}), f"{d}/result.json")
        except PlanError as e:
            raise StoreError(str(e)) from None
        stored = self.stored_prereqs(spec.size)
        if stored is not None and result.get("prereqs") != stored:
            raise StoreError(f"{d}: made on other prerequisites (digest {result.get('prereqs')}, "
                             f"{self.prereqs_path(spec.size).name} has {stored}): results from "
                             f"different prerequisites are never mixed (move it to a store of "
                             f"its own)")
        return Record(d, result, _read_tsv(d / "epochs.tsv"))

    def records(self) -> Iterator[Record]:
        """Every stored run, in run-id order."""
        if not self.dir.exists():
            return
        for d in sorted(p for p in self.dir.iterdir() if p.is_dir()
                        and not p.name.startswith((".", BENCH_PREFIX))):
            yield self.read(d.name)
