# Copyright 2026 nnetmix authors. Apache 2.0.
"""WER per test condition: where on the test set the runs differ.

harbour synthesises every utterance under a condition (data/test/utt2cond: noise kind, SNR in
dB, reverberation, gain); the store keeps that file once per size
(``conditions-<size>.txt.gz``), and this table splits each run's errors by it: noise (none, SNR
of at least 10 dB, below 10 dB) and reverberation (none, sox reverb). The errors of an utterance
are counted as compute-wer counts them (:func:`nnetmix.score.wer.edit_distance`), so a row's
groups add up to its whole-set WER. The table describes; it tests nothing (the significance
tests are over the whole set, in the sections above it).
"""
from __future__ import annotations

from typing import Callable, Optional

from nnetmix.score.wer import edit_distance

from bench.experiments.report import table
from bench.experiments.store import Record, StoreError

__all__ = ["GROUPS", "harbour_groups", "section"]

SNR_SPLIT = 10.0      # dB: harbour's noisy utterances have 5-30 dB; below 10 is the hardest


def harbour_groups(fields: list[str]) -> tuple[str, ...]:
    """The groups of one harbour utt2cond line's fields (``kind snr reverb gain``)."""
    kind, snr, reverb = fields[:3]
    noise = ("clean" if kind == "clean" else
             f"SNR >= {SNR_SPLIT:g} dB" if float(snr) >= SNR_SPLIT else f"SNR < {SNR_SPLIT:g} dB")
    return noise, "dry" if reverb == "-" else "reverberant"


#: per task: its groups, in the table's order, and the function giving an utterance's groups
GROUPS: dict[str, tuple[tuple[str, ...], Callable[[list[str]], tuple[str, ...]]]] = {
    "harbour": (("clean", f"SNR >= {SNR_SPLIT:g} dB", f"SNR < {SNR_SPLIT:g} dB", "dry",
                 "reverberant"), harbour_groups),
}


def section(task: str, recs: list[Record], conditions: Optional[dict], decode: str,
            row_head: Callable[[Record], list[str]], head: list[str],
            right: tuple[int, ...] = ()) -> list[str]:
    """The "WER by test condition" section over ``recs`` (in their order) on ``decode``;
    ``row_head(r)`` gives each row's leading cells under ``head`` (``right``: those
    right-aligned). Empty without the task's groups or the store's conditions."""
    if task not in GROUPS or conditions is None or not recs:
        return []
    names, group_of = GROUPS[task]
    cols = ("all",) + names
    words = dict.fromkeys(cols, 0)
    rows = []
    for i, r in enumerate(recs):
        errors = dict.fromkeys(cols, 0)
        hyp = dict(r.tokens(decode, "hyp"))
        for utt, ref in r.tokens(decode, "ref"):
            if utt not in conditions:
                raise StoreError(f"{r.path}: utterance {utt} has no line in the test set's "
                                 f"conditions (made on other prerequisites?)")
            try:
                groups = group_of(conditions[utt])
            except (ValueError, IndexError):
                raise StoreError(f"the test set's conditions: utterance {utt}: "
                                 f"{' '.join(conditions[utt])!r} is not {task}'s "
                                 f"'kind snr reverb gain'") from None
            e = sum(edit_distance(ref, hyp.get(utt, [])))
            for g in ("all",) + groups:
                errors[g] += e
                if i == 0:      # every run decodes the same test set
                    words[g] += len(ref)
        rows.append(row_head(r) + [f"{100 * errors[g] / words[g]:.2f}" if words[g] else "-"
                                   for g in cols])
    return ["### WER by test condition", "",
            f"WER in % on {decode} of each run over the test utterances of each condition the "
            f"corpus was synthesised under: noise (none, an SNR of at least {SNR_SPLIT:g} dB, "
            f"below it) and reverberation (none, sox reverb), with the words of each group in "
            f"its column's head. The groups split the errors behind the whole-set WER above; "
            f"they are described, not tested (a group has a fraction of the words, and the "
            f"significance tests are over the whole set).", "",
            table(head + [f"{g} ({words[g]:,} words)" for g in cols], rows,
                  right=right + tuple(range(len(head), len(head) + len(cols))))]
