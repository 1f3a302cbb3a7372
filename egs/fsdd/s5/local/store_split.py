#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Copy a finished split of run.sh from exp/<split>/ into the results store results/<split>/,
which is kept in the repository: exp/ does not outlive the machine that ran it, and
local/make_results.py writes RESULTS.md from the store (local/fsdd_store.py says which files and
why). Only the small text files make_results.py reads are copied, with a provenance record
(commit, machine, day, run.sh's command lines, recipe fingerprint). An unfinished split (a stage
of 0-11 not ended) is refused with one line. The copy is made in a temporary directory of the
store and renamed, replacing an earlier copy of the split.

Usage: ``local/store_split.py [--exp exp] [--store results] [--run-opts "./run.sh ..."] <split>``
e.g.: ``local/store_split.py loso_nicolas``, then ``local/make_results.py`` and commit
results/loso_nicolas and RESULTS.md. --run-opts gives run.sh's command line for a split run by
a run.sh that did not keep it in exp/<split>/run_opts.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
from pathlib import Path

from fsdd_store import store_split
from local_script import run_script, script_parser


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--exp", default="exp", help="run.sh's experiment directory")
    p.add_argument("--store", default="results", help="the results store")
    p.add_argument("--run-opts", action="append", default=None,
                   help="run.sh's command line (repeatable), when exp/<split>/run_opts is absent")
    p.add_argument("split", help="the split: official or loso_<speaker>")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    dest = store_split(Path(args.exp) / args.split, Path(args.store), args.run_opts)
    files = sum(1 for p in dest.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    print(f"{args.prog}: stored {args.exp}/{args.split} in {dest} ({files} files, {size} bytes)")


if __name__ == "__main__":
    run_script(get_args(), main)
