"""Kaldi's compute-wer-bootci (src/bin/compute-wer-bootci.cc): a bootstrap confidence interval
of a system's WER, and with a second system the probability that it improves on the first.

The draws are :func:`nnetmix.score.significance.resample_sums`' (compare-wer.py's bootstrap);
the summary is Kaldi's, not Bisani and Ney's percentile interval: the mean of the drawn WERs
plus or minus 1.96 times their standard deviation (population form), and the share of draws in
which system 2 made fewer errors. Kaldi draws with the C library's rand() and separately for
each figure; here one seeded set of draws serves all three, so the numbers are Kaldi's in
distribution, not digit for digit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from nnetmix.score.significance import check_settings, resample_sums
from nnetmix.score.texttable import iter_token_table, read_token_table
from nnetmix.score.wer import MODES, ScoreError, edit_distance

__all__ = ["BootCI", "check_mode", "utterance_errors", "boot_ci", "format_boot_ci", "compute_wer_bootci"]


@dataclass
class BootCI:
    """Mean WER and the 95% half-width of each system (in %), and P(set 2 improves set 1)."""

    means: list[float]
    halves: list[float]
    p_improve: Optional[float] = None


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ScoreError(f"--mode option invalid: expected \"present\"|\"all\"|\"strict\", got "
                         f"{mode}")


def utterance_errors(refs: Sequence[tuple[str, Sequence[str]]],
                     hyps: Sequence[Mapping[str, Sequence[str]]], mode: str = "strict",
                     sources: Sequence[str] = ()) -> tuple[list[list[int]], list[int]]:
    """Per reference utterance, each system's word errors and the reference's words, as
    compute-wer-bootci counts them: ``strict`` fails on a missing hypothesis, ``present``
    leaves out an utterance some system lacks, ``all`` counts a missing one as all errors."""
    check_mode(mode)
    errors: list[list[int]] = [[] for _ in hyps]
    words: list[int] = []
    for key, ref in refs:
        missing = [i for i, h in enumerate(hyps) if key not in h]
        if missing and mode == "strict":
            src = sources[missing[0] + 1] if len(sources) > missing[0] + 1 else "the hypotheses"
            raise ScoreError(f"{src}: no hypothesis for key {key} and strict mode specifier "
                             "(use --mode=present or --mode=all)")
        if missing and mode == "present":
            continue
        for i, h in enumerate(hyps):
            errors[i].append(sum(edit_distance(ref, h[key])) if key in h else len(ref))
        words.append(len(ref))
    return errors, words


def boot_ci(errors: Sequence[Sequence[int]], words: Sequence[int], replications: int = 10000,
            seed: int = 0) -> BootCI:
    """Kaldi's GetBootstrapWERInterval for each system and, with two,
    GetBootstrapWERTwoSystemComparison."""
    check_settings(num_samples=replications)
    if len(words) == 0 or sum(words) == 0:
        raise ScoreError("no reference words to compute a WER on")
    columns = [np.asarray(e, np.int64) for e in errors] + [np.asarray(words, np.int64)]
    sums = resample_sums(columns, replications, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = [s / np.where(sums[-1] > 0, sums[-1], np.nan) for s in sums[:-1]]
    means, halves = [], []
    for r in rates:
        r = r[~np.isnan(r)]
        mean = float(r.mean())
        means.append(100.0 * mean)
        halves.append(100.0 * 1.96 * math.sqrt(max(float((r * r).mean()) - mean * mean, 0.0)))
    p = float(np.mean(sums[0] - sums[1] > 0)) if len(errors) == 2 else None
    return BootCI(means, halves, p)


def format_boot_ci(ci: BootCI) -> list[str]:
    """compute-wer-bootci's lines (std::fixed, precision 2)."""
    lines = [f"Set{i + 1}: %WER {m:.2f} 95% Conf Interval [ {m - h:.2f}, {m + h:.2f} ]"
             for i, (m, h) in enumerate(zip(ci.means, ci.halves))]
    if ci.p_improve is not None:
        lines.append(f"Probability of Set2 improving Set1: {100.0 * ci.p_improve:.2f}")
    return lines


def compute_wer_bootci(ref: str, hyps: Sequence[str], mode: str = "strict",
                       replications: int = 10000, seed: int = 0) -> BootCI:
    """compute-wer-bootci on rspecifiers: a reference and one or two hypothesis tables."""
    check_mode(mode)
    errors, words = utterance_errors(list(iter_token_table(ref)),
                                     [read_token_table(h) for h in hyps], mode, [ref, *hyps])
    return boot_ci(errors, words, replications, seed)
