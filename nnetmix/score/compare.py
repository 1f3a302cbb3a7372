"""Compare two systems' transcripts of one test set: per-utterance alignment, MAPSSWE, bootstrap.

This is bin/compare-wer.py's library side and what RESULTS.md generators call. Inputs are Kaldi
text tables (``utt w1 w2 ...``), read as compute-wer reads them; for a decode directory scored by
local/score.sh, :func:`best_scoring` finds the files its best (LM weight, insertion penalty) was
scored from, and :func:`compare_decode_dirs` compares two such directories.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from nnetmix.data.io import atomic_open
from nnetmix.options import option
from nnetmix.score.best import best_wer_line
from nnetmix.score.significance import Bootstrap, Interval, Mapsswe, bootstrap, check_settings, \
    mapsswe, sclite_segments
from nnetmix.score.texttable import iter_token_table, read_token_table
from nnetmix.score.wer import ScoreError, align_ops

__all__ = ["CompareOptions", "Comparison", "BestScoring", "compare_systems", "compare_tables",
           "best_scoring", "compare_decode_dirs", "format_comparison", "write_comparison_json"]


@dataclass
class CompareOptions:
    """compare-wer.py's options (registered by the tool; the help text is here, once)."""

    alpha: float = option(0.05, "Significance level: MAPSSWE is significant when p < alpha; the "
                          "bootstrap intervals are at level 1 - alpha")
    num_bootstrap: int = option(10000, "Resampled test sets for the bootstrap intervals (Bisani "
                                "and Ney 2004)")
    seed: int = option(777, "Seed of the bootstrap's resampling")
    segmentation: str = option("sclite", "MAPSSWE segments: \"sclite\" (bounded by --min-good "
                               "words both systems got right, as sc_stats) or \"utterance\" (one "
                               "per utterance)")
    min_good: int = option(2, "Words both systems got right that bound a sclite segment (sc_stats "
                           "uses 2)")
    mode: str = option("strict", "\"strict\": both hypotheses must cover every reference "
                       "utterance; \"all\": a missing hypothesis counts as empty (all deletions), "
                       "as compute-wer --mode=all")

    def check(self) -> None:
        check_settings(self.alpha, self.num_bootstrap, self.min_good, self.segmentation)
        if self.mode not in ("strict", "all"):
            raise ScoreError(f"--mode={self.mode}: expected strict or all")


@dataclass
class Comparison:
    """Everything compare-wer.py reports, in the form --write-json writes."""

    names: tuple[str, str]
    sources: tuple[str, str, str]     #: reference, hypotheses of A, hypotheses of B
    num_utterances: int
    ref_words: int
    errors: tuple[int, int]
    missing: tuple[int, int]          #: reference utterances without a hypothesis (--mode=all)
    mapsswe: Mapsswe
    bootstrap: Bootstrap

    def to_dict(self) -> dict:
        systems = []
        for i, (name, wer) in enumerate(zip(self.names, (self.bootstrap.wer_a,
                                                          self.bootstrap.wer_b))):
            systems.append({"name": name, "hyp": self.sources[i + 1], "errors": self.errors[i],
                            "missing": self.missing[i], "wer": wer.value,
                            "ci": [wer.low, wer.high], "std_err": wer.std_err})
        diff = self.bootstrap.diff
        return {
            "ref": self.sources[0], "num_utterances": self.num_utterances,
            "ref_words": self.ref_words, "alpha": self.bootstrap.alpha, "systems": systems,
            "difference": {"of": f"{self.names[1]} - {self.names[0]}", "wer": diff.value,
                           "ci": [diff.low, diff.high], "std_err": diff.std_err,
                           "poi": self.bootstrap.poi, "significant": self.bootstrap.significant},
            "bootstrap": {"num_samples": self.bootstrap.num_samples, "seed": self.bootstrap.seed},
            "mapsswe": self.mapsswe.to_dict(),
        }


def compare_systems(refs: list[tuple[str, list[str]]], hyps_a: dict[str, list[str]],
                    hyps_b: dict[str, list[str]], sources: tuple[str, str, str],
                    names: tuple[str, str] = ("A", "B"),
                    opts: Optional[CompareOptions] = None) -> Comparison:
    """Align each utterance of ``refs`` (key, words) in both systems and run both tests.

    ``sources`` name the three tables in error messages. A hypothesis key that the reference
    lacks is an error (the sets differ); so is a reference key a system lacks, unless
    ``opts.mode == "all"``.
    """
    opts = opts or CompareOptions()
    opts.check()
    ref_keys = {k for k, _ in refs}
    for hyps, src in ((hyps_a, sources[1]), (hyps_b, sources[2])):
        extra = next((k for k in hyps if k not in ref_keys), None)
        if extra is not None:
            raise ScoreError(f"{src}: utterance {extra} is not in the reference {sources[0]} "
                             "(the two systems must be scored on the same test set)")
    segs: list[tuple[int, int, int]] = []
    ea, eb, nw = [], [], []
    missing = [0, 0]
    for key, ref in refs:
        ops = []
        for i, (hyps, src) in enumerate(((hyps_a, sources[1]), (hyps_b, sources[2]))):
            hyp = hyps.get(key)
            if hyp is None:
                if opts.mode == "strict":
                    raise ScoreError(f"{src}: no hypothesis for utterance {key} of the reference "
                                     f"{sources[0]} (use --mode=all to count it as empty)")
                missing[i] += 1
                hyp = []
            ops.append(align_ops(ref, hyp))
        errs = [sum(op != "C" for op in o) for o in ops]
        ea.append(errs[0])
        eb.append(errs[1])
        nw.append(len(ref))
        if opts.segmentation == "sclite":
            segs += sclite_segments(ops[0], ops[1], opts.min_good)
        elif errs[0] or errs[1]:
            segs.append((len(ref), errs[0], errs[1]))
    if not refs:
        raise ScoreError(f"{sources[0]}: no utterances in the reference")
    test = mapsswe(segs, opts.alpha, opts.segmentation, opts.min_good)
    boot = bootstrap(ea, eb, nw, opts.num_bootstrap, opts.seed, opts.alpha)
    return Comparison(names, sources, len(refs), sum(nw), (sum(ea), sum(eb)),
                      (missing[0], missing[1]), test, boot)


def compare_tables(ref: str, hyp_a: str, hyp_b: str, names: tuple[str, str] = ("A", "B"),
                   opts: Optional[CompareOptions] = None) -> Comparison:
    """:func:`compare_systems` on three rspecifiers (``ark:data/test/text``, ...)."""
    refs = list(iter_token_table(ref))
    return compare_systems(refs, read_token_table(hyp_a), read_token_table(hyp_b),
                           (ref, hyp_a, hyp_b), names, opts)


@dataclass
class BestScoring:
    """Where local/score.sh's best (LM weight, insertion penalty) of a decode dir came from."""

    wer_line: str          #: as utils/best_wer.sh prints it
    lmwt: int
    wip: str
    hyp: str               #: the hypothesis text compute-wer scored
    ref: Optional[str]     #: the reference it scored against, when the directory keeps it


_WER_FILE = re.compile(r"wer_(\d+)_(\S+)$")


def best_scoring(decode_dir: str | os.PathLike) -> BestScoring:
    """The best ``wer_LMWT_WIP`` of ``decode_dir`` and the hypothesis and reference behind it.

    As local/score.sh: ``grep -H WER $dir/wer_* | utils/best_wer.sh`` (files in C sort order, the
    first lowest rate wins). The texts are those compute-wer read, looked for in this order:
    local/score.sh's ``scoring/LMWT.WIP.tra.filt`` against ``scoring/test_filt.txt`` (after
    --ignore-words); egs/swbd's local/score_eval2000.sh's ``scoring_hub5/LMWT.WIP.all.txt``
    against ``scoring_hub5/ref.all.txt``, or for its ``score_<subset>`` directories the parent's
    ``scoring_hub5/LMWT.WIP.<subset>.txt`` and ``ref.<subset>.txt``; score-sweep.py's
    ``scoring_kaldi/penalty_WIP/LMWT.txt`` (its reference is not kept: ``ref`` is None).
    """
    d = Path(decode_dir)
    files = sorted(p for p in d.glob("wer_*") if _WER_FILE.search(p.name) and p.is_file())
    lines = []
    for p in files:
        with open(p, encoding="utf-8", errors="surrogateescape") as fh:
            lines += [f"{p}:{line.rstrip(chr(10))}" for line in fh if "WER" in line]
    best = best_wer_line(lines)
    if best is None:
        raise ScoreError(f"{d}: no wer_LMWT_WIP files with a %WER line (run local/score.sh first)")
    m = _WER_FILE.search(best.split()[-1])
    if m is None:
        raise ScoreError(f"{d}: cannot tell the LM weight and penalty from '{best}'")
    lmwt, wip = int(m.group(1)), m.group(2)
    hub5, subset = (d.parent, d.name[6:]) if d.name.startswith("score_") else (d, "all")
    candidates = [(d / "scoring" / f"{lmwt}.{wip}.tra.filt", d / "scoring" / "test_filt.txt"),
                  (hub5 / "scoring_hub5" / f"{lmwt}.{wip}.{subset}.txt",
                   hub5 / "scoring_hub5" / f"ref.{subset}.txt"),
                  (d / "scoring_kaldi" / f"penalty_{wip}" / f"{lmwt}.txt", None)]
    found = next(((h, r) for h, r in candidates if h.is_file()), None)
    if found is None:
        raise ScoreError(f"{d}: best is {best.split()[-1]} but no such file {candidates[0][0]} "
                         f"(nor {', '.join(str(h) for h, _ in candidates[1:])})")
    hyp, ref = found
    return BestScoring(best, lmwt, wip, str(hyp), str(ref) if ref and ref.is_file() else None)


def compare_decode_dirs(dir_a: str | os.PathLike, dir_b: str | os.PathLike,
                        ref: Optional[str] = None, names: Optional[tuple[str, str]] = None,
                        opts: Optional[CompareOptions] = None
                        ) -> tuple[Comparison, BestScoring, BestScoring]:
    """Compare the best-scoring hypotheses of two decode directories of one test set.

    ``ref`` (an rspecifier) defaults to dir A's ``scoring/test_filt.txt``; dir B's must then hold
    the same transcripts (the same data and --ignore-words), or it is an error.
    """
    (opts or CompareOptions()).check()
    best_a, best_b = best_scoring(dir_a), best_scoring(dir_b)
    if ref is None:
        if best_a.ref is None:
            raise ScoreError(f"{dir_a}: no scoring/test_filt.txt; give the reference text")
        ref = f"ark:{best_a.ref}"
        if best_b.ref is not None:
            ta, tb = read_token_table(ref), read_token_table(f"ark:{best_b.ref}")
            key = next((k for k in {**ta, **tb} if ta.get(k) != tb.get(k)), None)
            if key is not None:
                raise ScoreError(f"{best_b.ref}: utterance {key} differs from {best_a.ref} (the "
                                 "two directories were scored against different references)")
    names = names or (str(dir_a), str(dir_b))
    cmp = compare_tables(ref, f"ark:{best_a.hyp}", f"ark:{best_b.hyp}", names, opts)
    return cmp, best_a, best_b


def _ci(iv: Interval, signed: bool = False) -> str:
    f = "{:+.2f}" if signed else "{:.2f}"
    return f"{f.format(iv.value)} [ {f.format(iv.low)}, {f.format(iv.high)} ]"


def format_comparison(c: Comparison) -> list[str]:
    """The report compare-wer.py prints: stable keys first on each line, for grep and awk."""
    b, t = c.bootstrap, c.mapsswe
    level = f"{100 * (1 - b.alpha):g}%"
    lines = [f"# {c.num_utterances} utterances, {c.ref_words} reference words; intervals: "
             f"{level} bootstrap, {b.num_samples} resamplings of the utterances, seed {b.seed}"]
    for i, iv in enumerate((b.wer_a, b.wer_b)):
        lines.append(f"WER-CI {c.names[i]} {_ci(iv)} [ {c.errors[i]} / {c.ref_words} ]")
    verdict = "not significant" if not b.significant else \
        f"significant, {c.names[1] if b.diff.value < 0 else c.names[0]} better"
    lines.append(f"WER-DIFF {c.names[1]} - {c.names[0]} {_ci(b.diff, True)} POI {b.poi:.4f} "
                 f"({verdict})")
    verdict = "not significant" if not t.significant else \
        f"significant, {c.names[1] if t.better == 'B' else c.names[0]} better"
    lines.append(f"MAPSSWE Z {t.z:.3f} p {t.p_value:.4g} segments {t.num_segments} "
                 f"({t.segmentation}"
                 f"{f', min-good {t.min_good}' if t.segmentation == 'sclite' else ''}) "
                 f"at alpha {t.alpha:g}: {verdict}")
    return lines


def write_comparison_json(path: str | os.PathLike, c: Comparison, extra: Optional[dict] = None
                          ) -> None:
    """Write ``c.to_dict()`` (plus ``extra``) to ``path`` through a temporary name."""
    d = c.to_dict()
    d.update(extra or {})
    with atomic_open(path) as fh:
        json.dump(d, fh, indent=1)
        fh.write("\n")
