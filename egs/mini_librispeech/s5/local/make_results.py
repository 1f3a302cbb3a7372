#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""RESULTS.md of the mini_librispeech recipe, from what run.sh left under exp/, beside Kaldi's
published figures.

One row per decode directory of the ladder (exp/mono, exp/tri1, exp/tri2b, exp/tri3b with its
speaker-independent first pass ``.si``, and each exp/dnn_*), each WER the best over
local/score.sh's LM-weight / insertion-penalty sweep with its 95% bootstrap interval
(nnetmix.train.recipe_report.wer_ci: ``compare-wer.py --decode-dirs=true``), then each system
against the one before it on the same LM and test set (difference, its interval, MAPSSWE p),
the stage times (exp/stage_seconds) and Kaldi's figures (:data:`KALDI_FIGURES`, cited, not
measured here). With ``--no-run`` it writes the file a checkout carries until a real run is
made: that no run has been made, and Kaldi's figures. Nothing else here is typed by hand: rerun
it after run.sh (stage 12 does).

Usage: ``local/make_results.py [--exp exp] [--out RESULTS.md] [--note TEXT] [--no-run]``; the
file is written to a temporary name and renamed.
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Optional

from nnetmix.data.io import c_sorted, write_lines
from nnetmix.errors import DataDirError
from nnetmix.train.recipe_report import (best_wer_line, compare_systems, comparison_cells,
                                         machine_line, stage_seconds, wer_ci)
from nnetmix.train.runlog import read_run

from local_script import run_script, script_parser

__all__ = ["GMMS", "KALDI_FIGURES", "decode_dirs", "system_rows", "results"]

#: The GMM ladder in training order: directory and what it is.
GMMS = (("mono", "monophone GMM"), ("tri1", "triphone GMM on deltas"),
        ("tri2b", "triphone GMM on LDA+MLLT"), ("tri3b", "triphone SAT GMM (LDA+MLLT+fMLLR)"))
#: run.sh's stages, for the timing table.
STAGES = {0: "download", 1: "data, dict, lang, G", 2: "MFCC + CMVN",
          3: "monophone + alignment", 4: "monophone graphs + decoding", 5: "tri1 + alignment",
          6: "tri2b + alignment", 7: "tri3b + fMLLR alignment", 8: "tri1-tri3b graphs + decoding",
          9: "fMLLR features", 10: "DNN training", 11: "DNN decoding"}
_DECODE = re.compile(r"^decode_nosp_([a-z]+)_(.+?)(\.si)?$")

#: Kaldi's published mini_librispeech figures on dev_clean_2 (20,138 words), with their source.
KALDI_FIGURES = [
    "tri3b (LDA+MLLT+SAT, 2500 leaves, 15000 Gaussians, lang_nosp): %WER 18.10 [ 3645 / 20138 ] "
    "with tgsmall (decode_nosp_tgsmall_dev_clean_2/wer_16_0.0), 16.25 rescored with tgmed, "
    "13.45 [ 2708 / 20138 ] rescored with tglarge (steps/lmrescore_const_arpa.sh); "
    "kaldi-asr/kaldi egs/mini_librispeech/s5/RESULTS.",
    "chain TDNN-F tdnn1k (i-vectors, online CMN, 5.2M parameters, on tri3b's alignments with "
    "pronunciation and silence probabilities): %WER 10.99 with tgsmall, 7.54 rescored with "
    "tglarge; the header of kaldi-asr/kaldi egs/mini_librispeech/s5/local/chain/tuning/"
    "run_tdnn_1k.sh (compare_wer.sh's table).",
]


def decode_dirs(d: Path) -> list[tuple[str, str, bool, Path]]:
    """(lm, test set, speaker-independent pass, directory) of a system's decode directories."""
    out = []
    for name in c_sorted(p.name for p in d.glob("decode_nosp_*") if p.is_dir()):
        m = _DECODE.match(name)
        if m and best_wer_line(d / name) is not None:
            out.append((m.group(1), m.group(2), m.group(3) is not None, d / name))
    return out


def _systems(exp: Path) -> list[tuple[str, str, Path]]:
    out = [(g, what, exp / g) for g, what in GMMS if (exp / g).is_dir()]
    for name in c_sorted(p.name for p in exp.glob("dnn_*") if p.is_dir()):
        run = read_run(exp / name)
        if run is not None:
            what = (f"DNN on tri3b's fMLLR features, {run.workers} MPI rank"
                    f"{'s' if run.workers > 1 else ''}; {run.epochs} epochs ({run.rejected} "
                    f"rejected), CV frame accuracy {run.cv_acc:.2f}%")
            out.append((name, what, exp / name))
    return [s for s in out if decode_dirs(s[2])]


def system_rows(exp: Path) -> tuple[list[str], list[str], list[str]]:
    """(table rows, comparison rows, best WER lines) of the decoded systems."""
    rows, comps, lines = [], [], []
    previous: dict[tuple[str, str], tuple[str, Path]] = {}
    for name, what, d in _systems(exp):
        for lm, test, si, dec in decode_dirs(d):
            w = wer_ci(dec)
            label = f"{what}{', speaker-independent pass' if si else ''}"
            rows.append(f"| {label} | `{dec.relative_to(exp.parent)}` | {lm} | {test} | "
                        f"{w.wer:.2f} ({w.errors}/{w.words}) | [{w.low:.2f}, {w.high:.2f}] | "
                        f"{w.wer_file} |")
            lines.append(best_wer_line(dec))
            if si:
                continue
            before = previous.get((lm, test))
            if before is not None:
                diff, p, verdict = comparison_cells(
                    compare_systems(before[1], dec, (before[0], name)))
                comps.append(f"| `{name}` - `{before[0]}` | {lm} | {test} | {diff} | {p} | "
                             f"{verdict} |")
            previous[(lm, test)] = (name, dec)
    if not rows:
        raise DataDirError(f"{exp}: no decode directory with wer_* files (run ./run.sh through "
                           "stage 4 first)")
    return rows, comps, lines


def _times(exp: Path) -> Optional[str]:
    secs = stage_seconds(exp)
    if not secs:
        return None
    parts = [f"{n} {STAGES.get(n, '?')} {secs[n].seconds} s" for n in sorted(secs)]
    return "Stage wall times (exp/stage_seconds): " + "; ".join(parts) + "."


def _kaldi_section() -> list[str]:
    return ["## Kaldi's figures", "", "For reference only: Kaldi's runs, not nnetmix's, and "
            "Kaldi's tglarge and tgmed figures rescore lattices, which nnetmix does not "
            "(run.sh decodes with each --lms LM's own graph).", "",
            *[f"- {x}" for x in KALDI_FIGURES], ""]


def results(exp: Path, note: str = "", no_run: bool = False) -> list[str]:
    """The whole RESULTS.md."""
    out = ["# egs/mini_librispeech/s5 results", ""]
    if no_run:
        return out + ["No real mini_librispeech run has been made with nnetmix yet: the machine "
                      "this recipe was written on cannot reach OpenSLR. The recipe runs end to "
                      "end in the test suite on a small stand-in corpus in LibriSpeech's layout "
                      "and formats (tests/egs/test_mini_librispeech_recipe.py); those numbers "
                      "say nothing about Mini LibriSpeech and are not kept here. Stage 12 of a "
                      "real run (`./run.sh`) rewrites this file with its numbers.", "",
                      *_kaldi_section()]
    if not exp.is_dir():
        raise DataDirError(f"no such directory {exp} (run ./run.sh first)")
    rows, comps, lines = system_rows(exp)
    out += ["Written by `local/make_results.py` (run.sh stage 12) from `exp/`. Each WER is the "
            "best over local/score.sh's sweep (by default insertion penalties 0.0, 0.5, 1.0 and "
            "LM weights 7-17 for the GMMs, 4-15 for the DNN; run.sh's --scoring-opts narrows "
            "it: see exp/commands), with its 95% bootstrap interval (Bisani and "
            "Ney 2004; 10000 resamplings of the utterances, seed 777); a difference is called "
            "significant only when MAPSSWE's p is below 0.05 and the interval of the difference "
            "excludes 0.", "",
            machine_line(os.environ.get("NNETMIX_ROOT")) + (f" {note}" if note else ""), ""]
    times = _times(exp)
    if times:
        out += [times, ""]
    out += ["| system | decode directory | LM | test set | %WER (errors/words) | 95% interval "
            "| best wer_LMWT_WIP |", "| --- | --- | --- | --- | ---: | --- | --- |", *rows, ""]
    if comps:
        out += ["| comparison (B - A) | LM | test set | %WER B - A [95% interval] | MAPSSWE p "
                "| verdict |", "| --- | --- | --- | --- | ---: | --- |", *comps, ""]
    out += ["```", *lines, "```", "", *_kaldi_section()]
    return out


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--exp", default="exp", help="the experiment directory of run.sh")
    p.add_argument("--out", default="RESULTS.md", help="the markdown file to write")
    p.add_argument("--note", default="", help="a sentence after the machine line (e.g. the load)")
    p.add_argument("--no-run", action="store_true", help="the file before any run: no exp/ read")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    write_lines(args.out, results(Path(args.exp), args.note, args.no_run))
    print(f"{args.prog}: wrote {args.out}")


if __name__ == "__main__":
    run_script(get_args(), main)
