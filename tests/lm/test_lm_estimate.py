"""Kneser-Ney estimation: hand-worked numbers on a toy corpus, SRILM's discount formulas, and the
old digits bigram estimator against -ukndiscount."""
import math
from fractions import Fraction as F

import numpy as np
import pytest

from helpers import TOY, markov_sentences, toy_sentences
from nnetmix.lang.arpa import estimate_kn_bigram
from nnetmix.lm import (KnOptions, LmError, count_of_counts, count_sentences, estimate_kn,
                        kn_discount)

# The toy corpus, with <s> and </s> added (TOY in tests/helpers.py):
#    1 <s> d </s>        2 <s> c c </s>      3 <s> b a </s>      4 <s> d c </s>
#    5 <s> a b c a </s>  6 <s> a b </s>      7 <s> a b </s>      8 <s> d </s>
#    9 <s> a b </s>     10 <s> c c </s>
# 20 words, 10 sentences. Predicted words (events): a b c d </s>, so V = 5 for the uniform level.
#
# Bigram counts (30 = 20 words + 10 </s>):
#   <s> a 4   <s> b 1   <s> c 2   <s> d 3   a b 4   a </s> 2   b a 1   b c 1   b </s> 3
#   c a 1     c c 2     c </s> 3  d c 1     d </s> 2
# Unigram continuation counts N1+(. w), the distinct words before w:
#   a {<s>, b, c} 3   b {<s>, a} 2   c {<s>, b, c, d} 4   d {<s>} 1   </s> {a, b, c, d} 4
#   total 14; counts of counts n1..n4 = 1 (d), 1 (b), 1 (a), 2 (c, </s>)
#   Y = n1/(n1+2n2) = 1/3; D1 = 1 - 2Y n2/n1 = 1/3; D2 = 2 - 3Y n3/n2 = 1; D3+ = 3 - 4Y n4/n3 = 1/3
#   gamma() = (D1 N1 + D2 N2 + D3+ N3+) / 14 = (1/3 + 1 + 3/3) / 14 = 1/6, and uniform 1/V = 1/5:
#   p(a)    = (3 - 1/3)/14 + 1/30 = 47/210      p(b) = (2 - 1)/14 + 1/30 = 22/210
#   p(c)    = (4 - 1/3)/14 + 1/30 = 62/210      p(d) = (1 - 1/3)/14 + 1/30 = 17/210
#   p(</s>) = (4 - 1/3)/14 + 1/30 = 62/210      (sum 210/210)
UNI = {"a": F(47, 210), "b": F(22, 210), "c": F(62, 210), "d": F(17, 210), "</s>": F(62, 210)}

# Order 2, bigram level (top order: raw counts). Counts of counts over the 14 bigrams:
#   n1 = 5 (<s> b, b a, b c, c a, d c), n2 = 4 (<s> c, a </s>, c c, d </s>),
#   n3 = 3 (<s> d, b </s>, c </s>), n4 = 2 (<s> a, a b)
#   Y = 5/13; D1 = 1 - 2(5/13)(4/5) = 5/13; D2 = 2 - 3(5/13)(3/4) = 59/52;
#   D3+ = 3 - 4(5/13)(2/3) = 77/39
B_D1, B_D2, B_D3 = F(5, 13), F(59, 52), F(77, 39)


def _lm(order, modified=True, interpolate=True, gtmin=(1, 1, 1, 1), sents=None, **kw):
    counts = count_sentences(sents or toy_sentences(), order, **kw)
    return estimate_kn(counts, KnOptions(order=order, modified=modified,
                                         interpolate=interpolate, gtmin=gtmin))


def _p(lm, word, history=()):
    """p(word | history); a history of one word may be given as a string."""
    return 10.0 ** lm.log10_prob(word, [history] if isinstance(history, str) else list(history))


def test_toy_counts_by_hand():
    c = count_sentences(toy_sentences(), 3)
    assert (c.stats.sentences, c.stats.words) == (10, 20)
    words = c.vocab.words
    bigrams = {tuple(words[i] for i in row): int(n) for row, n in
               zip(c.words(2, np.arange(len(c.tables[1]))), c.tables[1].count)}
    assert bigrams == {("<s>", "a"): 4, ("<s>", "b"): 1, ("<s>", "c"): 2, ("<s>", "d"): 3,
                       ("a", "b"): 4, ("a", "</s>"): 2, ("b", "a"): 1, ("b", "c"): 1,
                       ("b", "</s>"): 3, ("c", "a"): 1, ("c", "c"): 2, ("c", "</s>"): 3,
                       ("d", "c"): 1, ("d", "</s>"): 2}
    assert words == ["</s>", "<s>", "<unk>", "a", "b", "c", "d"]  # C order: ids sort as words


def test_modified_kn_order2_by_hand():
    lm = _lm(2)
    assert [x for d in lm.discounts for x in (d.d1, d.d2, d.d3)] == pytest.approx(
        [1 / 3, 1, 1 / 3, float(B_D1), float(B_D2), float(B_D3)])
    arpa = lm.to_arpa_lm()
    for w, p in UNI.items():
        assert _p(arpa, w) == pytest.approx(float(p), rel=1e-12)
    # History a: a b (4), a </s> (2); c(a) = 6, one word seen twice, one 3+ times:
    #   gamma(a) = (D2 + D3+)/6 = 485/936
    g_a = (B_D2 + B_D3) / 6
    assert g_a == F(485, 936)
    assert _p(arpa, "b", "a") == pytest.approx(float((4 - B_D3) / 6 + g_a * UNI["b"]), rel=1e-12)
    assert _p(arpa, "</s>", "a") == pytest.approx(float((2 - B_D2) / 6 + g_a * UNI["</s>"]),
                                                  rel=1e-12)
    # c never follows a: the backoff weight is gamma(a) itself, so p(c|a) = gamma(a) p(c)
    assert ("a", "c") not in arpa.ngrams[1]
    assert _p(arpa, "c", "a") == pytest.approx(float(g_a * UNI["c"]), rel=1e-12)
    assert arpa.ngrams[0][("a",)][1] == pytest.approx(math.log10(g_a), abs=1e-12)
    # History <s>: a 4, b 1, c 2, d 3; c(<s>) = 10: gamma = (D1 + D2 + 2 D3+)/10
    g_s = (B_D1 + B_D2 + 2 * B_D3) / 10
    assert _p(arpa, "a", "<s>") == pytest.approx(float((4 - B_D3) / 10 + g_s * UNI["a"]),
                                                 rel=1e-12)
    assert _p(arpa, "</s>", "<s>") == pytest.approx(float(g_s * UNI["</s>"]), rel=1e-12)
    # <s> is never predicted: -99 in the file, as SRILM writes it; </s> is no history
    prob, bow = arpa.ngrams[0][("<s>",)]
    assert prob == -math.inf and bow == pytest.approx(math.log10(g_s), abs=1e-12)
    assert arpa.ngrams[0][("</s>",)][1] is None


# Order 3. The top level has raw trigram counts (20):
#   <s> a b 4   a b </s> 3   <s> c c 2   c c </s> 2   <s> d </s> 2
#   <s> b a 1   b a </s> 1   <s> d c 1   d c </s> 1   a b c 1   b c a 1   c a </s> 1
#   n1..n4 = 7, 3, 1, 1: Y = 7/13; D1 = 1 - 2(7/13)(3/7) = 7/13; D2 = 2 - 3(7/13)(1/3) = 19/13;
#   D3+ = 3 - 4(7/13)(1/1) = 11/13
T_D1, T_D2, T_D3 = F(7, 13), F(19, 13), F(11, 13)
# The bigram level now has continuation counts, the distinct words before the bigram in the
# trigrams, except bigrams starting with <s>, which nothing precedes and which keep their counts:
#   a b {<s>} 1   a </s> {b, c} 2   b a {<s>} 1   b c {a} 1   b </s> {a} 1   c a {b} 1
#   c c {<s>} 1   c </s> {c, d} 2   d c {<s>} 1   d </s> {<s>} 1
#   <s> a 4   <s> b 1   <s> c 2   <s> d 3
#   n1..n4 = 9, 3, 1, 1: Y = 3/5; D1 = 1 - 2(3/5)(3/9) = 3/5; D2 = 2 - 3(3/5)(1/3) = 7/5;
#   D3+ = 3 - 4(3/5)(1/1) = 3/5
M_D1, M_D2, M_D3 = F(3, 5), F(7, 5), F(3, 5)
# Bigram history a: a </s> 2, a b 1; c(a) = 3; gamma(a) = (D1 + D2)/3 = 2/3
#   p2(b|a)    = (1 - 3/5)/3 + (2/3) p(b)    = 2/15 + 22/315 = 64/315
#   p2(</s>|a) = (2 - 7/5)/3 + (2/3) p(</s>) = 1/5 + 62/315  = 125/315
# Bigram history b: b a 1, b c 1, b </s> 1; c(b) = 3; gamma(b) = 3 D1/3 = 3/5
#   p2(c|b) = p2(</s>|b) = (1 - 3/5)/3 + (3/5)(62/210) = 163/525
P2 = {("b", "a"): F(64, 315), ("</s>", "a"): F(125, 315), ("c", "b"): F(163, 525),
      ("</s>", "b"): F(163, 525)}


def test_modified_kn_order3_by_hand():
    lm = _lm(3)
    assert [x for d in lm.discounts[1:] for x in (d.d1, d.d2, d.d3)] == pytest.approx(
        [float(x) for x in (M_D1, M_D2, M_D3, T_D1, T_D2, T_D3)])
    arpa = lm.to_arpa_lm()
    for w, p in UNI.items():  # the unigram level is the same as at order 2
        assert _p(arpa, w) == pytest.approx(float(p), rel=1e-12)
    for (w, h), p in P2.items():
        assert _p(arpa, w, [h]) == pytest.approx(float(p), rel=1e-12)
    # Trigram history "<s> a": b 4; gamma = D3+/4 = 11/52
    g = T_D3 / 4
    assert _p(arpa, "b", ["<s>", "a"]) == pytest.approx(float((4 - T_D3) / 4 + g * P2["b", "a"]),
                                                        rel=1e-12)
    assert _p(arpa, "</s>", ["<s>", "a"]) == pytest.approx(float(g * P2["</s>", "a"]), rel=1e-12)
    # Trigram history "a b": c 1, </s> 3; gamma = (D1 + D3+)/4 = 9/26
    g = (T_D1 + T_D3) / 4
    assert g == F(9, 26)
    assert _p(arpa, "c", ["a", "b"]) == pytest.approx(float((1 - T_D1) / 4 + g * P2["c", "b"]),
                                                      rel=1e-12)


def test_srilm_default_cutoff_drops_trigram_singletons():
    """-gt3min 2 (SRILM's default): 'a b c', seen once, is left out; its mass goes to the
    backoff, so p(c | a b) = bow(a b) p2(c|b) with bow = (1 - p3(</s>|ab)) / (1 - p2(</s>|b))."""
    lm = _lm(3, gtmin=(1, 1, 2, 2))
    arpa = lm.to_arpa_lm()
    assert set(arpa.ngrams[2]) == {("<s>", "a", "b"), ("a", "b", "</s>"), ("<s>", "c", "c"),
                                   ("c", "c", "</s>"), ("<s>", "d", "</s>")}
    g = (T_D1 + T_D3) / 4  # gamma(a b) still counts the discount of the dropped trigram
    p_end = (3 - T_D3) / 4 + g * P2["</s>", "b"]
    bow = (1 - p_end) / (1 - P2["</s>", "b"])
    assert _p(arpa, "</s>", ["a", "b"]) == pytest.approx(float(p_end), rel=1e-12)
    assert _p(arpa, "c", ["a", "b"]) == pytest.approx(float(bow * P2["c", "b"]), rel=1e-12)
    assert arpa.ngrams[1][("a", "b")][1] == pytest.approx(math.log10(bow), abs=1e-12)


def test_original_kn_order2_by_hand():
    """-ukndiscount: one D per order, D = n1/(n1 + 2 n2): unigrams 1/(1 + 2) = 1/3 (continuation
    counts), bigrams 5/(5 + 8) = 5/13; gamma() = (1/3)(5 words)/14 = 5/42, so
    p(a) = (3 - 1/3)/14 + (5/42)(1/5) = 9/42; gamma(a) = (5/13)(2)/6 = 5/39."""
    lm = _lm(2, modified=False)
    assert [d.d1 for d in lm.discounts] == pytest.approx([1 / 3, 5 / 13])
    arpa = lm.to_arpa_lm()
    p_a = F(9, 42)
    assert _p(arpa, "a") == pytest.approx(float(p_a), rel=1e-12)
    p_b = (2 - F(1, 3)) / 14 + F(5, 42) / 5
    g_a = F(5, 13) * 2 / 6
    assert _p(arpa, "b", ["a"]) == pytest.approx(float((4 - F(5, 13)) / 6 + g_a * p_b), rel=1e-12)


def test_backoff_kn_without_interpolate():
    """Without -interpolate: p(w|h) = (c - D)/c(h) for seen words, and the rest through bow."""
    arpa = _lm(2, interpolate=False).to_arpa_lm()
    assert _p(arpa, "b", ["a"]) == pytest.approx(float((4 - B_D3) / 6), rel=1e-12)
    # Every word was seen, so what the discounted unigrams leave (1/6) is spread over all five
    # (SRILM's distributeProb): the same unigrams as interpolated, here.
    assert _p(arpa, "a") == pytest.approx(float((3 - F(1, 3)) / 14 + F(1, 6) / 5), rel=1e-12)
    bow_a = (1 - (4 - B_D3) / 6 - (2 - B_D2) / 6) / (1 - _f(arpa, "b") - _f(arpa, "</s>"))
    assert _p(arpa, "c", ["a"]) == pytest.approx(float(bow_a) * _p(arpa, "c"), rel=1e-9)


def _f(arpa, w):
    return F(10.0 ** arpa.log10_prob(w, []))


def test_discount_formulas_match_srilm_reference():
    """n1..n4 and the discounts SRILM printed for its swbd trigram test (lm/test/reference/
    ngram-count-kn.stderr): 6 significant digits, as SRILM prints them."""
    reference = [((9816, 4085, 2199, 1578), (0.545758, 1.11864, 1.43346)),
                 ((287180, 56704, 23987, 13383), (0.716896, 1.09021, 1.4001)),
                 ((1065684, 128239, 46598, 23979), (0.806016, 1.12136, 1.34092)),
                 ((287188, 56707, 23987, 13383), (0.716891, 1.09027, 1.40011))]
    for order, (coc, want) in enumerate(reference, 1):
        d = kn_discount(coc, True, order)
        assert [float(f"{x:.6g}") for x in (d.d1, d.d2, d.d3)] == list(want)
    d = kn_discount((9816, 4085, 0, 0), False, 1)
    assert d.d1 == d.d2 == d.d3 == 9816 / (9816 + 2 * 4085)
    with pytest.raises(LmError, match=r"order 2: one of required modified KneserNey "
                                      r"count-of-counts is zero \(n1=5 n2=4 n3=0 n4=2\)"):
        kn_discount((5, 4, 0, 2), True, 2)
    with pytest.raises(LmError, match="order 1: one of required KneserNey count-of-counts is zero"):
        kn_discount((0, 3, 1, 1), False, 1)
    with pytest.raises(LmError, match="discounts is negative"):  # D2 = 2 - 3(7/9)(2/1) < 0
        kn_discount((7, 1, 2, 2), True, 1)
    assert count_of_counts(np.array([1, 1, 2, 5, 3, 4, 4, 0])) == (2, 1, 1, 2)


def test_ukn_equals_the_old_digits_estimator():
    """-ukndiscount -interpolate at order 2 gives estimate_kn_bigram's model to rounding, where
    the old estimator's three departures from SRILM do not arise: D from its counts of counts
    within [0.1, 0.9], no history followed by every word, no empty sentence."""
    sents = markov_sentences(seed=4)
    new = _lm(2, modified=False, sents=sents).to_arpa_lm()
    old = estimate_kn_bigram(sents)
    lm = _lm(2, modified=False, sents=sents)
    assert all(0.1 <= d.d1 <= 0.9 for d in lm.discounts)
    followers = {}
    for v, w in new.ngrams[1]:
        followers.setdefault(v, set()).add(w)
    assert max(len(s) for s in followers.values()) < len(new.vocab) - 1
    assert new.ngrams[0].keys() == old.ngrams[0].keys()
    assert new.ngrams[1].keys() == old.ngrams[1].keys()
    for n in (0, 1):
        for k, (p, b) in old.ngrams[n].items():
            q, c = new.ngrams[n][k]
            assert q == pytest.approx(p, abs=1e-12) or (p == q == -math.inf) or \
                (k == ("<s>",) and p == -99 and q == -math.inf)
            assert (b is None) == (c is None) and (b is None or c == pytest.approx(b, abs=1e-12))


def test_digits_like_text_stops_as_srilm_does():
    """Where every word follows every word (the digits transcripts), no n-gram is seen once or
    twice: SRILM's -ukndiscount stops, and so does ours, while the digits estimator falls back to
    D = 0.5 (and writes log10 gamma, not SRILM's 0, as the backoff weight of such histories)."""
    words = "ONE TWO THREE".split()
    sents = [[a, b] for a in words for b in words] * 3
    with pytest.raises(LmError, match=r"order 1: one of required KneserNey count-of-counts is "
                                      r"zero \(n1=0 n2=0\)"):
        _lm(2, modified=False, sents=sents)
    old = estimate_kn_bigram(sents)
    assert all(b is not None and b < 0 for (w,), (_, b) in old.ngrams[0].items() if w in words)


def test_vocab_and_unk_rules():
    """-vocab closes the vocabulary (w199 becomes <unk>, 'new' is never seen); without -unk <unk>
    is a non-event: not in the model, nor any n-gram holding it; with -unk it is a word."""
    sents = markov_sentences(seed=2)
    words = sorted({w for s in sents for w in s})
    oov = words[-1]
    vocab = words[:-1] + ["new"]
    closed = _lm(3, sents=sents, vocab=vocab).to_arpa_lm()
    assert set(closed.vocab) == set(vocab) | {"<s>", "</s>"}
    assert not any("<unk>" in k for grams in closed.ngrams for k in grams)
    assert not any(oov in k for grams in closed.ngrams for k in grams)
    opened = _lm(3, sents=sents, vocab=vocab, unk_is_word=True).to_arpa_lm()
    assert ("<unk>",) in opened.ngrams[0]
    unk_grams = [k for k in opened.ngrams[1] if "<unk>" in k]
    assert unk_grams and all(oov not in k for k in opened.ngrams[1])
    mapped = _lm(3, sents=sents, vocab=vocab + ["<UNK>"], unk_word="<UNK>",
                 unk_is_word=True).to_arpa_lm()
    assert sorted(k for k in mapped.ngrams[1] if "<UNK>" in k) == sorted(
        tuple("<UNK>" if w == "<unk>" else w for w in k) for k in unk_grams)
    assert ("<unk>",) not in mapped.ngrams[0]
    # the unseen word's unigram is what the seen ones leave (SRILM's zerotons; 'new' is the one)
    seen = sum(10 ** p for (w,), (p, _) in opened.ngrams[0].items() if w not in ("new", "<s>"))
    assert 10 ** opened.ngrams[0][("new",)][0] == pytest.approx(1 - seen, rel=1e-9)


def test_sentence_markers_and_blank_lines():
    from nnetmix.lm import count_lines

    plain = count_lines(TOY, "toy", 2)
    marked = count_lines(["<s> " + s + " </s>" for s in TOY] + ["", "  "], "toy", 2)
    assert plain.stats.sentences == marked.stats.sentences == 10
    for a, b in zip(plain.tables, marked.tables):
        assert np.array_equal(a.count, b.count) and np.array_equal(a.last, b.last)
    with pytest.raises(LmError, match=r"toy:2: '<s>' or '</s>' inside a sentence"):
        count_lines(["a b", "a </s> b"], "toy", 2)
    with pytest.raises(LmError, match="order 5 is not supported"):
        count_lines(TOY, "toy", 5)


def test_history_with_no_mass_left_is_retried_as_srilm_does():
    """'p' is followed by 'q' 700000 times: (c - D3+)/c(p) leaves less than SRILM's 3e-6 for the
    other words (D3+ < 2.1), so SRILM drops interpolation for that history and then adds 1 to its
    denominator until some mass is left (once is enough when D3+ > 1.1):
    p(q|p) = (700000 - D3+)/700001."""
    sents = markov_sentences(seed=3) + [["p", "q"] * 1000] * 700
    for interpolate in (True, False):
        lm = _lm(2, interpolate=interpolate, gtmin=(1, 1), sents=sents)
        d3 = lm.discounts[1].d3
        assert 1.1 < d3 < 2.1
        arpa = lm.to_arpa_lm()
        assert _p(arpa, "q", "p") == pytest.approx((700000 - d3) / 700001, rel=1e-12)
        total = sum(10 ** arpa.log10_prob(w, ["p"]) for w in arpa.vocab if w != "<s>")
        assert total == pytest.approx(1.0, abs=1e-12)


def test_history_followed_by_every_word():
    """'zz' is followed by every word and by </s>: no backoff mass is needed. Interpolated, the
    explicit probabilities already sum to one and bow(zz) = 1; without interpolation SRILM scales
    them to sum to one, and bow(zz) = 1 too."""
    base = markov_sentences(seed=5)
    words = sorted({w for s in base for w in s})
    # r1 is seen only after zz: a continuation count of 1, which modified KN needs somewhere
    sents = base + [["zz", w] for w in words + ["zz", "r1"]] + [["zz"]]
    for interpolate in (True, False):
        arpa = _lm(2, interpolate=interpolate, gtmin=(1, 1), sents=sents).to_arpa_lm()
        explicit = [10 ** p for (h, _), (p, _) in arpa.ngrams[1].items() if h == "zz"]
        assert len(explicit) == len(words) + 3
        assert sum(explicit) == pytest.approx(1.0, abs=1e-12)
        assert arpa.ngrams[0][("zz",)][1] == 0.0
