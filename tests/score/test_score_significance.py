"""MAPSSWE and the bootstrap (nnetmix/score/significance.py, compare.py) against hand-worked cases.

The expected segments are worked out by hand below from sclite's rule (a segment ends at two
reference words that both systems got right, or at the utterance end; segments without errors
are dropped), and the expected Z and p-values are computed here with the statistics module, not
with the code under test.
"""
import itertools
import math
import random
import statistics

import numpy as np
import pytest

from helpers import load_bin, write_lines
from nnetmix.score import CompareOptions, ScoreError, align_ops, best_scoring, bootstrap, \
    compare_decode_dirs, compare_systems, compute_wer, edit_distance, format_comparison, \
    format_p, format_wer, mapsswe, score_sweep, sclite_segments

compare_wer_bin = load_bin("compare-wer.py")


def z_and_p(diffs):
    """Gillick and Cox's statistic by hand: mean / (sample sd / sqrt n), two-sided normal p."""
    mean = statistics.fmean(diffs)
    z = mean / (statistics.stdev(diffs) / math.sqrt(len(diffs)))
    return z, 2.0 * (1.0 - statistics.NormalDist().cdf(abs(z)))


def table(text):
    return {line.split()[0]: line.split()[1:] for line in text.strip().splitlines()}


REF = """u1 the cat sat on the mat today
u2 one two three four five six
u3 red green blue
u4 up down
u5 a b c d e f g"""
# A: u1 'on'->'in'; u2 'three'->'tree'; u5 two substitutions with two good words between them.
HYP_A = """u1 the cat sat in the mat today
u2 one two tree four five six
u3 red green blue
u4 up down
u5 a x c d y f g"""
# B: u2 two substitutions around 'four' (one good word: no boundary); u3 the last word wrong;
# u4 two insertions at the end.
HYP_B = """u1 the cat sat on the mat today
u2 one too three four fine six
u3 red green glue
u4 up down now then
u5 a b c d e f g"""
#: (errors A, errors B) per sclite segment, by hand:
#: u1 (1,0); u2 one segment over 'two'..'six' (1,2); u3 (0,1); u4 (0,2); u5 two segments (1,0).
HAND_SEGMENTS = [(1, 0), (1, 2), (0, 1), (0, 2), (1, 0), (1, 0)]
#: per utterance instead: u1 (1,0) u2 (1,2) u3 (0,1) u4 (0,2) u5 (2,0)
HAND_UTTERANCES = [(1, 0), (1, 2), (0, 1), (0, 2), (2, 0)]


def _compare(ref=REF, a=HYP_A, b=HYP_B, **kw):
    refs = list(table(ref).items())
    return compare_systems(refs, table(a), table(b), ("ref", "a", "b"),
                           opts=CompareOptions(**kw))


def test_align_ops_split_as_edit_distance():
    rng = random.Random(3)
    for _ in range(2000):
        ref = [rng.choice("abc") for _ in range(rng.randint(0, 7))]
        hyp = [rng.choice("abcd") for _ in range(rng.randint(0, 7))]
        ops = align_ops(ref, hyp)
        assert (ops.count("I"), ops.count("D"), ops.count("S")) == edit_distance(ref, hyp)
        assert len(ref) == sum(op != "I" for op in ops)
        assert len(hyp) == sum(op != "D" for op in ops)
    assert align_ops("a b c".split(), "a x c d".split()) == ["C", "S", "C", "I"]


def test_sclite_segments_by_hand():
    # one good word between errors does not end a segment; two do (and are shared as its ends)
    assert sclite_segments(list("CSCSCC"), list("CCCCCC")) == [(6, 2, 0)]
    assert sclite_segments(list("CSCCSC"), list("CCCCCC")) == [(4, 1, 0), (4, 1, 0)]
    # an insertion between two good words breaks the run
    assert sclite_segments(list("CSCICC"), list("CCCCC")) == [(5, 2, 0)]
    # errors of either system open a segment; both-right utterances give none
    assert sclite_segments(list("CCCC"), list("CCCC")) == []
    # trailing insertions: the segment starts min_good - 1 words before the last good one
    assert sclite_segments(list("CCC"), list("CCCII")) == [(2, 0, 2)]
    assert sclite_segments(list("DD"), list("CC")) == [(2, 2, 0)]
    assert sclite_segments([], list("II")) == [(0, 0, 2)]
    # --min-good=1: a single good word is enough
    assert sclite_segments(list("CSCSC"), list("CCCCC"), min_good=1) == [(3, 1, 0), (3, 1, 0)]


@pytest.mark.parametrize("segmentation,hand", [("sclite", HAND_SEGMENTS),
                                               ("utterance", HAND_UTTERANCES)])
def test_mapsswe_hand_computed(segmentation, hand):
    c = _compare(segmentation=segmentation)
    t = c.mapsswe
    diffs = [a - b for a, b in hand]
    z, p = z_and_p(diffs)
    assert t.num_segments == len(hand)
    assert (t.errors_a, t.errors_b) == (sum(a for a, _ in hand), sum(b for _, b in hand))
    assert t.mean == pytest.approx(statistics.fmean(diffs), abs=1e-12)
    assert t.z == pytest.approx(z, rel=1e-12)
    assert t.p_value == pytest.approx(p, rel=1e-9)
    assert not t.significant and t.better == ""
    assert c.errors == (4, 5)  # the same totals as compute-wer's
    # the sclite case written out: d = [1,-1,-1,-2,1,1], Z = -0.30715..., p = 0.7587...
    if segmentation == "sclite":
        assert t.z == pytest.approx(-0.30715, abs=1e-5)
        assert t.p_value == pytest.approx(0.75873, abs=1e-4)


def test_identical_systems():
    c = _compare(a=HYP_A, b=HYP_A, num_bootstrap=500)
    # every segment has the same errors in both: d = 0 throughout
    assert c.mapsswe.num_segments == 4 and c.mapsswe.mean == 0.0
    assert c.mapsswe.z == 0.0 and c.mapsswe.p_value == 1.0
    assert not c.mapsswe.significant
    d = c.bootstrap.diff
    assert (d.value, d.low, d.high, c.bootstrap.poi) == (0.0, 0.0, 0.0, 0.0)
    assert not c.bootstrap.significant
    assert "not significant" in format_comparison(c)[-1]


def _clear_case():
    """60 utterances of 5 words: A makes one substitution in each; B in 10 of them, same place."""
    ref, a, b = [], {}, {}
    for i in range(60):
        key = f"u{i:02d}"
        words = ["w0", "w1", "w2", "w3", "w4"]
        ref.append((key, words))
        a[key] = ["w0", "w1", "xx", "w3", "w4"]
        b[key] = a[key] if i < 10 else list(words)
    return ref, a, b


def test_clearly_better_system_is_significant():
    ref, a, b = _clear_case()
    c = compare_systems(ref, a, b, ("r", "a", "b"), opts=CompareOptions(num_bootstrap=2000))
    z, p = z_and_p([0] * 10 + [1] * 50)  # Z = 17.17..., by hand
    assert c.mapsswe.z == pytest.approx(z, rel=1e-12) and z == pytest.approx(17.1756, abs=1e-3)
    assert c.mapsswe.p_value == pytest.approx(p, abs=1e-15)
    assert c.mapsswe.significant and c.mapsswe.better == "B"
    bt = c.bootstrap
    assert bt.diff.value == pytest.approx(100 * (10 - 60) / 300)
    assert bt.significant and bt.diff.high < 0 and bt.poi == 1.0
    assert bt.wer_a.low == bt.wer_a.high == 20.0  # A's rate is the same in every resampling
    lines = format_comparison(c)
    assert lines[-2].endswith("(significant, B better)")
    assert lines[-1].endswith("significant, B better")


def test_zero_variance_segments(caplog):
    # all differences +1: sclite prints Z = 0; the sign test's p is 2 * 0.5 ** n
    for n, significant in ((5, False), (8, True)):
        t = mapsswe([(3, 1, 0)] * n)
        p = 2 * 0.5 ** n
        assert t.p_value == pytest.approx(p, rel=1e-12) and t.significant == significant
        assert t.z == pytest.approx(statistics.NormalDist().inv_cdf(1 - p / 2), rel=1e-9)
        assert t.better == ("B" if significant else "")
    assert mapsswe([(3, 0, 2)] * 8).better == "A"
    assert "zero variance" in caplog.text
    one = mapsswe([(3, 1, 0)])  # a single segment is no evidence
    assert one.z == 0.0 and not one.significant


def test_bootstrap_against_exact_enumeration():
    # three utterances: every resampling is one of 27 equally likely index triples
    ea, eb, nw = [2, 0, 1], [0, 1, 1], [4, 3, 5]
    diffs, better = [], 0
    for idx in itertools.product(range(3), repeat=3):
        sa, sb, sn = (sum(x[i] for i in idx) for x in (ea, eb, nw))
        diffs.append(100.0 * (sb - sa) / sn)
        better += sb < sa
    bt = bootstrap(ea, eb, nw, num_samples=20000, seed=1)
    assert bt.poi == pytest.approx(better / 27, abs=0.015)
    assert bt.diff.std_err == pytest.approx(statistics.pstdev(diffs), rel=0.05)
    assert min(diffs) <= bt.diff.low <= bt.diff.high <= max(diffs)
    assert bt.diff.value == pytest.approx(100.0 * (2 - 3) / 12)
    single = bootstrap([2], [1], [8], num_samples=50)
    assert (single.wer_a.low, single.wer_a.high, single.wer_a.std_err) == (25.0, 25.0, 0.0)


def _exact_quantiles(values, alpha):
    """The alpha/2 and 1 - alpha/2 quantiles of equally likely values, and how far the CDF steps
    around them stay from alpha/2 (so that a sample of draws lands on the same atoms)."""
    v = sorted(values)
    n = len(v)
    lo = next(x for x in v if sum(y <= x for y in v) / n >= alpha / 2)
    hi = next(x for x in reversed(v) if sum(y >= x for y in v) / n >= alpha / 2)
    margin = min(abs(sum(y < lo for y in v) / n - alpha / 2), abs(sum(y <= lo for y in v) / n
                                                                 - alpha / 2),
                 abs(sum(y > hi for y in v) / n - alpha / 2), abs(sum(y >= hi for y in v) / n
                                                                  - alpha / 2))
    return lo, hi, margin


def test_bootstrap_interval_is_the_exact_percentile_interval():
    # five utterances: 3125 equally likely resamplings, enumerated; 40000 draws find the same
    # 2.5% and 97.5% points of WER_B - WER_A and of WER_A
    ea, eb, nw = [1, 1, 3, 2, 3], [0, 0, 0, 3, 1], [5, 7, 7, 6, 6]
    diffs, wers_a = [], []
    for idx in itertools.product(range(5), repeat=5):
        sa, sb, sn = (sum(x[i] for i in idx) for x in (ea, eb, nw))
        diffs.append(100.0 * (sb - sa) / sn)
        wers_a.append(100.0 * sa / sn)
    bt = bootstrap(ea, eb, nw, num_samples=40000, seed=3)
    for values, iv in ((diffs, bt.diff), (wers_a, bt.wer_a)):
        lo, hi, margin = _exact_quantiles(values, 0.05)
        assert margin > 0.004  # the premise: 5 standard errors of a share of 40000 draws
        assert (iv.low, iv.high) == (pytest.approx(lo), pytest.approx(hi))


def _simulated(rng, n, words=10, pa=0.2, pb=0.1):
    return rng.binomial(words, pa, n), rng.binomial(words, pb, n), np.full(n, words)


def test_bootstrap_interval_covers_the_true_difference():
    # true WER_B - WER_A = -10%; nominal 95% intervals over 40 simulated test sets
    rng = np.random.default_rng(11)
    covered = 0
    for k in range(40):
        bt = bootstrap(*_simulated(rng, 150), num_samples=1000, seed=k)
        covered += bt.diff.contains(-10.0)
        assert bt.wer_a.low <= bt.wer_a.value <= bt.wer_a.high
    assert covered >= 34, covered


def test_bootstrap_interval_shrinks_with_more_utterances():
    rng = np.random.default_rng(5)
    small = bootstrap(*_simulated(rng, 100), num_samples=2000, seed=1)
    large = bootstrap(*_simulated(rng, 1600), num_samples=2000, seed=1)
    width = lambda iv: iv.high - iv.low  # noqa: E731
    # 16 times the utterances: about a quarter of the width
    assert width(large.diff) < 0.5 * width(small.diff)
    assert width(large.wer_a) < 0.5 * width(small.wer_a)
    assert large.diff.contains(-10.0) and small.diff.contains(-10.0)


def test_bootstrap_agrees_with_kaldialigns():
    # kaldialign.bootstrap_wer_ci is another implementation of Bisani and Ney (its interval is
    # mean +- 1.96 standard errors): the same standard errors and poi within resampling noise
    import kaldialign

    rng = random.Random(8)
    refs = [[rng.choice("abcdefgh") for _ in range(rng.randint(2, 9))] for _ in range(200)]

    def noisy(ref, p):
        return [rng.choice("xyz") if rng.random() < p else w for w in ref if rng.random() > p / 3]

    ha, hb = [noisy(r, 0.15) for r in refs], [noisy(r, 0.12) for r in refs]
    theirs = kaldialign.bootstrap_wer_ci(refs, ha, hb, replications=10000, seed=2)
    table_ = {f"u{i:03d}": r for i, r in enumerate(refs)}
    ours = compare_systems(list(table_.items()), dict(zip(table_, ha)), dict(zip(table_, hb)),
                           ("r", "a", "b"), opts=CompareOptions(num_bootstrap=10000)).bootstrap
    for iv, key in ((ours.wer_a, "system1"), (ours.wer_b, "system2")):
        assert iv.value == pytest.approx(100 * theirs[key]["wer"], abs=0.2)
        assert iv.std_err == pytest.approx(100 * theirs[key]["ci95"] / 1.96, rel=0.1)
    assert 0.05 < ours.poi < 0.95  # a close pair, so that poi says something
    assert ours.poi == pytest.approx(theirs["p_s2_improv_over_s1"], abs=0.03)


def test_seed_determines_the_bootstrap():
    args = ([1, 0, 3, 2, 0], [0, 0, 1, 2, 1], [5, 4, 6, 7, 3])
    one, two = bootstrap(*args, seed=9), bootstrap(*args, seed=9)
    assert one == two
    assert bootstrap(*args, seed=10).diff.std_err != one.diff.std_err


def _run(capsys, *argv):
    rc = compare_wer_bin.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def texts(tmp_path):
    for name, text in (("ref", REF), ("a", HYP_A), ("b", HYP_B)):
        (tmp_path / name).write_text(text + "\n")
    return tmp_path


def test_tool_report_and_json(texts, capsys):
    import json

    js = texts / "cmp.json"
    rc, out, err = _run(capsys, "--names=mono,dnn", "--num-bootstrap=300", "--seed=4",
                        f"--write-json={js}", f"ark:{texts / 'ref'}", f"ark:{texts / 'a'}",
                        f"ark:{texts / 'b'}")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[1].startswith("WER-CI mono 16.00 [ ") and lines[1].endswith("[ 4 / 25 ]")
    assert lines[3].startswith("WER-DIFF dnn - mono +4.00 [ ")
    assert lines[4].startswith("MAPSSWE Z -0.307 p 0.7587 segments 6 (sclite, min-good 2) at "
                               "alpha 0.05: not significant")
    assert "LOG (compare-wer.py" in err and "Compared 5 utterances (25 reference words)" in err
    d = json.loads(js.read_text())
    assert [s["name"] for s in d["systems"]] == ["mono", "dnn"]
    assert d["systems"][0]["errors"] == 4 and d["ref_words"] == 25
    assert d["mapsswe"]["p_value"] == pytest.approx(0.75873, abs=1e-4)
    assert d["difference"]["significant"] is False and d["bootstrap"]["seed"] == 4
    # the same seed gives the same file; the JSON is written whole or not at all
    first = js.read_text()
    _run(capsys, "--num-bootstrap=300", "--seed=4", "--names=mono,dnn", f"--write-json={js}",
         f"ark:{texts / 'ref'}", f"ark:{texts / 'a'}", f"ark:{texts / 'b'}")
    assert js.read_text() == first
    _run(capsys, "--num-bootstrap=300", "--seed=5", "--names=mono,dnn", f"--write-json={js}",
         f"ark:{texts / 'ref'}", f"ark:{texts / 'a'}", f"ark:{texts / 'b'}")
    assert json.loads(js.read_text())["difference"] != d["difference"]
    assert [p.name for p in texts.iterdir() if p.name.startswith(".")] == []
    rc, out, err = _run(capsys, f"ark:{texts / 'ref'}", f"ark:{texts / 'a'}")
    assert rc == 1 and "Usage: compare-wer.py" in err


def _scored_dir(d, refs, hyps_by_lmwt, wip="0.0"):
    """A decode dir as local/score.sh leaves it: scoring/test_filt.txt, LMWT.WIP.tra(.filt), wer_*."""
    (d / "scoring").mkdir(parents=True)
    write_lines(d / "scoring" / "test_filt.txt", [f"{k} {' '.join(w)}" for k, w in refs])
    for lmwt, hyps in hyps_by_lmwt.items():
        lines = [f"{k} {' '.join(w)}" for k, w in hyps.items()]
        write_lines(d / "scoring" / f"{lmwt}.{wip}.tra", lines)
        write_lines(d / "scoring" / f"{lmwt}.{wip}.tra.filt", lines)
        write_lines(d / f"wer_{lmwt}_{wip}", format_wer(compute_wer(refs, hyps, "present")))
    return d


def test_decode_dirs_take_the_best_lm_weight(tmp_path, capsys):
    import json

    refs = list(table(REF).items())
    a, b = table(HYP_A), table(HYP_B)
    worse = {k: w[:-1] for k, w in a.items()}  # drops every last word: worse than A
    da = _scored_dir(tmp_path / "mono", refs, {9: worse, 10: a})
    db = _scored_dir(tmp_path / "dnn", refs, {12: b, 8: worse})
    best = best_scoring(da)
    assert (best.lmwt, best.wip) == (10, "0.0") and best.hyp.endswith("scoring/10.0.0.tra.filt")
    assert best.wer_line.startswith("%WER 16.00 [ 4 / 25") and best.wer_line.endswith("wer_10_0.0")
    cmp, _, bb = compare_decode_dirs(da, db)
    assert bb.lmwt == 12 and cmp.errors == (4, 5)
    assert cmp.mapsswe.z == pytest.approx(z_and_p([a - b for a, b in HAND_SEGMENTS])[0])
    assert cmp.names == (str(da), str(db))
    js = tmp_path / "c.json"
    rc, out, err = _run(capsys, "--decode-dirs=true", "--num-bootstrap=200", f"--write-json={js}",
                        str(da), str(db))
    assert rc == 0, err
    d = json.loads(js.read_text())
    assert d["decode_dirs"]["A"]["lmwt"] == 10 and d["decode_dirs"]["B"]["lmwt"] == 12
    assert "best %WER 16.00" in err


def test_decode_dirs_of_score_eval2000(tmp_path):
    # egs/swbd's layout: wer_* in the decode dir (all) and score_<subset>/, texts in scoring_hub5/
    refs = list(table(REF).items())
    sub = [(k, w) for k, w in refs if k in ("u1", "u2")]
    for name, hyps in (("a", table(HYP_A)), ("b", table(HYP_B))):
        d = tmp_path / name
        (d / "scoring_hub5").mkdir(parents=True)
        (d / "score_swbd").mkdir()
        for subset, r, out in (("all", refs, d), ("swbd", sub, d / "score_swbd")):
            h = {k: hyps[k] for k, _ in r}
            write_lines(d / "scoring_hub5" / f"ref.{subset}.txt", [f"{k} {' '.join(w)}"
                                                                   for k, w in r])
            write_lines(d / "scoring_hub5" / f"9.0.0.{subset}.txt", [f"{k} {' '.join(w)}"
                                                                     for k, w in h.items()])
            write_lines(out / "wer_9_0.0", format_wer(compute_wer(r, h)))
    cmp, best, _ = compare_decode_dirs(tmp_path / "a", tmp_path / "b",
                                       opts=CompareOptions(num_bootstrap=100))
    assert best.hyp.endswith("a/scoring_hub5/9.0.0.all.txt") and cmp.num_utterances == 5
    cmp, best, _ = compare_decode_dirs(tmp_path / "a" / "score_swbd", tmp_path / "b" / "score_swbd",
                                       opts=CompareOptions(num_bootstrap=100))
    assert best.ref.endswith("a/scoring_hub5/ref.swbd.txt") and cmp.num_utterances == 2
    assert cmp.errors == (2, 2)  # u1: A 1; u2: A 1, B 2


def test_decode_dir_from_score_sweep(tmp_path):
    # score-sweep.py's layout: hypotheses under scoring_kaldi/, no scoring/test_filt.txt
    refs = list(table(REF).items())
    write_lines(tmp_path / "ref", REF.splitlines())
    for name, hyp in (("a", HYP_A), ("b", HYP_B)):
        d = tmp_path / name / "scoring_kaldi" / "penalty_0.5"
        d.mkdir(parents=True)
        write_lines(d / "7.txt", hyp.splitlines())
        score_sweep(f"ark:{tmp_path / 'ref'}", tmp_path / name, [7], ["0.5"])
    assert best_scoring(tmp_path / "a").ref is None
    with pytest.raises(ScoreError, match="no scoring/test_filt.txt; give the reference"):
        compare_decode_dirs(tmp_path / "a", tmp_path / "b")
    cmp, ba, _ = compare_decode_dirs(tmp_path / "a", tmp_path / "b", f"ark:{tmp_path / 'ref'}",
                                     opts=CompareOptions(num_bootstrap=100))
    assert ba.hyp.endswith("scoring_kaldi/penalty_0.5/7.txt") and cmp.num_utterances == len(refs)


def test_format_p():
    assert [format_p(p) for p in (1.0, 0.0456, 0.00012, 9.9e-5, 7.3e-51)] == \
        ["1", "0.046", "0.00012", "< 0.0001", "< 0.0001"]
