#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""RESULTS.md of the FSDD recipe, from what run.sh left under exp/: one section per split.

For each split directory exp/<split>/ (``official``, ``loso_<speaker>``): the monophone GMM's
best WER line (exp/<split>/mono/decode_test/wer_*), every finished DNN directory
(exp/<split>/dnn_*: epochs, CV frame accuracy and best WER, read through
nnetmix.train.runlog as egs/digits/s5/local/summarize_dnn.py reads them) and the wall time of
each stage (exp/<split>/stage_seconds/N, and for stages 6-7 <dnn-dir>/stage_seconds/N, written
by run.sh). Every WER has its 95% bootstrap interval, and each DNN is compared with the
monophone GMM on the same test set by bin/compare-wer.py's library
(nnetmix.score.compare_decode_dirs: the bootstrap interval of the difference and MAPSSWE);
a difference is called significant only when both tests say so. When several speakers have been
left out, their test sets (each speaker once) are also pooled and compared as one. The header
names the commit, the machine (cores, CPU model) and the date. Nothing here is typed by hand:
rerun it after run.sh.

Usage: ``local/make_results.py [--exp exp] [--out RESULTS.md] [--note TEXT]``; the file is written to a
temporary name and renamed.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
from pathlib import Path

from nnetmix.data.io import c_sorted, write_lines
from nnetmix.errors import DataDirError
from nnetmix.score import CompareOptions, Comparison, best_scoring, compare_decode_dirs, \
    compare_systems, format_p, iter_token_table, read_token_table
from nnetmix.train.recipe_report import best_wer_line, machine_line, stage_seconds
from nnetmix.train.runlog import best_wer, read_run

from local_script import run_script, script_parser

__all__ = ["STAGES", "OPTS", "split_section", "pooled_section", "results", "machine_line"]

#: run.sh's stages, for the timing table.
STAGES = ("data preparation", "dictionary, lang, G", "MFCC + CMVN", "monophone GMM + alignment",
          "monophone decoding", "RBM pretraining", "DNN training", "DNN decoding")

#: compare-wer.py's defaults: 95% intervals, 10000 resamplings of the utterances, seed 777.
OPTS = CompareOptions()


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


def _ci(low: float, high: float) -> str:
    return f"[{low:.2f}, {high:.2f}]"


def _verdict(c: Comparison) -> str:
    """'significant: B better' only when MAPSSWE and the bootstrap interval both say so."""
    t, b = c.mapsswe, c.bootstrap
    if t.significant and b.significant:
        return f"**significant**: {c.names[1] if b.diff.value < 0 else c.names[0]} better"
    if t.significant or b.significant:
        return ("not significant (MAPSSWE p < 0.05 but the interval contains 0)" if t.significant
                else "not significant (the interval excludes 0 but MAPSSWE p >= 0.05)")
    return "not significant (a tie)"


def comparison_row(what: str, c: Comparison) -> str:
    """One row of a comparison table: B - A with its interval, MAPSSWE and the verdict."""
    b, t = c.bootstrap, c.mapsswe
    return (f"| {what} | {c.errors[0]} vs {c.errors[1]} of {c.ref_words} | {b.diff.value:+.2f} "
            f"| {_ci(b.diff.low, b.diff.high)} | {format_p(t.p_value)} ({t.num_segments} segment"
            f"{'' if t.num_segments == 1 else 's'}) "
            f"| {_verdict(c)} |")


COMPARISON_HEAD = ["| comparison (B - A) | errors A vs B of words | %WER B - A | 95% interval "
                   "| MAPSSWE p | verdict |", "| --- | ---: | ---: | --- | ---: | --- |"]


SUMMARY_HEAD = ["| split | test words | monophone %WER [95% interval] | DNN | DNN %WER [95% "
                "interval] | DNN - monophone [95% interval] | MAPSSWE p | verdict |",
                "| --- | ---: | --- | --- | --- | --- | ---: | --- |"]


def summary_row(split: str, dnn: str, c: Comparison) -> str:
    """One line of the summary table at the top: both WERs and their comparison."""
    b, t = c.bootstrap, c.mapsswe
    return (f"| {split} | {c.ref_words} | {b.wer_a.value:.2f} {_ci(b.wer_a.low, b.wer_a.high)} "
            f"| `{dnn}` | {b.wer_b.value:.2f} {_ci(b.wer_b.low, b.wer_b.high)} "
            f"| {b.diff.value:+.2f} {_ci(b.diff.low, b.diff.high)} | {format_p(t.p_value)} "
            f"| {_verdict(c)} |")


def split_section(split_dir: Path, summary: list | None = None) -> list[str]:
    """The markdown section of one split directory (empty when nothing is decoded); each DNN's
    :func:`summary_row` is appended to ``summary`` when given."""
    rows, lines, comps = [], [], []
    times = [(n, STAGES[n], t) for n, t in sorted(_seconds(split_dir).items()) if n < 6]
    mono_dir = split_dir / "mono" / "decode_test"
    mono = best_wer_line(mono_dir)
    if mono:
        best = best_wer(mono_dir)
        # the monophone's own interval: the bootstrap of compare-wer.py against itself
        own = compare_decode_dirs(mono_dir, mono_dir, opts=OPTS)[0].bootstrap.wer_a
        rows.append(f"| monophone GMM (`mono`) | 3-4 | {best[0]:.2f} ({best[1]}/{best[2]}) "
                    f"| {_ci(own.low, own.high)} | {best[3]} | - |")
        lines.append(mono)
    for d in c_sorted(p.name for p in split_dir.glob("dnn_*") if p.name != "dnn_pretrain"):
        run = read_run(split_dir / d)
        if run is None or run.wer is None:
            continue
        ci = "-"
        if mono:
            c = compare_decode_dirs(mono_dir, split_dir / d / "decode_test",
                                    names=("mono", d), opts=OPTS)[0]
            ci = _ci(c.bootstrap.wer_b.low, c.bootstrap.wer_b.high)
            comps.append(comparison_row(f"`{d}` - `mono`", c))
            if summary is not None:
                summary.append(summary_row(f"`{split_dir.name}`", d, c))
        rows.append(f"| DNN (`{d}`) | 5-7 | {run.wer:.2f} ({run.wer_errors}/{run.wer_words}) "
                    f"| {ci} | {run.wer_file} | {run.epochs} epochs ({run.rejected} rejected), "
                    f"CV frame accuracy {run.cv_acc:.2f}%{_cv_note(split_dir / d)} |")
        lines.append(best_wer_line(split_dir / d / "decode_test"))
        times += [(n, f"{STAGES[n]} (`{d}`)", t) for n, t in sorted(_seconds(split_dir / d).items())]
    if not rows:
        return []
    commit = split_dir / "commit"
    made = (f"Run at commit {commit.read_text().strip()} (`{split_dir}/commit`, written by run.sh)."
            if commit.is_file() else "")
    out = [f"## {_split_title(split_dir.name)} (`{split_dir}`)", "", *([made, ""] if made else []),
           "| system | stages | %WER (errors/words) | 95% interval | best wer_LMWT_WIP | notes |",
           "| --- | --- | ---: | --- | --- | --- |", *rows, ""]
    if comps:
        out += [*COMPARISON_HEAD, *comps, ""]
    out += ["```", *lines, "```", ""]
    if times:
        out += ["| stage | what | wall seconds |", "| ---: | --- | ---: |"]
        out += [f"| {n} | {what} | {t} |" for n, what, t in times]
        out += [f"| | all of the above | {sum(t for _, _, t in times)} |", ""]
    return out


def _pooled_texts(decode_dirs: list[Path]) -> tuple[list, dict]:
    """The references and best hypotheses of several decode directories, as one test set."""
    refs, hyps, seen = [], {}, set()
    for d in decode_dirs:
        best = best_scoring(d)
        if best.ref is None:
            raise DataDirError(f"{d}: no scoring/test_filt.txt (run local/score.sh)")
        for key, words in iter_token_table(f"ark:{best.ref}"):
            if key in seen:
                raise DataDirError(f"{best.ref}: utterance {key} is in the test sets of two "
                                   "folds, so they cannot be pooled (each left-out speaker's "
                                   "recordings are in one fold only)")
            seen.add(key)
            refs.append((key, words))
        hyps.update(read_token_table(f"ark:{best.hyp}"))
    return refs, hyps


def pooled_section(exp: Path, dnn: str = "dnn_rbm_w2", summary: list | None = None
                   ) -> list[str]:
    """The leave-one-speaker-out folds with both the monophone and ``dnn`` decoded, pooled:
    each fold's test set is one speaker, so the pooled test set holds each speaker's recordings
    once, every one decoded by models that never heard its speaker. Empty with fewer than two
    such folds; the :func:`summary_row` is appended to ``summary`` when given."""
    folds = [d for d in sorted(exp.glob("loso_*"))
             if best_wer(d / "mono" / "decode_test") and best_wer(d / dnn / "decode_test")]
    if len(folds) < 2:
        return []
    refs, mono = _pooled_texts([d / "mono" / "decode_test" for d in folds])
    _, hyp = _pooled_texts([d / dnn / "decode_test" for d in folds])
    c = compare_systems(refs, mono, hyp, ("pooled references", "pooled mono", f"pooled {dnn}"),
                        ("mono", dnn), OPTS)
    b = c.bootstrap
    speakers = ", ".join(d.name[5:] for d in folds)
    if summary is not None:
        summary.append(summary_row(f"{len(folds)} left-out speakers pooled", dnn, c))
    return [f"## Leave one speaker out, {len(folds)} folds pooled ({speakers})", "",
            f"Each fold's test set is its left-out speaker, so together they hold each of these "
            f"speakers' {c.num_utterances // len(folds)} recordings once; each fold's own models "
            f"decoded them (`exp/loso_*/mono` and `exp/loso_*/{dnn}`).", "",
            "| system | %WER (errors/words) | 95% interval |", "| --- | ---: | --- |",
            f"| monophone GMM (`mono`) | {b.wer_a.value:.2f} ({c.errors[0]}/{c.ref_words}) "
            f"| {_ci(b.wer_a.low, b.wer_a.high)} |",
            f"| DNN (`{dnn}`) | {b.wer_b.value:.2f} ({c.errors[1]}/{c.ref_words}) "
            f"| {_ci(b.wer_b.low, b.wer_b.high)} |", "",
            *COMPARISON_HEAD, comparison_row(f"`{dnn}` - `mono`, pooled", c), ""]


def results(exp: Path, note: str = "") -> list[str]:
    """The whole RESULTS.md."""
    if not exp.is_dir():
        raise DataDirError(f"no such directory {exp} (run ./run.sh first)")
    dirs = sorted((d for d in exp.iterdir() if d.is_dir() and d.name != "make_mfcc"),
                  key=lambda d: (d.name != "official", d.name))     # the official split first
    summary: list[str] = []
    sections = [split_section(d, summary) for d in dirs] + [pooled_section(exp, summary=summary)]
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
            "With 300 or 500 test words one error is 0.2-0.3% absolute. Intervals are 95% "
            "bootstrap intervals (Bisani and Ney 2004; 10000 resamplings of the utterances, seed "
            "777); each DNN is compared with the monophone GMM on the same test set as "
            "`compare-wer.py --decode-dirs=true <mono-decode-dir> <dnn-decode-dir>` compares "
            "them (nnetmix.score.compare_decode_dirs), and a difference is called significant "
            "only when MAPSSWE's p is below 0.05 and the interval of the difference excludes 0; "
            "otherwise it is not significant, a tie, whichever WER is lower.",
            "", machine_line() + (f" {note}" if note else ""), ""]
    if summary:
        head += ["## Summary: each DNN against the monophone GMM", "", *SUMMARY_HEAD, *summary,
                 ""]
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
