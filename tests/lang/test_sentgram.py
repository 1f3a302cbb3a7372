"""nnetmix/lang/sentgram.py: the grammar file, seeded generation, the hash split of the sentence
space, the word-pair grammar (successor sets, perplexity, G.fst) on grammars small enough to
work out by hand."""
import math
import random

import pytest

from helpers import arcs_of, write_lines
from nnetmix.lang.sentgram import (draw_sentence, is_test_sentence, read_grammar,
                                   wordpair_fst_text)
from nnetmix.lang.symbols import LangError, SymbolTable

TOY = """# a toy grammar
<sentence> 3 show <ship>
<sentence> 1 where is <ship> now
<ship> 1 the <class> <name>
<ship> 1 <name>
<class> := tug barge
<name> := kite hawk
"""


def toy(tmp_path, text=TOY):
    write_lines(tmp_path / "g.txt", text.splitlines())
    return read_grammar(tmp_path / "g.txt")


def test_words_and_successors_by_hand(tmp_path):
    g = toy(tmp_path)
    assert g.words() == ["barge", "hawk", "is", "kite", "now", "show", "the", "tug", "where"]
    wp = g.word_pairs()
    assert wp.starts == {"show", "where"}
    assert wp.ends == {"kite", "hawk", "now"}
    assert wp.successors["show"] == {"the", "kite", "hawk"}
    assert wp.successors["is"] == {"the", "kite", "hawk"}
    assert wp.successors["the"] == {"tug", "barge"}
    assert wp.successors["tug"] == {"kite", "hawk"}
    assert wp.successors["kite"] == {"now"}
    assert wp.successors["now"] == set()
    assert wp.branching("kite") == 2  # "now" or the end of the sentence


def test_perplexity_by_hand(tmp_path):
    wp = toy(tmp_path).word_pairs()
    # show (1/2) the (1/3) tug (1/2) kite (1/2) </s> (1/2): 5 events
    lp = math.log(1 / 2) + math.log(1 / 3) + math.log(1 / 2) + math.log(1 / 2) + math.log(1 / 2)
    assert wp.sentence_logprob("show the tug kite".split()) == pytest.approx(lp)
    ppl, nw, ns = wp.perplexity(["show the tug kite".split()])
    assert (nw, ns) == (4, 1) and ppl == pytest.approx(math.exp(-lp / 5))
    with pytest.raises(LangError, match="'barge' cannot follow 'show'"):
        wp.sentence_logprob("show barge".split())
    with pytest.raises(LangError, match="'the' cannot end"):
        wp.sentence_logprob("show the".split())


def test_generation_follows_the_seed_and_the_weights(tmp_path):
    g = toy(tmp_path)
    a = [g.generate(random.Random(f"1:train:{i}")) for i in range(400)]
    assert a == [g.generate(random.Random(f"1:train:{i}")) for i in range(400)]
    assert a != [g.generate(random.Random(f"2:train:{i}")) for i in range(400)]
    wp = g.word_pairs()
    for s in a:
        wp.sentence_logprob(s)  # every sentence is allowed by the word-pair grammar
    share = sum(s[0] == "show" for s in a) / len(a)
    assert 0.65 < share < 0.85  # weight 3 of 4


def test_hash_split_keeps_test_sentences_out_of_training(tmp_path):
    g = toy(tmp_path)
    test_side = {s for s in {g.generate(random.Random(i)) for i in range(500)}
                 if is_test_sentence(s, 0.3)}
    assert test_side  # 12 sentences: some fall on the test side
    train = {draw_sentence(g, random.Random(f"train:{i}"), False, 0.3) for i in range(300)}
    test = {draw_sentence(g, random.Random(f"test:{i}"), True, 0.3) for i in range(300)}
    assert test and not train & test and test <= test_side
    with pytest.raises(LangError, match="no test sentence in 50 draws"):
        draw_sentence(g, random.Random(0), True, 1e-12, max_draws=50)


@pytest.mark.parametrize("text,match", [
    ("<sentence> 1 a <x>\n<x> 1 b <sentence>\n", "recursive"),
    ("<sentence> 1 a <y>\n", "<y> has no rule"),
    ("<sentence> 1 a\n<z> 1 b\n", "never used: <z>"),
    ("<sentence> 0 a\n", "weight must be positive"),
    ("<sentence> x a\n", "weight 'x' is not a number"),
    ("<s> 1 a\n", "no rule for the start symbol"),
    ("<sentence> := a <b>\n<b> 1 c\n", "':=' lists words"),
    ("sentence 1 a\n", "g.txt:1: expected"),
])
def test_bad_grammar_files(tmp_path, text, match):
    with pytest.raises(LangError, match=match):
        toy(tmp_path, text)


def test_wordpair_fst_costs(tmp_path):
    kaldifst = pytest.importorskip("kaldifst")
    g = toy(tmp_path)
    wp = g.word_pairs()
    words = SymbolTable.dense(["<eps>"] + g.words() + ["#0"], "words.txt")
    fst = kaldifst.compile(wordpair_fst_text(wp, words))
    arcs = arcs_of(fst)
    for s in ["show the tug kite", "where is hawk now", "show kite now"]:
        state, cost = fst.start, 0.0
        for w in s.split():
            (arc,) = [a for a in arcs[state] if a[0] == words.id(w)]
            cost, state = cost + arc[2], arc[3]
        cost += fst.final(state).value
        assert cost == pytest.approx(-wp.sentence_logprob(s.split()), abs=1e-4)
