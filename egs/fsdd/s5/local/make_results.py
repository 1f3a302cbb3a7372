#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""RESULTS.md of the FSDD recipe, from what run.sh left under exp/: one section per split.

For each split directory exp/<split>/ (``official``, ``loso_<speaker>``): the monophone GMM's
best WER line (exp/<split>/mono/decode_test/wer_*), every finished DNN directory
(exp/<split>/dnn_*: epochs, CV frame accuracy and best WER, read through
nnetmix.train.runlog as egs/digits/s5/local/summarize_dnn.py reads them) and the wall time of
each stage (exp/<split>/stage_seconds/N, and for stages 6-7 <dnn-dir>/stage_seconds/N, written
by run.sh). The header names the commit, the
machine (cores, CPU model) and the date. Nothing here is typed by hand: rerun it after run.sh.

Usage: ``local/make_results.py [--exp exp] [--out RESULTS.md] [--note TEXT]``; the file is written to a
temporary name and renamed.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from nnetmix.data.io import c_sorted, write_lines
from nnetmix.errors import DataDirError
from nnetmix.train.recipe_report import best_wer_line, machine_line, stage_seconds
from nnetmix.train.runlog import best_wer, read_run

from local_script import run_script, script_parser

__all__ = ["STAGES", "split_section", "results", "machine_line"]

#: run.sh's stages, for the timing table.
STAGES = ("data preparation", "dictionary, lang, G", "MFCC + CMVN", "monophone GMM + alignment",
          "monophone decoding", "RBM pretraining", "DNN training", "DNN decoding")


def _split_title(name: str) -> str:
    if name == "official":
        return "Official split: takes 0-4 of every speaker and digit are the test set"
    if name.startswith("loso_"):
        return f"Leave one speaker out: test speaker {name[5:]}"
    return name


def _seconds(d: Path) -> dict[int, int]:
    """Stage number -> wall seconds from ``d/stage_seconds/N`` (run.sh's stage_done)."""
    return {n: t.seconds for n, t in stage_seconds(d).items()}


def _cv_note(dnn_dir: Path) -> str:
    """Newbob's CV set, from the DNN's cv.scp (utterance ids are ``<speaker>_<digit>_<take>``)."""
    try:
        utts = [line.split(" ", 1)[0] for line in (dnn_dir / "cv.scp").read_text().splitlines()]
    except OSError:
        return ""
    spk = sorted({u.split("_", 1)[0] for u in utts})
    who = f"held-out speaker {spk[0]}" if len(spk) == 1 else f"{len(spk)} training speakers"
    return f"; CV set {len(utts)} utterances, {who}"


def split_section(split_dir: Path) -> list[str]:
    """The markdown section of one split directory (empty when nothing is decoded)."""
    rows, lines = [], []
    times = [(n, STAGES[n], t) for n, t in sorted(_seconds(split_dir).items()) if n < 6]
    mono = best_wer_line(split_dir / "mono" / "decode_test")
    if mono:
        best = best_wer(split_dir / "mono" / "decode_test")
        rows.append(f"| monophone GMM (`mono`) | 3-4 | {best[0]:.2f} ({best[1]}/{best[2]}) "
                    f"| {best[3]} | - |")
        lines.append(mono)
    for d in c_sorted(p.name for p in split_dir.glob("dnn_*") if p.name != "dnn_pretrain"):
        run = read_run(split_dir / d)
        if run is None or run.wer is None:
            continue
        rows.append(f"| DNN (`{d}`) | 5-7 | {run.wer:.2f} ({run.wer_errors}/{run.wer_words}) "
                    f"| {run.wer_file} | {run.epochs} epochs ({run.rejected} rejected), "
                    f"CV frame accuracy {run.cv_acc:.2f}%{_cv_note(split_dir / d)} |")
        lines.append(best_wer_line(split_dir / d / "decode_test"))
        times += [(n, f"{STAGES[n]} (`{d}`)", t) for n, t in sorted(_seconds(split_dir / d).items())]
    if not rows:
        return []
    commit = split_dir / "commit"
    made = (f"Run at commit {commit.read_text().strip()} (`{split_dir}/commit`, written by run.sh)."
            if commit.is_file() else "")
    out = [f"## {_split_title(split_dir.name)} (`{split_dir}`)", "", *([made, ""] if made else []),
           "| system | stages | %WER (errors/words) | best wer_LMWT_WIP | notes |",
           "| --- | --- | ---: | --- | --- |", *rows, "", "```", *lines, "```", ""]
    if times:
        out += ["| stage | what | wall seconds |", "| ---: | --- | ---: |"]
        out += [f"| {n} | {what} | {t} |" for n, what, t in times]
        out += [f"| | all of the above | {sum(t for _, _, t in times)} |", ""]
    return out


def results(exp: Path, note: str = "") -> list[str]:
    """The whole RESULTS.md."""
    if not exp.is_dir():
        raise DataDirError(f"no such directory {exp} (run ./run.sh first)")
    dirs = sorted((d for d in exp.iterdir() if d.is_dir() and d.name != "make_mfcc"),
                  key=lambda d: (d.name != "official", d.name))     # the official split first
    sections = [split_section(d) for d in dirs]
    sections = [s for s in sections if s]
    if not sections:
        raise DataDirError(f"{exp}: no decoded split (no */mono/decode_test/wer_*): run ./run.sh "
                           "through stage 4 first")
    head = ["# egs/fsdd/s5 results", "",
            "The Free Spoken Digit Dataset (recorded speech, 6 speakers, 8 kHz; CC BY-SA 4.0, "
            "Zohar Jackson and contributors), isolated-word grammar over the ten digits, CMUdict "
            "lexicon, 8 kHz MFCC + per-speaker CMVN. Written by `local/make_results.py` from "
            "`exp/`; the WER is the best over local/score.sh's LM-weight / insertion-penalty "
            "sweep (with one word per utterance and a uniform grammar the sweep changes little). "
            "With 300 or 500 test words one error is 0.2-0.3% absolute: a difference between two "
            "rows is not significant unless `compare-wer.py --decode-dirs=true <dir-a> <dir-b>` "
            "says so.",
            "", machine_line() + (f" {note}" if note else ""), ""]
    return head + [line for s in sections for line in s]


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--exp", default="exp", help="the experiment directory of run.sh")
    p.add_argument("--out", default="RESULTS.md", help="the markdown file to write")
    p.add_argument("--note", default="", help="a sentence after the machine line (e.g. the load)")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    lines = results(Path(args.exp), args.note)
    write_lines(args.out, lines)
    print(f"{args.prog}: wrote {args.out}")


if __name__ == "__main__":
    run_script(get_args(), main)
