#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Markdown table of DNN experiment directories: epochs, CV frame accuracy, WER, time.

Reads what steps/nnet/train.sh and steps/nnet/decode.sh leave in each directory through
nnetmix.train.runlog (log/train_scheduler.log, decode_test/wer_*, and stages67_seconds when
local/run_parallel_variants.sh wrote it).
Usage: local/summarize_dnn.py <dnn-dir> [<dnn-dir> ...]
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys
from pathlib import Path

# the nnetmix tree (egs/digits/s5/local -> ../../../..), in case nnetmix is not installed
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), *[".."] * 4))

from nnetmix.train.runlog import read_run  # noqa: E402


def summarize(d: Path) -> str:
    run = read_run(d)
    if run is None:
        raise SystemExit(f"summarize_dnn.py: {d}: no finished training (no final.nnet or "
                         "log/train_scheduler.log)")
    t = f"{run.seconds} s" if run.seconds is not None else "-"
    wer = (f"{run.wer:.2f} ({run.wer_errors}/{run.wer_words}, {run.wer_file})"
           if run.wer is not None else "-")
    return (f"| {d.name} | {run.epochs} ({run.rejected} rejected) | {run.cv_acc:.2f}% | {wer} "
            f"| {t} |")


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 1
    print("| experiment | epochs | CV frame accuracy | %WER (errors, best LMWT_WIP) "
          "| DNN stages wall |")
    print("|---|---:|---:|---|---:|")
    for d in argv:
        print(summarize(Path(d)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
