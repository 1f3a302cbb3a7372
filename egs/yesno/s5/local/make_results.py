#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""RESULTS.md of the yesno recipe, from what run.sh left under exp/, beside Kaldi's figures.

Rows, each with its best WER over local/score.sh's LM-weight / insertion-penalty sweep (the
decode scripts' grids: steps/decode.sh's is Kaldi's score_kaldi.sh's) and its 95% bootstrap
interval (nnetmix.train.recipe_report.wer_ci, what ``compare-wer.py --decode-dirs=true`` says):
the monophone GMM (exp/mono0a/decode_test_yesno, stage 5), Kaldi's trained model decoded by
nnetmix (exp/kaldi_mono0a/decode_test_yesno, stage 6) and the DNN (exp/dnn_w*/decode_test_yesno,
stage 8, its epochs and CV frame accuracy read by nnetmix.train.runlog). Each is compared with
the monophone on the same test words. Kaldi's model is also scored, at LM weight 10 and penalty
0.0 as Kaldi's wer_10, on the 29 test files its own run was scored on (the names starting with
1), beside what Kaldi's decoder gave there (:data:`KALDI_FIGURES`). The header names the commit
of the checkout path.sh found ($NNETMIX_ROOT), the machine and the date. Nothing here is typed
by hand but the cited figures: rerun it after run.sh (stage 9 does).

Usage: ``local/make_results.py [--exp exp] [--out RESULTS.md] [--note TEXT]``; the file is
written to a temporary name and renamed.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import os
from pathlib import Path

from nnetmix.data.io import c_sorted, write_lines
from nnetmix.errors import DataDirError
from nnetmix.kaldi import read_gmm_model
from nnetmix.score import compute_wer, format_wer, iter_token_table, read_token_table
from nnetmix.train.recipe_report import (best_wer_line, comparison_cells, compare_systems,
                                         machine_line, wer_ci)
from nnetmix.train.runlog import read_run

from local_script import run_script, script_parser

__all__ = ["DECODE", "KALDI_FIGURES", "system_rows", "tutorial_subset_line", "results"]

#: Each system's decode directory under its model directory.
DECODE = "decode_test_yesno"

#: What Kaldi's own tools report for yesno, with where each figure is (checked, not measured here).
KALDI_FIGURES = [
    "Kaldi's repository publishes no yesno result: `egs/yesno/s5` has `run.sh`, `local/`, "
    "`input/` and `conf/` but no `RESULTS` file (kaldi-asr/kaldi at f4007661, 2025-07-22), and "
    "no other file there quotes a yesno WER. The figure usually quoted for it, 0.00% WER on 232 "
    "test words, could not be traced to a file of Kaldi's; 232 words are 29 files of 8, while "
    "Kaldi's split (`local/create_yesno_waves_test_train.pl`, line i of n to train when i <= n/2) "
    "gives 30 test files, 240 words, on the 60 files of the archive, as here.",
    "The Kaldi run whose model is decoded here (atruber/kaldi-yesno-tutorial, the source of "
    "`../shared/kaldi-fixtures/yesno`; Kaldi's train_mono.sh, mkgraph.sh, decode.sh) split the "
    "files by their first word (the 31 starting with 0 train, the 29 starting with 1 test) and "
    "used its own lexicon (YES = K EH N, NO = L OW); its "
    "`exp/mono/decode_test_yesno/wer_10` reads `%WER 1.72 [ 4 / 232, 3 ins, 0 del, 1 sub ]`.",
]


def _gaussians(d: Path) -> str:
    """The GMM's size, from its final.mdl."""
    _, am = read_gmm_model(str(d / "final.mdl"))
    return f", {am.num_gauss} Gaussians"


def system_rows(exp: Path) -> tuple[list[str], list[str], list[str]]:
    """(table rows, comparison rows, best WER lines) of the decoded systems."""
    mono = exp / "mono0a" / DECODE
    if best_wer_line(mono) is None:
        raise DataDirError(f"{mono}: no wer_* files (run ./run.sh through stage 5 first)")
    systems = [("monophone GMM", exp / "mono0a", _gaussians(exp / "mono0a"), "4-5",
                "steps/train_mono.sh --totgauss 400, as Kaldi's run.sh")]
    kaldi = exp / "kaldi_mono0a"
    if best_wer_line(kaldi / DECODE):
        systems.append(("Kaldi's model and graph, decoded by nnetmix", kaldi, _gaussians(kaldi),
                        "6", "final.mdl, tree and HCLG.fst as Kaldi wrote them "
                        "(--kaldi-model-dir); trained on the 31 files starting with 0, so one "
                        "test file here (0_1_1_1_1_1_1_1) is in its training data"))
    for d in c_sorted(p.name for p in exp.glob("dnn_w*")):
        run = read_run(exp / d)
        if run is None or best_wer_line(exp / d / DECODE) is None:
            continue
        systems.append((f"DNN, {run.workers} MPI worker{'s' if run.workers > 1 else ''}",
                        exp / d, "", "7-8", f"on exp/mono0a_ali; {run.epochs} epochs "
                        f"({run.rejected} rejected), CV frame accuracy {run.cv_acc:.2f}%; "
                        "decoded with exp/mono0a/graph_tgpr"))
    rows, comps, lines = [], [], []
    for what, d, size, stages, notes in systems:
        w = wer_ci(d / DECODE)
        rows.append(f"| {what} (`{d.relative_to(exp.parent)}`{size}) | {stages} | {w.wer:.2f} "
                    f"({w.errors}/{w.words}) | [{w.low:.2f}, {w.high:.2f}] | {w.wer_file} "
                    f"| {notes} |")
        lines.append(best_wer_line(d / DECODE))
        if d != systems[0][1]:
            diff, p, verdict = comparison_cells(compare_systems(mono, d / DECODE,
                                                                ("mono0a", d.name)))
            comps.append(f"| `{d.name}` - `mono0a` | {diff} | {p} | {verdict} |")
    return rows, comps, lines


def tutorial_subset_line(exp: Path) -> str | None:
    """Kaldi's model at LM weight 10, penalty 0.0 on the test files starting with 1."""
    scoring = exp / "kaldi_mono0a" / DECODE / "scoring"
    if not (scoring / "10.0.0.tra").is_file():
        return None
    refs = [(k, w) for k, w in iter_token_table(f"ark:{scoring / 'test_filt.txt'}")
            if k.startswith("1")]
    st = compute_wer(refs, read_token_table(f"ark:{scoring / '10.0.0.tra'}"))
    return f"{format_wer(st)[0]} {scoring}/10.0.0.tra, the {len(refs)} files starting with 1"


def results(exp: Path, note: str = "") -> list[str]:
    """The whole RESULTS.md."""
    if not exp.is_dir():
        raise DataDirError(f"no such directory {exp} (run ./run.sh first)")
    rows, comps, lines = system_rows(exp)
    words = wer_ci(exp / "mono0a" / DECODE).words
    out = ["# egs/yesno/s5 results", "",
           "Kaldi's yesno corpus (OpenSLR resource 1: 60 files of one speaker saying eight "
           "words, each yes or no, 8 kHz), split as Kaldi's recipe splits it (the first 30 files "
           "of the sorted list train, the last 30 test: 240 test words); Kaldi's lexicon (phones "
           "Y, N, SIL) and unigram grammar; MFCC with Kaldi's yesno options and CMVN. Written by "
           "`local/make_results.py` (run.sh stage 9) from `exp/`. Each WER is the best over "
           "local/score.sh's sweep (insertion penalties 0.0, 0.5, 1.0; LM weights 7-17 for the "
           "GMMs, Kaldi's score_kaldi.sh grid, and 4-15 for the DNN, steps/nnet/decode.sh's as "
           "Kaldi's), with its 95% bootstrap interval (Bisani and Ney 2004; 10000 "
           f"resamplings of the utterances, seed 777). One error is {100 / words:.2f}% absolute; a "
           "difference "
           "is called significant only when MAPSSWE's p is below 0.05 and the interval of the "
           "difference excludes 0.", "",
           machine_line(os.environ.get("NNETMIX_ROOT")) + " Run: `./run.sh --corpus-dir "
           "../shared/corpora/yesno --kaldi-model-dir ../shared/kaldi-fixtures/yesno` (those "
           "paths relative to the checkout's parent)." + (f" {note}" if note else ""), "",
           "| system | stages | %WER (errors/words) | 95% interval | best wer_LMWT_WIP | notes |",
           "| --- | --- | ---: | --- | --- | --- |", *rows, ""]
    if comps:
        out += ["| comparison (B - A) | %WER B - A [95% interval] | MAPSSWE p | verdict |",
                "| --- | --- | ---: | --- |", *comps, ""]
    out += ["```", *lines, "```", "", "## Kaldi's figures", "",
            *[f"- {x}" for x in KALDI_FIGURES], ""]
    sub = tutorial_subset_line(exp)
    if sub:
        out += ["The same Kaldi model decoded here, scored as that run was scored (LM weight 10, "
                "penalty 0.0, its 29 test files; features by nnetmix, so the dither noise and "
                "the CMVN statistics, over this recipe's 30 test files, differ from that run's):",
                "", "```", sub, "```", ""]
    return out


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--exp", default="exp", help="the experiment directory of run.sh")
    p.add_argument("--out", default="RESULTS.md", help="the markdown file to write")
    p.add_argument("--note", default="", help="a sentence after the machine line (e.g. the load)")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    write_lines(args.out, results(Path(args.exp), args.note))
    print(f"{args.prog}: wrote {args.out}")


if __name__ == "__main__":
    run_script(get_args(), main)
