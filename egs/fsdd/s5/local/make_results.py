#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""RESULTS.md of the FSDD recipe, from what run.sh left under exp/: one section per split.

For each split directory exp/<split>/ (``official``, ``loso_<speaker>``): the best WER line of
each GMM (exp/<split>/{mono,tri1,tri2,tri3}/decode_test/wer_*), every finished DNN directory
(exp/<split>/dnn_*: epochs, CV frame accuracy and best WER, read through
nnetmix.train.runlog as egs/digits/s5/local/summarize_dnn.py reads them) and the wall time of
each stage (exp/<split>/stage_seconds/N, and for stages 10-11 <dnn-dir>/stage_seconds/N,
written by run.sh). Every WER has its 95% bootstrap interval; every system is compared with the
monophone GMM on the same test set, and each DNN with the best GMM of that test set, by
bin/compare-wer.py's library (nnetmix.score.compare_decode_dirs: the bootstrap interval of the
difference and MAPSSWE); a difference is called significant only when both tests say so. When
several speakers have been left out, their test sets (each speaker once) are also pooled and
compared as one. The header names the commit, the machine (cores, CPU model) and the date.
Nothing here is typed by hand: rerun it after run.sh.

It reads the results store by default (``--exp results``: the splits local/store_split.py
copied there from exp/, kept in the repository with the commit, machine and run.sh options of
each, local/fsdd_store.py), because exp/ holds only the splits this machine ran and RESULTS.md
must pool the folds every session ran; ``--exp exp`` reads a run before it is stored. The text
names each split's files by their exp/<split>/ paths either way, so the two read the same.
Folds of different recipe fingerprints are not pooled: that is an error.

Usage: ``local/make_results.py [--exp results] [--out RESULTS.md] [--note TEXT]``; the file is
written to a temporary name and renamed.
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

from fsdd_data_prep import SPEAKERS
from fsdd_store import cv_utts, dnn_names, provenance
from local_script import run_script, script_parser

__all__ = ["STAGES", "GMMS", "OPTS", "split_section", "pooled_section", "results",
           "machine_line"]

#: run.sh's stages, for the timing table.
STAGES = ("data preparation", "dictionary, lang, G", "MFCC + CMVN", "monophone GMM + alignment",
          "monophone decoding", "tri1 (deltas) + alignment", "tri2 (LDA+MLLT) + alignment",
          "tri3 (SAT) + fMLLR alignment", "tri1-tri3 decoding",
          "fMLLR features + RBM pretraining", "DNN training", "DNN decoding")

#: run.sh's GMMs in training order: directory, what it is, the stages that make and decode it.
GMMS = (("mono", "monophone GMM", "3-4"), ("tri1", "tri1, triphones on deltas", "5, 8"),
        ("tri2", "tri2, LDA+MLLT", "6, 8"), ("tri3", "tri3, SAT (fMLLR)", "7-8"))
DNN_STAGES = "9-11"
#: the first stage whose time is a DNN directory's own (run.sh's stage_done)
FIRST_DNN_STAGE = 10

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
    """Newbob's CV set, from the DNN's cv.scp or the store's cv_utts (utterance ids are
    ``<speaker>_<digit>_<take>``)."""
    utts = cv_utts(dnn_dir)
    if utts is None:
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


SUMMARY_HEAD = ["| split | test words | A | A %WER [95% interval] | B | B %WER [95% interval] "
                "| B - A [95% interval] | MAPSSWE p | verdict |",
                "| --- | ---: | --- | --- | --- | --- | --- | ---: | --- |"]


def summary_row(split: str, c: Comparison) -> str:
    """One line of the summary table at the top: both WERs and their comparison."""
    b, t = c.bootstrap, c.mapsswe
    return (f"| {split} | {c.ref_words} | `{c.names[0]}` | {b.wer_a.value:.2f} "
            f"{_ci(b.wer_a.low, b.wer_a.high)} | `{c.names[1]}` | {b.wer_b.value:.2f} "
            f"{_ci(b.wer_b.low, b.wer_b.high)} | {b.diff.value:+.2f} "
            f"{_ci(b.diff.low, b.diff.high)} | {format_p(t.p_value)} | {_verdict(c)} |")


def _shown(split_dir: Path) -> Path:
    """How the text names a split's directory: exp/<split>/, where run.sh wrote it, whether it is
    read from there or from the store."""
    return Path("exp") / split_dir.name


def _wer_line(split_dir: Path, decode_dir: Path) -> str:
    """best_wer_line with the directory named as :func:`_shown` names it."""
    line, path = best_wer_line(decode_dir).rsplit(" ", 1)
    return f"{line} {_shown(split_dir) / Path(path).relative_to(split_dir)}"


def provenance_line(split_dir: Path) -> str:
    """Where a split's numbers come from: commit, machine, day, run.sh's command lines, recipe
    fingerprint (local/fsdd_store.py's record)."""
    p = provenance(split_dir)
    return (f"Run at commit {p.commit} on {p.machine}, finished {p.finished}, by "
            f"{'; '.join(f'`{c}`' for c in p.run_opts)}; recipe fingerprint {p.recipe[:12]}.")


def _comparisons(names: list[str], gmms: list[str], compare) -> list[tuple[str, Comparison]]:
    """(row label, comparison) of every system but the monophone against the monophone, then of
    each DNN against the best GMM; ``compare(a, b)`` compares system b with system a."""
    out = []
    if "mono" in gmms:
        out += [(f"`{n}` - `mono`", compare("mono", n)) for n in names if n != "mono"]
    if gmms:
        best = min(gmms, key=lambda g: compare(g, g).errors[0])
        out += [(f"`{n}` - `{best}` (best GMM)", compare(best, n))
                for n in names if n not in gmms]
    return out


def split_section(split_dir: Path, summary: list | None = None) -> list[str]:
    """The markdown section of one split directory (empty when nothing is decoded); each
    comparison's :func:`summary_row` is appended to ``summary`` when given."""
    rows, lines, decode, cache = [], [], {}, {}
    times = [(n, STAGES[n], t) for n, t in sorted(_seconds(split_dir).items())
             if n < FIRST_DNN_STAGE]
    for g, what, stages in GMMS:
        d = split_dir / g / "decode_test"
        best = best_wer(d)
        if best is None:
            continue
        decode[g] = d
        # the system's own interval: the bootstrap of compare-wer.py against itself
        own = compare_decode_dirs(d, d, opts=OPTS)[0].bootstrap.wer_a
        rows.append(f"| {what} (`{g}`) | {stages} | {best[0]:.2f} ({best[1]}/{best[2]}) "
                    f"| {_ci(own.low, own.high)} | {best[3]} | - |")
        lines.append(_wer_line(split_dir, d))
    gmms = list(decode)
    for d in dnn_names(split_dir):
        run = read_run(split_dir / d)
        if run is None or run.wer is None:
            continue
        decode[d] = split_dir / d / "decode_test"
        own = compare_decode_dirs(decode[d], decode[d], opts=OPTS)[0].bootstrap.wer_a
        rows.append(f"| DNN (`{d}`) | {DNN_STAGES} | {run.wer:.2f} ({run.wer_errors}/"
                    f"{run.wer_words}) | {_ci(own.low, own.high)} | {run.wer_file} "
                    f"| {run.epochs} epochs ({run.rejected} rejected), CV frame accuracy "
                    f"{run.cv_acc:.2f}%{_cv_note(split_dir / d)} |")
        lines.append(_wer_line(split_dir, decode[d]))
        times += [(n, f"{STAGES[n]} (`{d}`)", t) for n, t in sorted(_seconds(split_dir / d).items())]
    if not rows:
        return []

    def compare(a: str, b: str) -> Comparison:
        if (a, b) not in cache:
            cache[a, b] = compare_decode_dirs(decode[a], decode[b], names=(a, b), opts=OPTS)[0]
        return cache[a, b]

    comps = _comparisons(list(decode), gmms, compare)
    if summary is not None:
        summary += [summary_row(f"`{split_dir.name}`", c) for _, c in comps]
    out = [f"## {_split_title(split_dir.name)} (`{_shown(split_dir)}`)", "",
           provenance_line(split_dir), "",
           "| system | stages | %WER (errors/words) | 95% interval | best wer_LMWT_WIP | notes |",
           "| --- | --- | ---: | --- | --- | --- |", *rows, ""]
    if comps:
        out += [*COMPARISON_HEAD, *(comparison_row(what, c) for what, c in comps), ""]
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


def check_one_version(folds: list[Path]) -> None:
    """DataDirError unless every fold was run by one recipe version (fsdd_store.Provenance's
    fingerprint of run.sh, conf/ and local/fsdd_*.py): pooling a fold of another recipe would
    mix two systems under one name."""
    first = provenance(folds[0])
    for d in folds[1:]:
        other = provenance(d)
        if other.version != first.version:
            raise DataDirError(
                f"{d}: recipe fingerprint {other.version} (commit {other.commit}) differs from "
                f"{folds[0]}'s {first.version} (commit {first.commit}): folds of two recipe "
                "versions are not pooled (rerun the older folds with this recipe and store them "
                "with local/store_split.py)")


def folds_line(dirs: list[Path]) -> str:
    """Which splits the file holds and which are still to be run."""
    have = [d.name[5:] for d in dirs if d.name.startswith("loso_")]
    todo = [s for s in SPEAKERS if s not in have]
    official = any(d.name == "official" for d in dirs)
    return (f"Leave-one-speaker-out folds here: {', '.join(have) or 'none'}"
            + (f"; still to be run: {', '.join(todo)}" if todo else "; all six")
            + f". The official split: {'here' if official else 'still to be run'}. "
            "The pooled rows pool the folds named in their section only.")


def pooled_section(exp: Path, summary: list | None = None) -> list[str]:
    """The leave-one-speaker-out folds, pooled: each fold's test set is one speaker, so the
    pooled test set holds each speaker's recordings once, every one decoded by models that never
    heard its speaker. The folds are those where every system decoded in all of them (the
    monophone, and the others decoded in at least two folds) is decoded; empty with fewer than
    two. Each comparison's :func:`summary_row` is appended to ``summary`` when given."""
    loso = sorted(exp.glob("loso_*"))
    decoded = {d: [n for n in [g for g, _, _ in GMMS] + dnn_names(d)
                   if best_wer(d / n / "decode_test")] for d in loso}
    gmm_names = [g for g, _, _ in GMMS]
    dnns = c_sorted({n for v in decoded.values() for n in v if n not in gmm_names})
    # the systems decoded in at least two folds, and the folds that hold all of them
    names = [n for n in gmm_names + dnns if sum(n in v for v in decoded.values()) >= 2]
    if "mono" not in names:
        return []
    folds = [d for d in loso if all(n in decoded[d] for n in names)]
    if len(folds) < 2:
        return []
    check_one_version(folds)
    refs, hyps = None, {}
    for n in names:
        r, hyps[n] = _pooled_texts([d / n / "decode_test" for d in folds])
        refs = refs or r
    gmms = [g for g in gmm_names if g in names]
    cache: dict = {}

    def compare(a: str, b: str) -> Comparison:
        if (a, b) not in cache:
            cache[a, b] = compare_systems(refs, hyps[a], hyps[b],
                                          ("pooled references", f"pooled {a}", f"pooled {b}"),
                                          (a, b), OPTS)
        return cache[a, b]

    comps = _comparisons(names, gmms, compare)
    speakers = ", ".join(d.name[5:] for d in folds)
    if summary is not None:
        summary += [summary_row(f"{len(folds)} left-out speakers pooled", c) for _, c in comps]
    label = {g: f"{what} (`{g}`)" for g, what, _ in GMMS}
    rows = []
    for n in names:
        c, w = compare(n, n), compare(n, n).bootstrap.wer_a
        rows.append(f"| {label.get(n, f'DNN (`{n}`)')} | {w.value:.2f} ({c.errors[0]}/"
                    f"{c.ref_words}) | {_ci(w.low, w.high)} |")
    return [f"## Leave one speaker out, {len(folds)} folds pooled ({speakers})", "",
            f"Each fold's test set is its left-out speaker, so together they hold each of these "
            f"speakers' {len(refs) // len(folds)} recordings once; each fold's own models "
            f"decoded them (`exp/loso_*/<system>`).", "",
            "| system | %WER (errors/words) | 95% interval |", "| --- | ---: | --- |", *rows, "",
            *COMPARISON_HEAD, *(comparison_row(f"{what}, pooled", c) for what, c in comps), ""]


def results(exp: Path, note: str = "") -> list[str]:
    """The whole RESULTS.md."""
    if not exp.is_dir():
        raise DataDirError(f"no such directory {exp} (run ./run.sh first)")
    dirs = sorted((d for d in exp.iterdir() if d.is_dir() and d.name != "make_mfcc"
                   and not d.name.startswith(".")),     # not a store's temporary directories
                  key=lambda d: (d.name != "official", d.name))     # the official split first
    summary: list[str] = []
    split_secs = [(d, split_section(d, summary)) for d in dirs]
    sections = [s for _, s in split_secs] + [pooled_section(exp, summary)]
    sections = [s for s in sections if s]
    if not sections:
        raise DataDirError(f"{exp}: no decoded split (no */mono/decode_test/wer_*): run ./run.sh "
                           "through stage 4 first")
    head = ["# egs/fsdd/s5 results", "",
            "The Free Spoken Digit Dataset (recorded speech, 6 speakers, 8 kHz; CC BY-SA 4.0, "
            "Zohar Jackson and contributors), isolated-word grammar over the ten digits, CMUdict "
            "lexicon, 8 kHz MFCC + per-speaker CMVN; Kaldi's ladder mono, tri1 (deltas), tri2 "
            "(LDA+MLLT), tri3 (SAT, fMLLR per speaker, the test speaker's transforms from a "
            "first pass), and DNNs (`dnn_fmllr_*`: on tri3's fMLLR features and alignments, "
            "decoded with tri3's graph and the test speaker's transforms; `dnn_rbm_*`: on MFCCs "
            "and the monophone's alignments). Written by `local/make_results.py` from "
            "the splits run.sh left in `exp/<split>/`, as local/store_split.py keeps them in "
            "`results/<split>/`; the WER is the best over local/score.sh's LM-weight / "
            "insertion-penalty sweep (with one word per utterance and a uniform grammar the sweep changes little). "
            "With 300 or 500 test words one error is 0.2-0.3% absolute. Intervals are 95% "
            "bootstrap intervals (Bisani and Ney 2004; 10000 resamplings of the utterances, seed "
            "777); every system is compared with the monophone GMM, and each DNN with the best "
            "GMM of the same test set (the one with the fewest errors there, so the choice "
            "favours the GMM), as `compare-wer.py --decode-dirs=true <decode-dir-A> "
            "<decode-dir-B>` compares them (nnetmix.score.compare_decode_dirs), and a difference "
            "is called significant only when MAPSSWE's p is below 0.05 and the interval of the "
            "difference excludes 0; otherwise it is not significant, a tie, whichever WER is "
            "lower.",
            "", machine_line() + (f" {note}" if note else ""), "",
            folds_line([d for d, s in split_secs if s]), ""]
    if summary:
        head += ["## Summary: every system against the monophone GMM, each DNN against the best "
                 "GMM", "", *SUMMARY_HEAD, *summary, ""]
    return head + [line for s in sections for line in s]


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--exp", default="results",
                   help="the results store (local/store_split.py), or run.sh's exp/")
    p.add_argument("--out", default="RESULTS.md", help="the markdown file to write")
    p.add_argument("--note", default="", help="a sentence after the machine line (e.g. the load)")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    lines = results(Path(args.exp), args.note)
    write_lines(args.out, lines)
    print(f"{args.prog}: wrote {args.out}")


if __name__ == "__main__":
    run_script(get_args(), main)
