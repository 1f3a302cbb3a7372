# Copyright 2026 nnetmix authors. Apache 2.0.
"""The rules that decide whether a seed's claim held on egs/digits, written out so that a reader
can check each verdict against the numbers in the same table.

A claim is tested by one explicit comparison of measured numbers (:func:`within`,
:func:`worse_by`, :func:`not_worse`, :func:`close`, :func:`degrades_more`), with the tolerances
below. A claim whose runs are missing is "not measured", never "held".

Tolerances. ``WER_TOL`` = 0.5 absolute %WER: seed 001 calls its 0.3-0.4 degradation from 1 to
16-32 GPUs "limited decoding accuracy loss", so a difference up to 0.5 counts as no change.
``ACC_TOL`` = 1.0 absolute % CV frame accuracy (seed 000 Table 1 moves 59.3-60.2% across 2-16
nodes with all-reduce and calls it converged). On the digits test sets one word is 0.08% (full,
1198 words) to about 0.3% (quick) absolute, so every WER cell also shows its errors / words: a
verdict resting on a difference of a word or two is noted as such by the word counts beside it.
"""
from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

__all__ = ["WER_TOL", "ACC_TOL", "Claim", "within", "worse_by", "not_worse", "close",
           "degrades_more", "all_of", "status", "claims_markdown"]

WER_TOL = 0.5
ACC_TOL = 1.0


@dataclasses.dataclass
class Claim:
    """One seed claim, the rule that tests it, and what happened here."""

    source: str                 #: where the seed says it, e.g. "seed 000, Table 3"
    claim: str                  #: the claim in words
    seed: str                   #: the seed's own numbers behind it
    rule: str                   #: the comparison made here, with its tolerance
    here: str                   #: our numbers
    held: Optional[bool]        #: None: not measured (a run is missing)
    note: str = ""              #: e.g. "oversubscribed timings"


def _num(x: Optional[float]) -> bool:
    return x is not None


def within(a: Optional[float], ref: Optional[float], tol: float) -> Optional[bool]:
    """a is at most tol above ref (a <= ref + tol)."""
    return None if not (_num(a) and _num(ref)) else a <= ref + tol + 1e-9


def worse_by(a: Optional[float], ref: Optional[float], margin: float) -> Optional[bool]:
    """a is more than margin above ref (a > ref + margin): a is clearly worse."""
    return None if not (_num(a) and _num(ref)) else a > ref + margin + 1e-9


def not_worse(a: Optional[float], ref: Optional[float]) -> Optional[bool]:
    """a <= ref (for WER: a is at least as good)."""
    return None if not (_num(a) and _num(ref)) else a <= ref + 1e-9


def close(a: Optional[float], b: Optional[float], tol: float) -> Optional[bool]:
    """|a - b| <= tol."""
    return None if not (_num(a) and _num(b)) else abs(a - b) <= tol + 1e-9


def degrades_more(a1, an, b1, bn) -> Optional[bool]:
    """an > a1 and (an - a1) > (bn - b1): going from 1 to N workers costs a something, and more
    than it costs b (when a does not degrade at all, the claim that it degrades more fails)."""
    if not all(_num(x) for x in (a1, an, b1, bn)):
        return None
    return an > a1 + 1e-9 and (an - a1) > (bn - b1) + 1e-9


def all_of(results: Sequence[Optional[bool]]) -> Optional[bool]:
    """True when every result is True; None when any is unknown (and none is False)."""
    if any(r is False for r in results):
        return False
    if not results or any(r is None for r in results):
        return None
    return True


def status(held: Optional[bool]) -> str:
    return "not measured" if held is None else "**held**" if held else "**not held**"


def claims_markdown(claims: Sequence[Claim]) -> str:
    """The verdict table: claim, the seed's numbers, the rule, ours, verdict."""
    out = ["| seed claim | seed's numbers | rule applied here | here | verdict |",
           "|---|---|---|---|---|"]
    for c in claims:
        verdict = status(c.held) + (f" ({c.note})" if c.note else "")
        out.append(f"| {c.claim} ({c.source}) | {c.seed} | {c.rule} | {c.here} | {verdict} |")
    return "\n".join(out) + "\n"
