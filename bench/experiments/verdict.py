# Copyright 2026 nnetmix authors. Apache 2.0.
"""The rules that decide whether a seed's claim held on egs/digits, written out so that a reader
can check each verdict against the numbers in the same table.

**WER claims go through the significance tests of bin/compare-wer.py** (issue 16):
:func:`wer_test` compares two runs' best-scoring decodes of the same test set with
:func:`nnetmix.score.compare.compare_systems` on their texts (MAPSSWE as sclite's ``sc_stats``, and the Bisani and
Ney bootstrap interval of the WER difference). A difference is significant only when both say
so: MAPSSWE p < ``ALPHA`` and the 95% bootstrap interval of the difference excludes 0. A claim
that one run is better or worse than another then **held** or is **not held** (refuted); a
difference inside the interval is **not significant**, a tie, which neither confirms nor refutes
the claim, whatever the two WERs are. Claims that two WERs are the same ("similar", "loses
nothing", "keeps WER close") can be refuted by a significant difference but never confirmed by
its absence: they read "not significant" at best (:func:`same`, :func:`no_higher`). A claim about
how much a change *costs* (plain SGD loses more than NG-SGD going from 1 to N workers) is a
difference of two differences: :func:`change_test` resamples the four runs' per-utterance errors
together (the bootstrap) and tests the per-utterance contrast with MAPSSWE on utterances.

**Repeated training seeds**: where every run of a comparison was trained with two or more of
the same seeds, the comparison is made once per seed, each seed's runs against each other
(:class:`SeedTests`), and is significant only when every seed's test is significant in the
same direction; a single pair of runs decides it otherwise.

Claims on other numbers (CV frame accuracy, time shares, scaling factors) have no per-utterance
test and keep explicit comparisons with tolerances (:func:`close`, :func:`worse_by`):
``ACC_TOL`` = 1.0 absolute % CV frame accuracy (seed 000 Table 1 moves 59.3-60.2% across 2-16
nodes with all-reduce and calls it converged). A claim whose runs are missing is "not measured".
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional, Sequence, Union

from nnetmix.score import CompareOptions, align_ops, best_scoring, bootstrap, format_p, \
    iter_token_table, mapsswe, read_token_table
from nnetmix.score.compare import compare_systems
from nnetmix.score.wer import ScoreError

__all__ = ["ALPHA", "ACC_TOL", "HELD", "NOT_HELD", "TIE", "NOT_MEASURED", "WerTest", "SeedTests",
           "Claim", "wer_test", "change_test", "run_texts", "cell", "lower", "higher", "no_higher",
           "same", "close", "worse_by", "all_of", "as_verdict", "status", "claims_markdown",
           "TIMING_NOTE"]

ALPHA = 0.05
ACC_TOL = 1.0

HELD, NOT_HELD, TIE, NOT_MEASURED = "held", "not held", "not significant", "not measured"

#: where a timing claim's times come from, said after its verdict: runs whose workers fit the
#: machine's cores, bench/scaling_model.py beyond them, or runs with more workers than cores
TIMING_NOTE = {"measured": "measured timings", "model": "the scaling model's timings",
               "oversubscribed": "oversubscribed timings"}

Verdict = str
Outcome = Union[Optional[bool], Verdict]


@dataclasses.dataclass(frozen=True)
class WerTest:
    """WER(b) - WER(a) on the same test set, with its interval and the matched-pairs test."""

    diff: float                 #: % absolute, b minus a
    low: float                  #: the bootstrap interval of ``diff`` at level 1 - ALPHA
    high: float
    p_value: float              #: MAPSSWE's two-sided p
    significant: bool           #: p < ALPHA and the interval excludes 0

    @property
    def sign(self) -> int:
        """+1: b significantly higher, -1: significantly lower, 0: not significant."""
        return 0 if not self.significant else (1 if self.diff > 0 else -1)

    def cell(self) -> str:
        """'+0.98 [-0.49, +2.46], p 0.21' for the table's "here" column."""
        return f"{self.diff:+.2f} [{self.low:+.2f}, {self.high:+.2f}], p {format_p(self.p_value)}"


@dataclasses.dataclass(frozen=True)
class SeedTests:
    """The same comparison made once per training seed that every run of it was trained with
    (each seed's runs against each other, never across seeds). The rule over the seeds:
    significant, in one direction, only when every seed's test is significant in that
    direction; any tie or disagreement makes the whole a tie."""

    tests: tuple[tuple[int, WerTest], ...]   #: (training seed, its test), in seed order

    @property
    def sign(self) -> int:
        signs = {t.sign for _, t in self.tests}
        return signs.pop() if len(signs) == 1 else 0

    @property
    def significant(self) -> bool:
        return self.sign != 0

    def cell(self) -> str:
        """'seed 1 +0.98 [-0.49, +2.46], p 0.21; seed 2 ...' for the "here" column."""
        return "; ".join(f"seed {s} {t.cell()}" for s, t in self.tests)


Test = Union[WerTest, SeedTests]


def cell(t: Optional[Test]) -> str:
    """:meth:`WerTest.cell` (or :meth:`SeedTests.cell`), or '-' when a run is missing."""
    return "-" if t is None else t.cell()


def _seed_runs(runs: Sequence) -> Optional[list[tuple[int, tuple]]]:
    """[(seed, the runs of that seed)] for the training seeds that every one of ``runs`` was
    trained and decoded with (a run's ``seed_runs``: seed -> run, set by
    :func:`bench.experiments.stored.with_seeds`), when there are at least two; else None (the
    comparison is the one of the runs given)."""
    maps = [getattr(r, "seed_runs", None) or {} for r in runs]
    common = set.intersection(*(set(s for s, x in m.items() if x.wer is not None)
                                for m in maps))
    if len(common) < 2:
        return None
    return [(s, tuple(m[s] for m in maps)) for s in sorted(common)]


def _decode_dir(run) -> Path:
    return Path(run.path) / "decode_test"


def run_texts(run) -> tuple[list, dict, tuple[str, str]]:
    """(reference as (utterance, words) pairs, hypotheses by utterance, (where the reference
    is, where the hypotheses are)) of a run's best-scoring decode: a stored run's own
    :meth:`texts`, or a run directory's ``decode_test`` as local/score.sh left it."""
    if hasattr(run, "texts"):
        return run.texts()
    best = best_scoring(_decode_dir(run))
    if best.ref is None:
        raise ScoreError(f"{_decode_dir(run)}: no scoring/test_filt.txt (run local/score.sh)")
    return (list(iter_token_table(f"ark:{best.ref}")), read_token_table(f"ark:{best.hyp}"),
            (best.ref, best.hyp))


def _same_test_set(ref_a: list, src_a: str, ref_b: list, src_b: str) -> None:
    ta, tb = dict(ref_a), dict(ref_b)
    key = next((k for k in {**ta, **tb} if ta.get(k) != tb.get(k)), None)
    if key is not None:
        raise ScoreError(f"{src_b}: utterance {key} differs from {src_a} (the two runs were "
                         f"scored against different references)")


def wer_test(a, b) -> Optional[Test]:
    """Run b's WER against run a's (:class:`nnetmix.train.runlog.RunResult` or a stored run,
    or None when the run is missing or undecoded: then None); per seed (:class:`SeedTests`)
    where both were trained with two or more of the same seeds. Raises :class:`ScoreError` when
    the decodes lack local/score.sh's per-utterance texts or hold different test sets."""
    if a is None or b is None or a.wer is None or b.wer is None:
        return None
    seeds = _seed_runs((a, b))
    if seeds is not None:
        return SeedTests(tuple((s, _wer_test(*runs)) for s, runs in seeds))
    return _wer_test(a, b)


def _wer_test(a, b) -> WerTest:
    ref_a, hyp_a, src_a = run_texts(a)
    ref_b, hyp_b, src_b = run_texts(b)
    _same_test_set(ref_a, src_a[0], ref_b, src_b[0])
    cmp = compare_systems(ref_a, hyp_a, hyp_b, (src_a[0], src_a[1], src_b[1]),
                          opts=CompareOptions(alpha=ALPHA))
    boot, t = cmp.bootstrap, cmp.mapsswe
    return WerTest(boot.diff.value, boot.diff.low, boot.diff.high, t.p_value,
                   t.significant and boot.significant)


def _utterance_errors(run) -> tuple[dict[str, int], dict[str, int]]:
    """(errors, reference words) per utterance of a run's best-scoring decode."""
    refs, hyps, src = run_texts(run)
    errors, words = {}, {}
    for key, ref in refs:
        if key not in hyps:
            raise ScoreError(f"{src[1]}: no hypothesis for utterance {key} of {src[0]}")
        errors[key] = sum(op != "C" for op in align_ops(ref, hyps[key]))
        words[key] = len(ref)
    return errors, words


def change_test(a1, an, b1, bn) -> Optional[Test]:
    """(WER(an) - WER(a1)) - (WER(bn) - WER(b1)): does going from a1 to an cost more than going
    from b1 to bn? The four runs' per-utterance errors are resampled together (Bisani and Ney's
    bootstrap of ``errors(an) + errors(b1)`` against ``errors(a1) + errors(bn)``) and the
    per-utterance contrast is tested with MAPSSWE, one segment per utterance; per seed as
    :func:`wer_test`. None when a run is missing."""
    runs = (a1, an, b1, bn)
    if any(r is None or r.wer is None for r in runs):
        return None
    seeds = _seed_runs(runs)
    if seeds is not None:
        return SeedTests(tuple((s, _change_test(*rs)) for s, rs in seeds))
    return _change_test(*runs)


def _change_test(a1, an, b1, bn) -> WerTest:
    runs = (a1, an, b1, bn)
    per = [_utterance_errors(r) for r in runs]
    words = per[0][1]
    for r, (_, w) in zip(runs[1:], per[1:]):
        if w != words:
            raise ScoreError(f"{run_texts(r)[2][0]}: not the test set of {run_texts(a1)[2][0]}")
    keys = sorted(words)
    base = [per[0][0][k] + per[3][0][k] for k in keys]      # a1 + bn
    other = [per[1][0][k] + per[2][0][k] for k in keys]     # an + b1
    nw = [words[k] for k in keys]
    opts = CompareOptions(alpha=ALPHA)
    boot = bootstrap(base, other, nw, opts.num_bootstrap, opts.seed, ALPHA)
    segs = [(n, x, y) for n, x, y in zip(nw, base, other) if x or y]
    test = mapsswe(segs, ALPHA, "utterance")
    return WerTest(boot.diff.value, boot.diff.low, boot.diff.high, test.p_value,
                   test.significant and boot.significant)


def lower(t: Optional[Test]) -> Verdict:
    """The claim "b's WER is lower than a's"."""
    return NOT_MEASURED if t is None else {-1: HELD, 1: NOT_HELD, 0: TIE}[t.sign]


def higher(t: Optional[Test]) -> Verdict:
    """The claim "b's WER is higher than a's" (b degrades)."""
    return NOT_MEASURED if t is None else {1: HELD, -1: NOT_HELD, 0: TIE}[t.sign]


def no_higher(t: Optional[Test]) -> Verdict:
    """The claim "b loses nothing against a": refuted by a significantly higher WER, held by a
    significantly lower one, not significant otherwise (no difference found is no proof of
    none)."""
    return lower(t) if t is None or t.sign != 0 else TIE


def same(t: Optional[Test]) -> Verdict:
    """The claim "b and a give similar WER": refuted by a significant difference either way;
    otherwise not significant (never held)."""
    return NOT_MEASURED if t is None else NOT_HELD if t.significant else TIE


def close(a: Optional[float], b: Optional[float], tol: float) -> Optional[bool]:
    """|a - b| <= tol (numbers without a per-utterance test: CV frame accuracy)."""
    return None if a is None or b is None else abs(a - b) <= tol + 1e-9


def worse_by(a: Optional[float], ref: Optional[float], margin: float) -> Optional[bool]:
    """a is more than margin above ref (a > ref + margin)."""
    return None if a is None or ref is None else a > ref + margin + 1e-9


def as_verdict(x: Outcome) -> Verdict:
    """A verdict from a rule's result: True held, False not held, None not measured; a verdict
    string is kept."""
    if isinstance(x, str):
        if x not in (HELD, NOT_HELD, TIE, NOT_MEASURED):
            raise ValueError(f"unknown verdict {x!r}")
        return x
    return NOT_MEASURED if x is None else HELD if x else NOT_HELD


def all_of(results: Sequence[Outcome]) -> Verdict:
    """Every part must hold: not held when any part is refuted; else not measured when any part
    is missing (or there are none); else not significant when any part is a tie; else held."""
    v = [as_verdict(r) for r in results]
    for kind in (NOT_HELD, NOT_MEASURED, TIE):
        if kind in v or (kind == NOT_MEASURED and not v):
            return kind
    return HELD


@dataclasses.dataclass
class Claim:
    """One seed claim, the rule that tests it, and what happened here."""

    source: str                 #: where the seed says it, e.g. "seed 000, Table 3"
    claim: str                  #: the claim in words
    seed: str                   #: the seed's own numbers behind it
    rule: str                   #: the comparison made here
    here: str                   #: our numbers
    verdict: Outcome            #: HELD, NOT_HELD, TIE, NOT_MEASURED (a bool or None is read so)
    note: str = ""              #: e.g. TIMING_NOTE's "oversubscribed timings"

    def __post_init__(self):
        self.verdict = as_verdict(self.verdict)


def status(verdict: Outcome) -> str:
    v = as_verdict(verdict)
    return {HELD: "**held**", NOT_HELD: "**not held**", TIE: "not significant (a tie)",
            NOT_MEASURED: "not measured"}[v]


def claims_markdown(claims: Sequence[Claim]) -> str:
    """The verdict table: claim, the seed's numbers, the rule, ours, verdict."""
    out = [f"WER differences are b - a in % absolute with their {1 - ALPHA:.0%} bootstrap interval "
           "and MAPSSWE p (bin/compare-wer.py's tests); one is significant when p < "
           f"{ALPHA:g} and the interval excludes 0, and a claim resting on a difference that is "
           "not significant is a tie: neither held nor refuted.", "",
           "| seed claim | seed's numbers | rule applied here | here | verdict |",
           "|---|---|---|---|---|"]
    for c in claims:
        verdict = status(c.verdict) + (f" ({c.note})" if c.note else "")
        out.append(f"| {c.claim} ({c.source}) | {c.seed} | {c.rule} | {c.here} | {verdict} |")
    return "\n".join(out) + "\n"
