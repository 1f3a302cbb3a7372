#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The digits recipe's closing table and RESULTS.md, from what run.sh left under exp/.

Reads every system's decode directory (exp/mono/decode_test, exp/tri1/decode_test,
<dnn-dir>/decode_test) with local/score.sh's best wer_LMWT_WIP, the DNN's per-epoch results
(<dnn-dir>/log/iterNN.{tr,cv}.json), the stage times (exp/stage_seconds/N, the DNN's stages in
<dnn-dir>/stage_seconds/N: wall seconds, load averages, CPU seconds), the corpus's lists
(data/test/text; <corpus>/test/utt2cond, each test utterance's noise and SNR) and
exp/fingerprint.md. Each WER comes with its 95% bootstrap interval and each system with its
difference from the one before it, the difference's interval and MAPSSWE p, all through
nnetmix.train.recipe_report (what ``compare-wer.py --decode-dirs=true exp/mono/decode_test
exp/tri1/decode_test`` prints). Prints the closing table (the systems, the best one named, where
the results file is) and writes the file. Nothing here is typed by hand: rerun it after run.sh.

Usage: ``local/make_results.py [--exp exp] [--dnn-dir exp/dnn_rbm_w2] [--corpus corpus]
[--out RESULTS.md]``; the file is written to a temporary name and renamed.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import json
import os
import re
from pathlib import Path
from typing import Optional

from nnetmix.data.io import atomic_open
from nnetmix.errors import DataDirError
from nnetmix.kaldi import read_gmm_model
from nnetmix.score.compare import best_scoring
from nnetmix.score.texttable import read_token_table
from nnetmix.score.wer import align_ops, edit_distance
from nnetmix.train.recipe_report import (compare_systems, comparison_cells, machine_line,
                                         stage_seconds, wer_ci)

from local_script import run_script, script_parser

__all__ = ["STAGES", "systems", "closing_table", "results"]

#: run.sh's stages, for the timing table.
STAGES = {0: "corpus synthesis", 1: "data, dict, lang, bigram G", 2: "MFCC + CMVN",
          3: "monophone GMM + alignment", 4: "monophone graph + decoding",
          5: "tri1 (deltas) + alignment", 6: "tri1 graph + decoding", 7: "RBM pretraining",
          8: "DNN training (MPI)", 9: "DNN decoding"}


def _gmm_what(d: Path, tri: bool) -> str:
    _, am = read_gmm_model(str(d / "final.mdl"))
    return (f"triphone GMM on deltas, {am.num_pdfs} leaves, {am.num_gauss} Gaussians" if tri
            else f"monophone GMM, {am.num_gauss} Gaussians")


def _dnn_what(d: Path) -> str:
    """How the DNN trained, from the epochs' result files."""
    tr = sorted(d.glob("log/iter[0-9][0-9].tr.json"))
    ranks = json.loads(tr[0].read_text()).get("num_ranks", "?") if tr else "?"
    return f"DNN on tri1's alignments, {ranks} MPI worker(s)"


def systems(exp: Path, dnn_dir: Optional[Path]) -> list[tuple[str, str, Path]]:
    """(name, what, decode directory) of each decoded system in training order."""
    out = []
    for name, tri in (("mono", False), ("tri1", True)):
        dec = exp / name / "decode_test"
        if any(dec.glob("wer_*")):
            out.append((name, _gmm_what(exp / name, tri), dec))
    if dnn_dir is not None and any((dnn_dir / "decode_test").glob("wer_*")):
        out.append((dnn_dir.name, _dnn_what(dnn_dir), dnn_dir / "decode_test"))
    return out


def closing_table(systems_: list[tuple[str, str, Path]]) -> tuple[list[str], str]:
    """The Markdown table of the systems, each against the one before, and the sentence naming
    the best system and how it stands against the best of the others."""
    rows = ["| system | %WER [errors / words] | 95% interval | against the one before | "
            "MAPSSWE p | verdict | LMWT / WIP |", "|---|---|---|---|---:|---|---|"]
    wers = []
    for i, (name, what, dec) in enumerate(systems_):
        w = wer_ci(dec)
        wers.append((w.wer, i, name, dec))
        lmwt, wip = w.wer_file.split("_")[1:3]
        cmp = ["-", "-", "-"]
        if i:
            prev = systems_[i - 1]
            diff, p, verdict = comparison_cells(compare_systems(prev[2], dec, (prev[0], name)))
            cmp = [f"{diff} vs {prev[0]}", p, verdict]
        rows.append(f"| {name} ({what}) | {w.wer:.2f} [{w.errors} / {w.words}] | "
                    f"[{w.low:.2f}, {w.high:.2f}] | {cmp[0]} | {cmp[1]} | {cmp[2]} | "
                    f"{lmwt} / {wip} |")
    ranked = sorted(wers)   # a tie goes to the system trained first (the simpler one)
    best = ranked[0]
    if len(ranked) == 1:
        return rows, f"Best: {best[2]} ({best[0]:.2f}%), the only system decoded."
    second = ranked[1]
    diff, p, verdict = comparison_cells(compare_systems(second[3], best[3], (second[2], best[2])))
    return rows, (f"Best: {best[2]} at {best[0]:.2f}%; against the next best, {second[2]} "
                  f"({second[0]:.2f}%): {diff}, MAPSSWE p {p}, {verdict}.")


def read_conditions(corpus: Path) -> dict[str, str]:
    """Test utterance -> 'clean' or 'SNR <lo>-<hi> dB' (5 dB bands; the top of the corpus's --snr
    range goes in the band below it) from utt2cond."""
    f = corpus / "test" / "utt2cond"
    if not f.is_file():
        return {}
    params = corpus / "params.json"
    top = json.loads(params.read_text()).get("snr", [0, 1e9])[1] if params.is_file() else 1e9
    out = {}
    for line in f.read_text().split("\n"):
        fields = line.split()
        if len(fields) == 3:
            if fields[1] == "clean":
                out[fields[0]] = "clean"
            else:
                snr = float(fields[2])
                lo = int((snr - 5 if snr >= top else snr) // 5 * 5)
                out[fields[0]] = f"SNR {lo}-{lo + 5} dB"
    return out


def error_breakdown(systems_: list[tuple[str, str, Path]], conds: dict[str, str]) -> list[str]:
    """Per system: errors that involve OH (a reference or hypothesised OH substituted, deleted
    or inserted), and the WER by test condition (clean, SNR bands)."""
    names = sorted(set(conds.values()), key=lambda c: (c != "clean", len(c), c))
    head = ["| system | errors | of them involving OH |"] + [f" {c} |" for c in names]
    rows = ["".join(head), "|---|---:|---:|" + "---:|" * len(names)]
    for name, _, dec in systems_:
        best = best_scoring(dec)
        refs = read_token_table(f"ark:{best.ref}")
        hyps = read_token_table(f"ark:{best.hyp}")
        oh = total = 0
        by = {c: [0, 0] for c in names}
        for utt, ref in refs.items():
            hyp = hyps.get(utt, [])
            ins, dels, subs = edit_distance(ref, hyp)
            total += ins + dels + subs
            if conds.get(utt) in by:
                by[conds[utt]][0] += ins + dels + subs
                by[conds[utt]][1] += len(ref)
            if "OH" in ref or "OH" in hyp:
                oh += _oh_errors(ref, hyp)
        cells = "".join(f" {100 * e / max(n, 1):.2f} ({e}/{n}) |" for e, n in by.values())
        rows.append(f"| {name} | {total} | {oh} |{cells}")
    return rows


def _oh_errors(ref: list[str], hyp: list[str]) -> int:
    """Errors of one utterance whose reference or hypothesis word is OH."""
    ops = align_ops(ref, hyp)
    r = h = n = 0
    for op in ops:
        rw = ref[r] if op in "CSD" else None
        hw = hyp[h] if op in "CSI" else None
        if op != "C" and "OH" in (rw, hw):
            n += 1
        r += op in "CSD"
        h += op in "CSI"
    return n


def dnn_epochs(d: Path) -> list[str]:
    """One row per epoch: training and CV loss and frame accuracy, accepted or rejected (how
    far Newbob got, and whether the network overfits)."""
    rows = ["| epoch | learning rate | train loss | train frame acc. | CV loss | CV frame acc. "
            "| |", "|---:|---:|---:|---:|---:|---:|---|"]
    # nnet/<name>_iterNN_learnrateX_trL_cvL[_rejected]: each epoch's model, as Kaldi names it
    names = {m.group(1): (m.group(2), p.name.endswith("_rejected"))
             for p in (d / "nnet").glob("*_iter*")
             if (m := re.search(r"_iter(\d+)_learnrate([^_]+)_", p.name))} \
        if (d / "nnet").is_dir() else {}
    for tr in sorted(d.glob("log/iter[0-9][0-9].tr.json")):
        n = tr.name[4:6]
        cv = tr.with_name(f"iter{n}.cv.json")
        try:
            t, c = json.loads(tr.read_text()), json.loads(cv.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise DataDirError(f"{tr}: cannot read the epoch's results ({e})") from None
        lr, rejected = names.get(n, ("?", False))
        rows.append(f"| {int(n)} | {lr} | {t['avg_loss']:.4f} | {t['frame_accuracy']:.2f}% | "
                    f"{c['avg_loss']:.4f} | {c['frame_accuracy']:.2f}% | "
                    f"{'rejected' if rejected else 'accepted'} |")
    return rows


def timing(exp: Path, dnn_dir: Optional[Path]) -> list[str]:
    """The stage table: wall and CPU seconds and the load at each stage's end, and the totals."""
    times = stage_seconds(exp)
    if dnn_dir is not None:
        times.update({k: v for k, v in stage_seconds(dnn_dir).items() if k in (8, 9)})
    if not times:
        return []
    rows = ["| stage | what | wall s | CPU s (user + sys) | load average at its end "
            "(1, 5, 15 min) |",
            "|---:|---|---:|---:|---|"]
    wall = cpu = 0
    for n in sorted(times):
        t = times[n]
        wall += t.seconds
        cpu += t.cpu or 0
        loads = (exp if n < 8 or dnn_dir is None else dnn_dir) / "stage_seconds" / str(n)
        load = " ".join(loads.read_text().split()[1:4])
        rows.append(f"| {n} | {STAGES.get(n, '?')} | {t.seconds} | "
                    f"{'-' if t.cpu is None else t.cpu} | {load} |")
    rows.append(f"| | all | {wall} | {cpu} | |")
    loads = [t.load for t in times.values() if t.load is not None]
    rows += ["", f"Stages {min(times)}-{max(times)}: the stages' wall times sum to {wall} s "
             f"({wall / 60:.1f} min) and their CPU times to {cpu} s"
             + (f", at 1-minute load averages from {min(loads):g} to {max(loads):g} on "
                f"{os.cpu_count()} cores" if loads else "")
             + ". Stages 4 and 6 decode in the background while the stages after them train, "
             "so the run takes less than the stages' sum."]
    run = exp / "run_seconds"   # run.sh's clock of a run of stages 0-9 in one go
    if run.is_file():
        f = run.read_text().split()
        rows += ["", f"The whole run (stages 0-9 in one go, `exp/run_seconds`): {f[0]} s wall "
                 f"({int(f[0]) / 60:.1f} min) and {f[4]} CPU seconds, 1-minute load average "
                 f"{f[1]} at its end on {os.cpu_count()} cores. Wall time depends on what else "
                 "the machine runs (on 2 cores a load above 2 means waiting), CPU time much less: "
                 f"on 2 quiet cores the run takes at least its CPU time over 2, "
                 f"{int(f[4]) / 2:.0f} s ({int(f[4]) / 120:.1f} min)."]
    return rows


def results(exp: Path, dnn_dir: Optional[Path], corpus: Path, out: Path) -> tuple[list[str],
                                                                                  list[str]]:
    """(RESULTS.md's lines, the closing lines run.sh prints)."""
    sys_ = systems(exp, dnn_dir)
    if not sys_:
        raise DataDirError(f"no decoded system under {exp} (run stages 0-4)")
    table, best = closing_table(sys_)
    commands = (exp / "commands").read_text().splitlines() if (exp / "commands").is_file() else []
    params = corpus / "params.json"
    corpus_line = ""
    if params.is_file():
        p = json.loads(params.read_text())
        counts = (corpus / ".done").read_text().strip() if (corpus / ".done").is_file() else ""
        corpus_line = (f"Corpus: {counts}, {p['num_train_spk']} training and {p['num_test_spk']} "
                       f"test speakers (disjoint), seed {p['seed']}, SNR "
                       f"{':'.join(f'{x:g}' for x in p['snr']) if 'snr' in p else '-'} dB, "
                       f"clean share {p.get('clean_share', 1)}"
                       f"{', a glottal stop before OH and EIGHT' if p.get('glottal_onset') else ''}.")
    lines = ["# egs/digits/s5 results", "",
             "Written by `local/make_results.py` (run.sh's stage 10) from the run under `exp/`; "
             "rerun it, do not edit.", "", machine_line(Path(__file__).resolve().parent), ""]
    if commands:
        lines += ["The run: `exp/commands`, every run.sh that wrote to `exp/` (date, commit, "
                  "command line):", "", "```", *commands, "```", ""]
    if corpus_line:
        lines += [corpus_line, ""]
    lines += ["## Systems", "", "Every system decodes data/test with the same bigram G; each is "
              "compared with the one before it (`compare-wer.py --decode-dirs=true`: the "
              "difference's 95% bootstrap interval and MAPSSWE p).", "", *table, "", best, ""]
    conds = read_conditions(corpus)
    lines += ["## Where the errors are", "", "Errors of the best scoring per system, those "
              "involving OH, and %WER by test condition (`<corpus>/test/utt2cond`).", "",
              *error_breakdown(sys_, conds), ""]
    if dnn_dir is not None and any(dnn_dir.glob("log/iter[0-9][0-9].tr.json")):
        lines += [f"## DNN training (`{dnn_dir}`)", "", "Newbob's epochs (the CV set is 10% of "
                  "the training speakers, held out).", "", *dnn_epochs(dnn_dir), ""]
    t = timing(exp, dnn_dir)
    if t:
        lines += ["## Timings", "", *t, ""]
    fp = exp / "fingerprint.md"
    if fp.is_file():
        lines += ["## Fingerprint of this run", "", "What `fingerprint-recipe.py .` printed "
                  "(`exp/fingerprint.md`); run.sh's stage 10 compares a new run with these rows "
                  "before rewriting this file (`exp/fingerprint_vs_results.txt`).", "",
                  *[x for x in fp.read_text().splitlines() if x.startswith("|")], ""]
    closing = ["", *table, "", best, f"Results: {out.resolve()}"]
    return lines, closing


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--exp", type=Path, default=Path("exp"), help="the run's exp/ directory")
    p.add_argument("--dnn-dir", type=Path, default=Path("exp/dnn_rbm_w2"),
                   help="the DNN's directory (run.sh's dnn_dir)")
    p.add_argument("--corpus", type=Path, default=Path("corpus"), help="the corpus directory")
    p.add_argument("--out", type=Path, default=Path("RESULTS.md"), help="the file written")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    dnn = args.dnn_dir if args.dnn_dir.is_dir() else None
    lines, closing = results(args.exp, dnn, args.corpus, args.out)
    with atomic_open(args.out) as fh:
        fh.write("\n".join(lines).rstrip("\n") + "\n")
    print("\n".join(closing))


if __name__ == "__main__":
    run_script(get_args(), main)
