# Copyright 2026 nnetmix authors. Apache 2.0.
"""The FSDD results store: ``results/<split>/`` in the repository keeps, of a finished split of
run.sh, exactly the small text files local/make_results.py reads, so the leave-one-speaker-out
table can be finished over several sessions on different machines (exp/ does not outlive one).

What make_results.py reads of ``exp/<split>/`` (and so what :func:`stored_files` copies):
``stage_seconds/N`` (stages 0-9), per GMM (mono, tri1-tri3) and per DNN directory
``decode_test/wer_*`` (all of them: the best is chosen among them), ``decode_test/scoring/
test_filt.txt`` and the best one's ``scoring/<LMWT>.<WIP>.tra.filt`` (the texts
nnetmix.score.compare_decode_dirs compares); per DNN directory ``log/train_scheduler.log*`` (the
PRERUN and ITERATION lines nnetmix.train.runlog reads), ``stage_seconds/{10,11}``, the
utterance ids of ``cv.scp`` (as ``cv_utts``: the scp's feature paths are this machine's) and,
for the ``final.nnet`` that tells read_run a DNN finished, an empty ``.done``. No model is read.

Each stored split also holds ``provenance`` (:class:`Provenance`): the commit run.sh recorded,
the machine (cores, CPU model), the day the split finished, run.sh's command lines and the
recipe's fingerprint, the md5 of the code run.sh runs at that commit (run.sh, conf/,
local/fsdd_*.py but this store's own code, comment and blank lines left out so a comment does
not part two versions).
make_results.py pools only folds of one fingerprint. Read from exp/, the same record is computed
on the spot, so RESULTS.md reads the same from exp/ and from the store.
"""
from __future__ import annotations

import dataclasses
import datetime
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

from nnetmix.data.io import c_sorted
from nnetmix.errors import DataDirError
from nnetmix.score import ScoreError, best_scoring
from nnetmix.train.recipe_report import machine_description

__all__ = ["GMM_DIRS", "PROVENANCE", "Provenance", "dnn_names", "cv_utts", "recipe_md5",
           "provenance", "stored_files", "store_split"]

#: run.sh's GMM directories, in training order.
GMM_DIRS = ("mono", "tri1", "tri2", "tri3")
#: stages whose time is the split's own (exp/<split>/stage_seconds/N) and a DNN directory's.
SPLIT_STAGES, DNN_STAGES = tuple(range(10)), (10, 11)
#: the provenance record's file name in a stored split
PROVENANCE = "provenance"


def dnn_names(split_dir: Path) -> list[str]:
    """The DNN directories of a split (not the RBMs of stage 9: dnn_pretrain, dnn_pretrain_fmllr)."""
    return c_sorted(p.name for p in split_dir.glob("dnn_*")
                    if p.is_dir() and not p.name.startswith("dnn_pretrain"))


def cv_utts(dnn_dir: Path) -> Optional[list[str]]:
    """Newbob's CV utterances: the store's ``cv_utts``, or the keys of train.sh's ``cv.scp``."""
    for name in ("cv_utts", "cv.scp"):
        if (dnn_dir / name).is_file():
            return [line.split(" ", 1)[0] for line in (dnn_dir / name).read_text().splitlines()]
    return None


def _git(recipe_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(recipe_dir), *args], capture_output=True, text=True,
                          check=True).stdout


def recipe_md5(recipe_dir: Path, commit: str) -> str:
    """md5 of the code run.sh runs (run.sh, conf/*, local/fsdd_*.py but this store) at
    ``commit`` of the checkout holding ``recipe_dir``, comment and blank lines left out;
    ``unknown`` when git cannot read that commit (not a checkout, or a commit it does not
    have)."""
    rev = commit.split()[0] if commit.split() else ""
    try:
        names = _git(recipe_dir, "ls-tree", "-r", "--full-name", "--name-only", rev, "--",
                     "run.sh", "conf", "local").split()
        h = hashlib.md5()
        for name in sorted(names):
            base = name.rsplit("/", 2)
            if not (base[-1] == "run.sh" or base[-2] == "conf"
                    or (base[-2] == "local" and base[-1].startswith("fsdd_")
                        and base[-1] != "fsdd_store.py")):  # the store changes no result
                continue
            code = [x for x in _git(recipe_dir, "show", f"{rev}:{name}").splitlines()
                    if x.strip() and not x.lstrip().startswith("#")]
            h.update(f"{'/'.join(base[-2:])}\n".encode())
            h.update(("\n".join(code) + "\n").encode())
        return h.hexdigest() if names else "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


@dataclasses.dataclass
class Provenance:
    """Where a split's results come from."""

    commit: str            #: exp/<split>/commit (run.sh's; "+changes": uncommitted changes)
    machine: str           #: cores and CPU model of the machine that ran it
    finished: str          #: the day of the split's last stage (YYYY-MM-DD, UTC)
    run_opts: list[str]    #: run.sh's command lines that ran its stages
    recipe: str            #: :func:`recipe_md5` at ``commit``

    @property
    def version(self) -> str:
        """What two folds must share to be pooled: the recipe fingerprint (the commit when the
        fingerprint is unknown)."""
        return self.recipe if self.recipe != "unknown" else f"commit {self.commit}"

    def text(self) -> str:
        return "".join(f"{k} {v}\n" for k, vs in dataclasses.asdict(self).items()
                       for v in (vs if isinstance(vs, list) else [vs]))

    @classmethod
    def read(cls, path: Path) -> "Provenance":
        fields: dict = {"run_opts": []}
        for n, line in enumerate(path.read_text().splitlines(), 1):
            key, _, value = line.partition(" ")
            if key not in {f.name for f in dataclasses.fields(cls)}:
                raise DataDirError(f"{path}:{n}: unknown field '{key}' (expected commit, "
                                   "machine, finished, run_opts or recipe)")
            if key == "run_opts":
                fields[key].append(value)
            else:
                fields[key] = value
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in fields]
        if missing:
            raise DataDirError(f"{path}: no {', '.join(missing)} line (written by "
                               "local/store_split.py)")
        return cls(**fields)


def _stage_files(split_dir: Path) -> list[Path]:
    return sorted(split_dir.glob("stage_seconds/[0-9]*")) + sorted(
        split_dir.glob("dnn_*/stage_seconds/[0-9]*"))


def provenance(split_dir: Path, run_opts: Optional[list[str]] = None) -> Provenance:
    """The stored record of ``split_dir``, or, for a split under exp/, the record computed now:
    its commit, this machine, the day of its last stage file, its run_opts (``run_opts`` when
    run.sh did not keep them) and the fingerprint of the recipe holding exp/ at that commit."""
    if (split_dir / PROVENANCE).is_file():
        return Provenance.read(split_dir / PROVENANCE)
    commit = (split_dir / "commit").read_text().strip() if (split_dir / "commit").is_file() \
        else "unknown"
    stamps = [p.stat().st_mtime for p in _stage_files(split_dir)]
    finished = (datetime.datetime.fromtimestamp(max(stamps), datetime.timezone.utc)
                .date().isoformat() if stamps else "unknown")
    opts = split_dir / "run_opts"
    if run_opts is None:
        run_opts = opts.read_text().splitlines() if opts.is_file() else ["unknown"]
    return Provenance(commit, machine_description(), finished, run_opts,
                      recipe_md5(split_dir.resolve().parent.parent, commit))


def stored_files(split_dir: Path) -> list[str]:
    """The files of a finished split that make_results.py reads, relative to ``split_dir`` (see
    the module docstring); DataDirError naming the first thing missing when it is not finished."""
    def need(rel: str, why: str) -> None:
        if not (split_dir / rel).is_file():
            raise DataDirError(f"{split_dir}: not finished: no {rel} ({why})")

    files = ["commit"] if (split_dir / "commit").is_file() else []
    for n in SPLIT_STAGES:
        need(f"stage_seconds/{n}", f"run.sh's stage {n} has not ended")
        files.append(f"stage_seconds/{n}")
    dnns = [d for d in dnn_names(split_dir) if (split_dir / d / "final.nnet").is_file()
            and all((split_dir / d / f"stage_seconds/{n}").is_file() for n in DNN_STAGES)]
    if not dnns:
        raise DataDirError(f"{split_dir}: not finished: no dnn_*/ with final.nnet and "
                           "stage_seconds/10 and 11 (run.sh's stages 10-11 have not ended)")
    for system in (*GMM_DIRS, *dnns):
        dec = f"{system}/decode_test"
        try:
            best = best_scoring(split_dir / dec)
        except ScoreError as e:     # no wer_* files, or not the best one's texts
            raise DataDirError(f"{split_dir}: not finished: {e}") from None
        if best.ref is None:
            raise DataDirError(f"{split_dir}: not finished: no {dec}/scoring/test_filt.txt")
        files += [f"{dec}/{p.name}" for p in sorted((split_dir / dec).glob("wer_*"))]
        files += [os.path.relpath(best.ref, split_dir), os.path.relpath(best.hyp, split_dir)]
    for d in dnns:
        need(f"{d}/log/train_scheduler.log", "steps/nnet/train.sh's log")
        files += [f"{d}/{p.relative_to(split_dir / d)}"
                  for p in sorted((split_dir / d / "log").glob("train_scheduler.log*"))]
        files += [f"{d}/stage_seconds/{n}" for n in DNN_STAGES]
    return files


def store_split(split_dir: Path, store: Path, run_opts: Optional[list[str]] = None) -> Path:
    """Copy the finished ``split_dir`` (exp/<split>) into ``store/<split>``: :func:`stored_files`,
    ``cv_utts`` and ``.done`` per DNN, and ``provenance``; written in a temporary directory of
    ``store`` and renamed, replacing an earlier copy only once the new one is whole."""
    if not split_dir.is_dir():
        raise DataDirError(f"no such directory {split_dir} (run ./run.sh first)")
    files = stored_files(split_dir)
    record = provenance(split_dir, run_opts)
    if record.run_opts == ["unknown"]:
        raise DataDirError(f"{split_dir}: no run_opts (a run.sh older than its run_opts record): "
                           "give run.sh's command line with --run-opts")
    dest = store / split_dir.name
    tmp = store / f".{split_dir.name}.tmp.{os.getpid()}"
    old = store / f".{split_dir.name}.old.{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for rel in files:
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(split_dir / rel, tmp / rel)
        for d in {rel.split("/", 1)[0] for rel in files if rel.startswith("dnn_")}:
            (tmp / d / ".done").write_text("")      # final.nnet was there: the DNN finished
            utts = cv_utts(split_dir / d)
            if utts is not None:
                (tmp / d / "cv_utts").write_text("".join(f"{u}\n" for u in utts))
        (tmp / PROVENANCE).write_text(record.text())
        if dest.exists():
            dest.rename(old)
        try:
            tmp.rename(dest)
        except OSError:
            if old.exists():
                old.rename(dest)         # the earlier copy back in place
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if dest.exists():
            shutil.rmtree(old, ignore_errors=True)
    return dest
