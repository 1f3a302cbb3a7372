#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The GMM rows of RESULTS.md's table, from what run.sh left under exp/: the monophone
(exp/mono/decode_test, stage 4) and, when stage 8 has run, tri1 (exp/tri1/decode_test).

Each row has the best WER with its 95% bootstrap interval, the best LM weight and penalty, and
the model's size read from its final.mdl; tri1's notes hold its difference from the monophone,
the difference's interval, MAPSSWE p and the verdict, through nnetmix.train.recipe_report (what
``compare-wer.py --decode-dirs=true exp/mono/decode_test exp/tri1/decode_test`` prints). Nothing
here is typed by hand: rerun it after run.sh and paste its rows.

Usage: local/gmm_results.py [--exp exp]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# the nnetmix tree (egs/digits/s5/local -> ../../../..), in case nnetmix is not installed
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), *[".."] * 4))

from nnetmix.kaldi import read_gmm_model  # noqa: E402
from nnetmix.train.recipe_report import (best_wer_line, compare_systems,  # noqa: E402
                                         comparison_cells, wer_ci)

__all__ = ["SYSTEMS", "gmm_rows"]

#: (directory under exp/, what it is, run.sh stage that decodes it), in ladder order
SYSTEMS = (("mono", "monophone GMM", 4), ("tri1", "triphone GMM on deltas", 8))


def gmm_rows(exp: Path) -> list[str]:
    """One Markdown row per decoded system of SYSTEMS; each after the first is compared with
    the first (the monophone) on the same test set."""
    rows = []
    for name, what, stage in SYSTEMS:
        dec = exp / name / "decode_test"
        line = best_wer_line(dec)
        if line is None:
            continue
        _, am = read_gmm_model(str(exp / name / "final.mdl"))
        size = (f"{am.num_gauss} Gaussians" if name == "mono"
                else f"{am.num_pdfs} leaves, {am.num_gauss} Gaussians")
        w = wer_ci(dec)
        counts = line[line.index("["):line.index("]") + 1]
        lmwt, wip = w.wer_file.split("_")[1:3]
        notes = "acwt 0.083333"
        if rows:
            base = SYSTEMS[0][0]
            diff, p, verdict = comparison_cells(
                compare_systems(exp / base / "decode_test", dec, (base, name)))
            notes += f"; against {base}: {diff}, MAPSSWE p {p}, {verdict}"
        rows.append(f"| {what} (`exp/{name}`, {size}) | {stage} | {w.wer:.2f} {counts}, 95% "
                    f"interval [{w.low:.2f}, {w.high:.2f}] | {lmwt} / {wip} | {notes} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exp", type=Path, default=Path("exp"), help="the run's exp/ directory")
    args = parser.parse_args(argv)
    rows = gmm_rows(args.exp)
    if not rows:
        sys.exit(f"gmm_results.py: no decoded GMM under {args.exp} (run stages 0-4)")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
