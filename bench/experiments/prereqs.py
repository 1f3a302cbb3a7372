# Copyright 2026 nnetmix authors. Apache 2.0.
"""The prerequisites of a task's runs: built by the recipe itself in a work directory outside the
clone, fingerprinted, and checked against the fingerprint the results store holds, so that
results from different prerequisites never share one table.

The work directory is a recipe directory of its own: links to the recipe's run.sh, cmd.sh,
path.sh, local/ and conf/ and to the repository's steps/, utils/ and bin/, with its own corpus,
data/ and exp/. ``.prefix_done`` marks the
prerequisites finished; ``prereqs.md`` caches their fingerprint.

The fingerprint is :func:`nnetmix.utils.fingerprint.recipe_fingerprint`'s rows (corpus,
features, GMMs, alignments, decodes' scores, RBMs), less what runs make (``exp/dnn_*``, the
``data/*_tr90``/``*_cv10`` CV split);
its digest is the md5 of those rows. Numeric-environment rows are listed but not digested: the
recipes are bit-for-bit reproducible across machines of the kind, so a machine that computes
other bits shows up in the file rows themselves.
"""
from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from bench.experiments.procs import end_groups, owner, write_pid
from bench.experiments.tasks import Task

__all__ = ["PrereqError", "link_recipe", "build", "fingerprint_text", "digest_of", "fingerprint"]

DONE = ".prefix_done"
CACHE = "prereqs.md"
PID = "prereqs.pid"


class PrereqError(Exception):
    """Prerequisites that could not be built, or that are not the ones the store's results
    were made on."""


def link_recipe(task: Task, repo: Path, work: Path) -> None:
    """Make ``work`` a recipe directory of ``task`` (links; its outputs stay its own)."""
    recipe = (repo / task.recipe).resolve()
    if not (recipe / "run.sh").exists():
        raise PrereqError(f"{recipe}/run.sh: no such file (task {task.name}'s recipe)")
    work.mkdir(parents=True, exist_ok=True)
    (work / "logs").mkdir(exist_ok=True)
    for f in ("run.sh", "cmd.sh", "path.sh", "local", "conf"):
        _link(recipe / f, work / f)
    for f in ("steps", "utils", "bin"):
        target = recipe / f if (recipe / f).exists() else repo / f
        _link(target.resolve(), work / f)


def _link(target: Path, link: Path) -> None:
    if link.is_symlink() and os.readlink(link) == str(target):
        return
    tmp = link.with_name(link.name + ".lnk")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(target)
    os.replace(tmp, link)


def build(task: Task, size: str, work: Path, nj: int, log=print) -> None:
    """Run the recipe's prerequisite stages in ``work`` unless ``.prefix_done`` says they are
    finished (run.sh's stages skip what is done, so an interrupted build resumes).

    ``prereqs.pid`` names the ``run.sh`` in progress: a second driver on the same directory
    stops with one line while it lives (two builds would write the same files), and SIGINT or
    SIGTERM to this driver ends it (its process group) before the driver exits, so that no
    build goes on unowned."""
    if (work / DONE).exists():
        return
    pid_file = work / PID
    if (pid := owner(pid_file)) != 0:
        raise PrereqError(f"{work}: the prerequisites are being built by another process (pid "
                          f"{pid}, named in {pid_file}); let it finish, or stop it first")
    logfile = work / "logs" / "prefix.log"
    for args in task.prefix_commands(size):
        cmd = ["./run.sh", "--nj", str(nj)] + args
        log(f"prerequisites: {' '.join(cmd)} (log: {logfile})")
        with open(logfile, "a") as f:
            f.write(f"# {' '.join(cmd)}\n")
            f.flush()
            rc = _run_owned(cmd, work, f, pid_file, log)
        if rc != 0:
            raise PrereqError(f"{work}: the prerequisites failed ({' '.join(cmd)} exited {rc}; "
                              f"log is in {logfile})")
    (work / DONE).write_text("")
    cached = work / CACHE
    if cached.exists():
        cached.unlink()


def _run_owned(cmd: list[str], work: Path, out, pid_file: Path, log) -> int:
    """``cmd`` in a process group of its own, named in ``pid_file`` while it runs; the first
    SIGINT or SIGTERM meanwhile ends the group and then this process (exit 128 + the signal),
    a second one is ignored (the recipe's steps give back their locks on the first)."""
    got: list = []
    proc: list = []

    def stop(signum, _frame):
        if got:
            return
        got.append(signum)
        if proc:
            end_groups(proc)
            pid_file.unlink(missing_ok=True)
            log(f"stopped by signal {signum} in the prerequisites; the next start resumes them")
            sys.exit(128 + signum)
    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        proc.append(subprocess.Popen(cmd, cwd=work, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True))
        write_pid(pid_file, proc[0].pid)
        if got:                # it came while the group started
            stop(got.pop(), None)
        return proc[0].wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        pid_file.unlink(missing_ok=True)


def _rows(work: Path) -> list[tuple[str, str]]:
    from nnetmix.utils.fingerprint import recipe_fingerprint
    return [(what, md5) for what, md5 in recipe_fingerprint(str(work)) if _prereq_row(what)]


def _prereq_row(what: str) -> bool:
    """Not a run's: its exp/dnn_* directory (the RBMs are a prerequisite) or the CV split a
    run makes of data/train (digits' stage 8)."""
    if what.startswith("exp/dnn_"):
        return what.startswith("exp/dnn_pretrain")
    return not what.split("/")[1].endswith(("_tr90", "_cv10")) if what.startswith("data/") \
        else True


def digest_of(rows: list[tuple[str, str]]) -> str:
    """md5 of the rows in name order (records made when the fingerprint listed exp/
    directories by modification time keep their digests)."""
    return hashlib.md5("".join(f"{w} {m}\n" for w, m in sorted(rows)).encode()).hexdigest()


def fingerprint_text(task: Task, size: str, rows: list[tuple[str, str]],
                     env: list[tuple[str, str]]) -> str:
    from nnetmix.utils.fingerprint import format_fingerprint
    stages = ", ".join(f"{a}-{b}" for a, b in task.prefix_stages)
    return (f"# Prerequisites of the {task.name} runs, size {size}\n\n"
            f"Written by bench/campaign.py: {task.recipe}/run.sh stages {stages} with the size's "
            f"options ({' '.join(task.size(size).options) or 'the recipe defaults'}). Every run "
            f"in this directory was made on exactly these files; the digest is the md5 of the "
            f"file rows.\n\n"
            f"{format_fingerprint(rows, env)}\n"
            f"digest: {digest_of(rows)}\n")


def fingerprint(task: Task, size: str, work: Path) -> tuple[str, str]:
    """(digest, prereqs.md text) of the finished prerequisites in ``work``, cached in
    ``work/prereqs.md`` (recomputed when .prefix_done is newer)."""
    cached, done = work / CACHE, work / DONE
    if not done.exists():
        raise PrereqError(f"{work}: the prerequisites are not built ({DONE} is missing)")
    if cached.exists() and cached.stat().st_mtime >= done.stat().st_mtime:
        text = cached.read_text()
    else:
        from nnetmix.utils.fingerprint import environment
        print(f"campaign.py: fingerprinting the prerequisites in {work}",
              file=sys.stderr)
        text = fingerprint_text(task, size, _rows(work), environment())
        tmp = cached.with_name(CACHE + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, cached)
    digest = next(line.split()[1] for line in text.splitlines() if line.startswith("digest: "))
    return digest, text
