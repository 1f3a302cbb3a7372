"""Texts for the LM tests, made in code: the hand-worked toy corpus and seeded random corpora."""
from __future__ import annotations

import random
from pathlib import Path

#: Ten sentences whose modified Kneser-Ney numbers test_lm_estimate.py works out by hand. Small as
#: it is, it has n-grams seen 1, 2, 3 and 4 times at every level of an order-3 model, which
#: modified KN needs (at every order, n1..n4 > 0 and no discount negative).
TOY = ["d", "c c", "b a", "d c", "a b c a", "a b", "a b", "d", "a b", "c c"]


def toy_sentences() -> list[list[str]]:
    return [s.split() for s in TOY]


def markov_sentences(seed: int = 1, num: int = 500, vocab: int = 200, max_len: int = 10,
                     stick: float = 0.6) -> list[list[str]]:
    """Sentences from a seeded Zipf-plus-Markov source: with probability ``stick`` a word is one
    of three favourite successors of the previous word, else a Zipf draw. The favourites make
    n-grams repeat (4-grams seen 3 and 4 times, which modified KN at order 4 needs), the Zipf
    draws give rare words and n-grams seen once or twice."""
    rng = random.Random(seed)
    words = [f"w{i:02d}" for i in range(vocab)]
    weights = [1.0 / (i + 1) for i in range(vocab)]
    fav = {w: rng.choices(words, weights, k=3) for w in words}
    out = []
    for _ in range(num):
        sent = [rng.choices(words, weights)[0]]
        for _ in range(rng.randint(0, max_len - 1)):
            sent.append(rng.choice(fav[sent[-1]]) if rng.random() < stick
                        else rng.choices(words, weights)[0])
        out.append(sent)
    return out


def write_text(path: Path, sentences, ids: bool = False) -> Path:
    """One sentence a line; with ``ids`` as a Kaldi text file (``utt0001 w1 w2 ...``)."""
    lines = [(f"utt{i:04d} " if ids else "") + " ".join(s) for i, s in enumerate(sentences)]
    path.write_text("".join(line + "\n" for line in lines))
    return path


def g_cost(g, words: dict, sentence: list[str]) -> float:
    """Cost of a sentence in a backoff G.fst as the LM scores it: the word's arc where the state
    has one, else the #0 backoff arc and try again; at the end the final weight (</s>), backing
    off the same way where the state has none."""
    import kaldifst

    arcs = {s: [(a.ilabel, a.weight.value, a.nextstate) for a in kaldifst.ArcIterator(g, s)]
            for s in kaldifst.StateIterator(g)}
    state, cost = g.start, 0.0
    for w in sentence + ["</s>"]:
        while True:
            if w == "</s>" and g.final(state).value != float("inf"):
                return cost + g.final(state).value
            hit = [a for a in arcs[state] if w != "</s>" and a[0] == words[w]]
            if hit:
                cost, state = cost + hit[0][1], hit[0][2]
                break
            back = [a for a in arcs[state] if a[0] == words["#0"]]
            assert back, f"no backoff arc from state {state}"
            cost, state = cost + back[0][1], back[0][2]
    raise AssertionError("unreachable")
