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
PASS_RE = re.compile(r"pass (\d+): avg-like-per-frame (\S+) over (\d+) frames, gauss (\d+), "
                     r"(?:aligned (\d+), failed (\d+), )?([\d.]+) s")


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipe", default=str(ROOT / "egs/digits/s5"), help="recipe directory")
    p.add_argument("--nj", type=int, default=2, help="parallel jobs")
    p.add_argument("--keep", default="", help="keep the experiment in this directory")
    return p.parse_args()


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
    frames = int(passes[-1].group(3))
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
