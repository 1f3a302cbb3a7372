# Copyright 2026 nnetmix authors. Apache 2.0.
"""Writes each group's table from what is finished in the work directory, then one combined
markdown file for egs/digits/s5/RESULTS.md (bench/run_experiments.sh's last step).

Usage: python3 -m bench.experiments.tables --size quick --work DIR --out DIR seed000 seed001 ...
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.experiments import seed000, seed001, seed002, seed004
from bench.experiments.plan import GROUPS, SIZES, parse_groups
from bench.experiments.report import write_atomic

__all__ = ["build_scaling", "combined", "main"]

BUILDERS = {"seed004": seed004.build, "seed000": seed000.build, "seed001": seed001.build,
            "seed002": seed002.build}


def build_scaling(work: Path, out: Path) -> str | None:
    """bench/scaling_model.py with this size's compute measurement and all-reduce fit."""
    from bench import scaling_model
    if not (work / "scaling.txt").exists():
        return None
    argv = ["--scaling-output", str(work / "scaling.txt"), "--out-dir", str(out)]
    if (work / "allreduce" / "allreduce.json").exists():
        argv += ["--allreduce-json", str(work / "allreduce" / "allreduce.json")]
    text, res = scaling_model.build(scaling_model.get_args(argv))
    scaling_model.write_outputs(out, text, res)
    return text


def combined(texts: dict, out: Path) -> Path:
    """<out>/RESULTS_experiments.md: every group's table, in GROUPS order."""
    parts = ["# Reproducing the seeds on egs/digits (bench/run_experiments.sh)", "",
             "Each section tests the claims of one seed on the digits recipe and says whether each "
             "held here, was refuted (not held) or rests on a difference that is not significant "
             "(a tie), by the rule written beside it (bench/experiments/verdict.py: WER "
             "differences through bin/compare-wer.py's MAPSSWE and bootstrap interval).", ""]
    for g in GROUPS:
        if texts.get(g):
            parts.append(texts[g])
    path = out / "RESULTS_experiments.md"
    write_atomic(path, "\n".join(parts))
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=sorted(SIZES), default="full")
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("groups", nargs="*", default=list(GROUPS))
    args = p.parse_args(argv)
    size, work, out = SIZES[args.size], Path(args.work), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    texts = {}
    for g in parse_groups(" ".join(args.groups)):
        texts[g] = build_scaling(work, out) if g == "scaling" else BUILDERS[g](size, work, out)
        print(f"tables.py: {g}: " + ("written" if texts[g] else "nothing finished yet"),
              file=sys.stderr)
    print(f"tables.py: combined: {combined(texts, out)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
