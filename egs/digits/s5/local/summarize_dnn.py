#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Markdown table of DNN experiment directories: epochs, CV frame accuracy, WER, time.

Reads what steps/nnet/train.sh and steps/nnet/decode.sh leave in each directory:
log/train_scheduler.log (the ITERATION lines), decode_test/wer_* (the best %WER line) and,
when local/run_parallel_variants.sh wrote it, stages67_seconds.
Usage: local/summarize_dnn.py <dnn-dir> [<dnn-dir> ...]
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ITER = re.compile(r"ITERATION (\d+): .* cv ([\d.]+)%, nnet (accepted|rejected)")
WER = re.compile(r"%WER ([\d.]+) \[ (\d+) / (\d+)")


def summarize(d: Path) -> str:
    log = d / "log" / "train_scheduler.log"
    if not log.exists():
        raise SystemExit(f"summarize_dnn.py: no such file {log}")
    iters = [m.groups() for m in ITER.finditer(log.read_text(errors="replace"))]
    accepted = [float(cv) for _, cv, what in iters if what == "accepted"]
    best = None
    for f in sorted((d / "decode_test").glob("wer_*")):
        m = WER.search(f.read_text())
        if m and (best is None or float(m.group(1)) < best[0]):
            best = (float(m.group(1)), f"{m.group(2)}/{m.group(3)}", f.name)
    secs = d / "stages67_seconds"
    t = f"{int(secs.read_text())} s" if secs.exists() else "-"
    wer = f"{best[0]:.2f} ({best[1]}, {best[2]})" if best else "-"
    cv = f"{accepted[-1]:.2f}%" if accepted else "-"
    return f"| {d.name} | {len(iters)} ({len(iters) - len(accepted)} rejected) | {cv} | {wer} | {t} |"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 1
    print("| experiment | epochs | CV frame accuracy | %WER (errors, best LMWT_WIP) | stages 6-7 wall |")
    print("|---|---:|---:|---|---:|")
    for d in argv:
        print(summarize(Path(d)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
