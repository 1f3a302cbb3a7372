#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Time per monophone training pass and alignment speed of the real recipe scripts.

Runs ``steps/train_mono.sh`` (Kaldi's 40-pass schedule) and ``steps/align_si.sh`` from the digits
recipe directory into a scratch experiment directory, then reads the per-pass lines that
train_mono.sh writes to ``log/summary.log`` and prints a markdown table: wall time of the whole
training, median seconds of realignment passes and of the other passes, and frames per second of
alignment with the final model. Issue 3's target: the whole training under 3 minutes on 2 cores.
Then fMLLR per speaker as steps/train_sat.sh estimates it (issue 17): ali-to-post, weight-silence-post
0.0 on the silence phones and gmm-est-fmllr --spk2utt on the alignments, in $nj jobs; the row gives
seconds per speaker (wall time over speakers, process start-up included) and the average
auxiliary-function improvement the jobs log.

Needs the recipe's stages 0-2 and data/lang (``cd egs/digits/s5 && ./run.sh --stop-stage 2``).
Usage: bench/gmm_speed.py [--recipe egs/digits/s5] [--nj 2] [--keep DIR]

``--tri-exp EXP`` instead reports the triphone ladder (issue 17) of a recipe run that has made
EXP/tri1, tri2 and tri3 (egs/harbour/s5: ``./run.sh --stage 5 --stop-stage 7``): per system the
tree-building seconds (acc-tree-stats to gmm-init-model, from the jobs' logs), the passes'
seconds from log/summary.log (all, median realignment pass, median other pass), the
alignments into <sys>_ali; then, in this process and side by side, gmm-align-compiled's two ways
of aligning --utts utterances of tri1's first job with its final model: against the graphs as
they are (a dense frames x transition-ids matrix) and against graphs relabelled to their own
transition-ids with only their pdfs' likelihoods (what it does for models with more than 2000
transition-ids), with the ratio and whether the alignments are identical.
Usage: bench/gmm_speed.py --tri-exp egs/harbour/s5/exp [--utts 200]
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nnetmix.hmm.gmm_init import TrainMonoSchedule  # noqa: E402

FMLLR_RE = re.compile(r"Overall fMLLR auxf impr per frame is (\S+) over (\S+) frames")
PASS_RE = re.compile(r"pass (\d+): avg-like-per-frame (\S+) over ([\d.e+]+) frames, gauss (\d+), "
                     r"(?:aligned (\d+), failed (\d+), )?([\d.]+) s")


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipe", default=str(ROOT / "egs/digits/s5"), help="recipe directory")
    p.add_argument("--nj", type=int, default=2, help="parallel jobs")
    p.add_argument("--keep", default="", help="keep the experiment in this directory")
    p.add_argument("--tri-exp", default="", help="report the triphone ladder of this exp/ "
                   "directory instead (run from its recipe directory's parent or anywhere)")
    p.add_argument("--utts", type=int, default=200, help="--tri-exp: utterances aligned both ways")
    return p.parse_args()


ELAPSED_RE = re.compile(r"elapsed time (\d+) seconds")
TREE_LOGS = ("acc_tree", "sum_tree_acc", "questions", "compile_questions", "build_tree",
             "init_model")


def log_seconds(logdir: Path, name: str) -> float:
    """Wall seconds of a step's jobs: the longest of name.log / name.N.log (jobs run at once)."""
    secs = [float(m.group(1)) for f in logdir.glob(f"{name}*.log")
            if re.fullmatch(rf"{name}(\.\d+)?\.log", f.name)
            for m in [ELAPSED_RE.search(f.read_text())] if m]
    return max(secs, default=0.0)


def align_both_ways(system: Path, utts: int) -> tuple[float, float, int, int]:
    """(dense seconds, compact seconds, identical alignments, utterances) on tri1's job 1."""
    import itertools

    import numpy as np

    from nnetmix.hmm.align_tools import open_lookup, pdf_loglikes_np
    from nnetmix.hmm.fst_labels import compact_input_labels
    from nnetmix.hmm.gmm_align import AlignOptions, align_utterance, scaled_transition_log_probs
    from nnetmix.hmm.gmm_tools import read_model
    from nnetmix.hmm.graphs import iter_graphs

    model = read_model(str(system / "final.mdl"))
    tm = model.tm
    tid2pdf = tm.tid2pdf.astype(np.int64)
    trans = scaled_transition_log_probs(tm.log_probs, tm.tid2state, tm.tid_is_selfloop, 1.0, 0.1)
    opts = AlignOptions(beam=10, retry_beam=40)
    with open_lookup(f"pipeline:{system}/feats.1.json") as feats:
        items = [(k, g, feats.get(k)) for k, g in
                 itertools.islice(iter_graphs(f"ark:gunzip -c {system}/fsts.1.gz|"), utts)]
    t0 = time.perf_counter()
    dense = [align_utterance(g, pdf_loglikes_np(model.stacked, m), tid2pdf, opts, trans, key=k)
             for k, g, m in items]
    t1 = time.perf_counter()
    compact = []
    for k, g, m in items:
        g2, labels = compact_input_labels(g)
        pdfs = np.unique(tid2pdf[labels])
        compact.append(align_utterance(g2, pdf_loglikes_np(model.stacked, m, pdfs), tid2pdf,
                                       opts, trans, pdfs, key=k, labels=labels))
    t2 = time.perf_counter()
    same = sum(np.array_equal(a.alignment, b.alignment) for a, b in zip(dense, compact))
    return t1 - t0, t2 - t1, same, len(items)


def tri_report(exp: Path, utts: int) -> int:
    """The --tri-exp table (module docstring)."""
    systems = [s for s in ("tri1", "tri2", "tri3") if (exp / s / "log/summary.log").exists()]
    if not systems:
        sys.exit(f"gmm_speed.py: no {exp}/tri1/log/summary.log (run the recipe's tri stages)")
    print(f"\nTriphone ladder in {exp}\n")
    print("| system | leaves / Gaussians | tree building | passes | all passes | median "
          "realignment pass | median other pass | <sys>_ali |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    total = 0.0
    for s in systems:
        d = exp / s
        passes = [m for m in map(PASS_RE.search, (d / "log/summary.log").read_text().splitlines())
                  if m]
        aligned = [float(m.group(7)) for m in passes if m.group(5) is not None]
        other = [float(m.group(7)) for m in passes if m.group(5) is None]
        tree = sum(log_seconds(d / "log", n) for n in TREE_LOGS)
        ali_dir = exp / f"{s}_ali" / "log"
        ali = sum(log_seconds(ali_dir, n) for n in ("align", "align_pass1", "align_pass2",
                                                     "fmllr", "compile_graphs"))
        run_secs = sum(float(m.group(7)) for m in passes)
        total += tree + run_secs + ali
        leaves = (d / "log/build_tree.log").read_text() if (d / "log/build_tree.log").exists() else ""
        m = ([None] + re.findall(r"Num-leaves is now (\d+)", leaves))[-1]
        print(f"| {s} | {m or '?'} / {passes[-1].group(4) if passes else '?'} | "
              f"{tree:.0f} s | {len(passes)} | {run_secs:.0f} s | "
              f"{statistics.median(aligned) if aligned else float('nan'):.1f} s | "
              f"{statistics.median(other) if other else float('nan'):.1f} s | {ali:.0f} s |")
    print(f"| all | | | | {total:.0f} s ({total / 60:.1f} min; issue 17's target: 45 min for "
          f"tri1-tri3) | | | |")
    dense, compact, same, n = align_both_ways(exp / "tri1", utts)
    print(f"\ngmm-align-compiled on {n} utterances of {exp}/tri1 job 1, its final model, in one "
          f"process: dense {dense:.2f} s, relabelled graphs {compact:.2f} s, "
          f"ratio {dense / compact:.2f}x; identical alignments {same}/{n}")
    return 0


def run(cmd: str, cwd: Path) -> float:
    """Run a recipe command through bash with path.sh sourced; return wall seconds."""
    t0 = time.perf_counter()
    proc = subprocess.run(["bash", "-c", f". ./path.sh && {cmd}"], cwd=cwd, text=True,
                          capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"gmm_speed.py: '{cmd}' failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def main() -> int:
    args = get_args()
    if args.tri_exp:
        return tri_report(Path(args.tri_exp).resolve(), args.utts)
    recipe = Path(args.recipe).resolve()
    for f in ("data/train/feats.scp", "data/train/cmvn.scp", "data/lang/L.fst"):
        if not (recipe / f).exists():
            sys.exit(f"gmm_speed.py: no such file {recipe / f} "
                     f"(run: cd {recipe} && ./run.sh --stop-stage 2)")
    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gmm_speed_"))
    mono, ali = scratch / "mono", scratch / "mono_ali"
    for d in (mono, ali):
        shutil.rmtree(d, ignore_errors=True)
    try:
        t_train = run(f"steps/train_mono.sh --nj {args.nj} --cmd utils/run.py "
                      f"data/train data/lang {mono}", recipe)
        t_align = run(f"steps/align_si.sh --nj {args.nj} --cmd utils/run.py "
                      f"data/train data/lang {mono} {ali}", recipe)
        t_fmllr = run(f"utils/run.py JOB=1:{args.nj} {ali}/log/fmllr.JOB.log ali-to-post.py "
                      f"'ark:gunzip -c {ali}/ali.JOB.gz|' ark:- \\| weight-silence-post.py 0.0 "
                      f"$(cat data/lang/phones/silence.csl) {ali}/final.mdl ark:- ark:- \\| "
                      f"gmm-est-fmllr.py --spk2utt=ark:data/train/split{args.nj}/JOB/spk2utt "
                      f"{ali}/final.mdl pipeline:{ali}/feats.JOB.json ark:- ark:{ali}/trans.JOB",
                      recipe)
        impr = [FMLLR_RE.search(f.read_text()) for f in sorted((ali / "log").glob("fmllr.*.log"))]
        passes = [PASS_RE.search(line) for line in (mono / "log/summary.log").read_text().splitlines()]
        passes = [m for m in passes if m]
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    frames = int(float(passes[-1].group(3)))
    realign_iters = set(TrainMonoSchedule().realign_iters)
    realign = [float(m.group(7)) for m in passes if int(m.group(1)) in realign_iters]
    other = [float(m.group(7)) for m in passes if int(m.group(1)) not in realign_iters]
    print(f"\nMonophone training on {recipe.name}/data/train: {frames} frames, nj={args.nj}, "
          f"{len(passes)} passes, final {passes[-1].group(4)} Gaussians, "
          f"avg log-like/frame {passes[-1].group(2)}\n")
    print("| measure | value |")
    print("|---|---:|")
    print(f"| train_mono.sh wall time | {t_train:.1f} s (target < 180 s: "
          f"{'met' if t_train < 180 else 'NOT met'}) |")
    print(f"| median realignment pass | {statistics.median(realign):.2f} s ({len(realign)} passes) |")
    if other:
        print(f"| median pass without realignment | {statistics.median(other):.2f} s "
              f"({len(other)} passes) |")
    print(f"| align_si.sh with final.mdl | {t_align:.1f} s, {frames / t_align:,.0f} frames/s "
          f"(process start-up included) |")
    failed = [m.group(6) for m in passes if m.group(6) is not None]
    print(f"| alignment failures (last realignment) | {failed[-1] if failed else 'n/a'} |")
    speakers = sum(1 for line in (recipe / "data/train/spk2utt").read_text().splitlines() if line)
    frames_f = sum(float(m.group(2)) for m in impr if m)
    gain = sum(float(m.group(1)) * float(m.group(2)) for m in impr if m) / max(frames_f, 1.0)
    print(f"| gmm-est-fmllr.py per speaker (full, 40 passes) | {t_fmllr / speakers:.3f} s "
          f"({speakers} speakers, {t_fmllr:.1f} s with ali-to-post and weight-silence-post; "
          f"auxf impr {gain:.3f}/frame over {frames_f:.0f} frames) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
