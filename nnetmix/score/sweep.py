"""The language-model-weight sweep of local/score.sh, from hypothesis texts on.

Decoding gives lattices; for every (LM weight, word insertion penalty) pair the scoring script
takes the best path and writes its words as a Kaldi text file. Given those files, this module
writes ``<decode-dir>/wer_<LMWT>_<WIP>`` (compute-wer's three lines, as Kaldi's score_kaldi.sh
names them) and picks the best pair as utils/best_wer.sh would, writing it to
``<decode-dir>/scoring_kaldi/best_wer``. The best-path step itself needs lattices and lives
elsewhere.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from nnetmix.data.io import write_lines
from nnetmix.score.best import best_wer_line
from nnetmix.score.texttable import iter_token_table, read_token_table
from nnetmix.score.wer import ScoreError, WerStats, compute_wer, format_wer

__all__ = ["SweepResult", "score_sweep", "lmwt_range", "DEFAULT_HYP_PATTERN"]

#: Where score_kaldi.sh leaves the best-path words: scoring_kaldi/penalty_$wip/$LMWT.txt
DEFAULT_HYP_PATTERN = "scoring_kaldi/penalty_{wip}/{lmwt}.txt"


@dataclass
class SweepResult:
    lmwt: int
    wip: str
    wer_file: str
    stats: WerStats


def lmwt_range(lo: int, hi: int) -> list[int]:
    if lo > hi:
        raise ScoreError(f"--min-lmwt {lo} is above --max-lmwt {hi}")
    return list(range(lo, hi + 1))


def score_sweep(ref_rspecifier: str, decode_dir: str | os.PathLike, lmwts: Sequence[int],
                wips: Sequence[str], hyp_pattern: str = DEFAULT_HYP_PATTERN,
                mode: str = "present") -> tuple[list[SweepResult], str]:
    """Score every (lmwt, wip) hypothesis file; return the results and best_wer.sh's best line.

    ``hyp_pattern`` is relative to ``decode_dir`` with ``{lmwt}`` and ``{wip}`` fields; each file
    is a Kaldi text (``utt w1 w2 ...``). The WIP is kept as the string given (0.0, 0.5, 1.0) so
    file names match the scoring script's.
    """
    decode = Path(decode_dir)
    refs = list(iter_token_table(ref_rspecifier))
    results: list[SweepResult] = []
    lines = []
    for wip in wips:
        for lmwt in lmwts:
            hyp = decode / hyp_pattern.format(lmwt=lmwt, wip=wip)
            if not hyp.is_file():
                raise ScoreError(f"no such file {hyp} (the best path for LM weight {lmwt}, "
                                 f"insertion penalty {wip})")
            stats = compute_wer(refs, read_token_table(f"ark:{hyp}"), mode)
            out = decode / f"wer_{lmwt}_{wip}"
            text = format_wer(stats)
            write_lines(out, text)
            results.append(SweepResult(lmwt, wip, str(out), stats))
            lines.append(f"{out}:{text[0]}")
    best = best_wer_line(lines)
    if best is None:
        raise ScoreError(f"no WER lines were produced in {decode}")
    (decode / "scoring_kaldi").mkdir(parents=True, exist_ok=True)
    write_lines(decode / "scoring_kaldi" / "best_wer", [best])
    return results, best
