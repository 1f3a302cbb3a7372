# Copyright 2026 nnetmix authors. Apache 2.0.
"""Issue 33's claims: BMUF-NBM whose mixes send 1bit-compressed updates (with error feedback,
``--mix-compression 1bit``) or overlap the next block (``--overlap-mixing``, each mix applied one
block late) is as accurate as BMUF-NBM mixing whole models between blocks.

These are nnetmix's own options, not the seeds': the claim is that the speed they buy (the
scaling model's projections, bench/scaling_model.py) costs no WER. Each variant run is compared
with the uncompressed run of the same spec, learning rate included
(:func:`bench.experiments.stored.variant_pairs`), so the difference is the mixing's alone.
"""
from __future__ import annotations

from bench.experiments.report import num
from bench.experiments.verdict import Claim, all_of, cell, no_higher, wer_test

__all__ = ["VARIANTS", "WORKERS", "claims"]

#: variant (RunSpec.mix_variant) -> what it does, in the claim's words
VARIANTS = {"1bit": "1bit-compressed updates (error feedback)",
            "overlap": "overlapped mixing (each mix applied one block late)"}
#: the worker counts the harbour plan runs the variants at (its NBM 16 at the same rate)
WORKERS = (16,)


def claims(pairs: dict) -> list:
    """The claims on ``pairs``: (variant, N) -> (the uncompressed BMUF-NBM run, the variant's
    run), either None when not stored."""
    out = []
    for v, what in VARIANTS.items():
        tests = {n: wer_test(*pairs[v, n]) for n in WORKERS}
        here = "; ".join(f"{n}: {v} {num(_wer(pairs[v, n][1]))} vs NBM {num(_wer(pairs[v, n][0]))}"
                         f", {cell(t)}" for n, t in tests.items())
        out.append(Claim(
            "issue 33", f"BMUF-NBM with {what} loses nothing against BMUF-NBM mixing whole "
            "models", "none (nnetmix's option, not a seed's)",
            f"WER_nbm-{v}(N) - WER_nbm(N), same spec and learning rate, not significantly above "
            "0, every N", here, all_of([no_higher(t) for t in tests.values()])))
    return out


def _wer(run):
    return None if run is None else run.wer
