"""ARPA estimation (normalisation), G.fst through kaldilm, format_lm.sh and local/prepare_lm.sh."""
import math
import os
import random

import pytest

from helpers import ROOT, arcs_of, read_fst, run_script, symbol_table, write_dict
from nnetmix.lang import (LangError, SymbolTable, arpa2fst, empty_word_cycle, estimate_kn_bigram,
                          normalisation_error, read_arpa, read_lm_text, write_arpa)
from nnetmix.lang.grammar import Arpa2FstOptions

WORDS = "ONE TWO FIVE SEVEN EIGHT OH".split()


def _corpus(seed=3, n=300):
    rng = random.Random(seed)
    return [[rng.choice(WORDS[:-1]) for _ in range(rng.randint(1, 6))] for _ in range(n)]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("extra", [(), ("OH", "<UNK>")])
def test_arpa_normalises(tmp_path, order, extra):
    lm = estimate_kn_bigram(_corpus(), vocab=extra, order=order)
    err, _ = normalisation_error(lm)
    assert err < 1e-12
    write_arpa(tmp_path / "lm.arpa", lm)
    back = read_arpa(tmp_path / "lm.arpa")
    assert normalisation_error(back)[0] < 1e-5  # 7 decimals of log10 in the file
    assert back.order == order and set(back.vocab) == set(lm.vocab)
    assert set(extra) <= set(lm.vocab)
    if order == 2:
        assert back.ngrams[0][("<s>",)][0] == -99 and back.ngrams[0][("</s>",)][1] is None
        # an explicit bigram beats the backoff path (bow <= 1)
        assert all(b is None or b <= 0 for _, b in back.ngrams[0].values())


def test_arpa_hand_example():
    """Two sentences 'A', 'A B': every history's distribution is by hand a proper one."""
    lm = estimate_kn_bigram([["A"], ["A", "B"]])
    assert sorted(lm.vocab) == ["</s>", "<s>", "A", "B"]
    assert {k for k in lm.ngrams[1]} == {("<s>", "A"), ("A", "</s>"), ("A", "B"), ("B", "</s>")}
    for h in ((), ("<s>",), ("A",), ("B",)):
        assert sum(10 ** lm.log10_prob(w, h) for w in ("A", "B", "</s>")) == pytest.approx(1.0)
    # p(A | <s>) is high: both sentences start with A
    assert 10 ** lm.log10_prob("A", ["<s>"]) > 0.5


def test_read_arpa_errors(tmp_path):
    p = tmp_path / "bad.arpa"
    p.write_text("\\data\\\nngram 1=2\n\n\\1-grams:\n-0.3 A\nx B\n\\end\\\n")
    with pytest.raises(LangError, match=r"bad.arpa:6: bad number"):
        read_arpa(p)
    p.write_text("\\data\\\nngram 1=3\n\n\\1-grams:\n-0.3 A\n-0.3 B\n\\end\\\n")
    with pytest.raises(LangError, match="ngram 1=3, the file has 2"):
        read_arpa(p)
    p.write_text("\\data\\\nngram 1=1\n\n\\1-grams:\n-0.3 A\n")
    with pytest.raises(LangError, match="truncated"):
        read_arpa(p)


def test_lm_text_maps_oovs(tmp_path):
    words = SymbolTable.dense(["<eps>", "<UNK>", "ONE", "TWO", "#0", "<s>", "</s>"], "words.txt")
    (tmp_path / "text").write_text("u1 ONE TWO\nu2 TEN ONE TEN\nu3\n")
    t = read_lm_text(tmp_path / "text", words, "<UNK>")
    assert t.sentences == [["ONE", "TWO"], ["<UNK>", "ONE", "<UNK>"], []]
    assert t.oov == {"TEN": 2} and t.num_tokens == 5
    with pytest.raises(LangError, match="OOV word 'X'"):
        read_lm_text(tmp_path / "text", words, "X")
    (tmp_path / "text").write_text("u1 ONE </s>\n")
    with pytest.raises(LangError, match="text:1"):
        read_lm_text(tmp_path / "text", words, "<UNK>")


def _g_cost(g, words: dict, sentence: list[str]) -> float:
    """Cost of a sentence in G the way a backoff LM scores it: the explicit arc if there is one,
    else the #0 backoff arc and retry; then the final weight (which is </s>)."""
    arcs = arcs_of(g)
    s, cost = g.start, 0.0
    for w in sentence + ["</s>"]:
        while True:
            if w == "</s>":
                fw = g.final(s).value
                if not math.isinf(fw):
                    cost += fw
                    return cost
            else:
                hit = [a for a in arcs[s] if a[0] == words[w]]
                if hit:
                    cost += hit[0][2]
                    s = hit[0][3]
                    break
            back = [a for a in arcs[s] if a[0] == words["#0"]]
            assert back, f"no backoff arc from state {s}"
            cost += back[0][2]
            s = back[0][3]
    return cost


def test_g_fst_matches_arpa(tmp_path):
    syms = ["<eps>", "!SIL", "<UNK>"] + sorted(WORDS) + ["#0", "<s>", "</s>"]
    (tmp_path / "words.txt").write_text("".join(f"{w} {i}\n" for i, w in enumerate(syms)))
    lm = estimate_kn_bigram(_corpus(), vocab=["OH"])
    write_arpa(tmp_path / "lm.arpa", lm)
    n = arpa2fst(str(tmp_path / "lm.arpa"), str(tmp_path / "G.fst"),
                 Arpa2FstOptions(disambig_symbol="#0",
                                 read_symbol_table=str(tmp_path / "words.txt")))
    g = read_fst(tmp_path / "G.fst")
    assert g is not None and g.num_states == n and g.is_ilabel_sorted
    words = symbol_table(tmp_path / "words.txt")
    labels = {(il, ol) for arcs in arcs_of(g).values() for il, ol, _, _ in arcs}
    assert (words["#0"], 0) in labels  # backoff arcs: #0 in, epsilon out
    assert not {words["<s>"], words["</s>"]} & {x for pair in labels for x in pair}
    for sent in (["ONE"], ["OH", "OH"], ["SEVEN", "TWO", "EIGHT"], []):
        want = -sum(lm.log10_prob(w, h) for w, h in
                    zip(sent + ["</s>"], [["<s>"]] + [[x] for x in sent])) * math.log(10)
        assert _g_cost(g, words, sent) == pytest.approx(want, abs=1e-3)
    assert empty_word_cycle(g, {words["#0"]}) is None


def test_empty_word_cycle_found(tmp_path):
    import kaldi_hmm_gmm  # noqa: F401
    import kaldifst
    g = kaldifst.compile("0 1 5 5\n1 2 7 0\n2 0 7 0\n2\n")
    assert empty_word_cycle(g, {7}) is None
    assert empty_word_cycle(g, {5, 7}) is not None


def test_prepare_lm_and_format_lm_scripts(tmp_path):
    rec = tmp_path / "s5"
    rec.mkdir()
    for link in ("utils", "bin", "steps"):
        os.symlink(ROOT / link, rec / link)
    os.symlink(ROOT / "egs/digits/s5/local", rec / "local")
    write_dict(rec / "data/local/dict")
    (rec / "data/train").mkdir(parents=True)
    (rec / "data/train/text").write_text("".join(
        f"u{i:03d} {' '.join(s)}\n" for i, s in enumerate(_corpus(n=60))) + "u999 TWO TEN\n")
    run_script(["utils/prepare_lang.sh", "data/local/dict", "<UNK>", "data/local/lang",
                "data/lang"], cwd=rec, check=True)
    args = ["local/prepare_lm.sh", "data/train/text", "data/lang", "data/local/lm",
            "data/lang_test"]
    p = run_script(args, cwd=rec, check=True)
    assert "mapped to <UNK>: TEN(1)" in p.stderr
    lm = read_arpa(rec / "data/local/lm/lm.arpa")
    assert ("<UNK>",) in lm.ngrams[0] and normalisation_error(lm)[0] < 1e-5
    out = rec / "data/lang_test"
    for f in ("G.fst", "L.fst", "L_disambig.fst", "words.txt", "phones.txt", "topo", "oov.int",
              "phones/disambig.int"):
        assert (out / f).is_file(), f
    assert read_fst(out / "G.fst").num_states > 1
    assert "fstisstochastic" in p.stdout
    p = run_script(args, cwd=rec, check=True)
    assert "skipping" in p.stdout
    p = run_script(["utils/format_lm.sh", "data/lang", "data/local/lm/nope.arpa",
                    "data/local/dict/lexicon.txt", "data/lang_test2"], cwd=rec)
    assert p.returncode == 1 and "no such file data/local/lm/nope.arpa" in p.stderr
