"""Sentence grammars for synthetic read-speech corpora, in the manner of DARPA Resource Management.

RM's sentences came from a finite-state grammar over a 991-word vocabulary, and its recognisers
were tested with two grammars: the word-pair grammar (which words may follow which, perplexity
about 60) and no grammar. Here a corpus's sentences come from a small weighted context-free
grammar read from a text file (:func:`read_grammar`); :meth:`SentenceGrammar.generate` draws a
sentence from a caller's seeded ``random.Random`` (so sentence i of a split can have a generator
of its own), and :meth:`SentenceGrammar.word_pairs` derives the word-pair grammar exactly from the
rules, not from samples: b may follow a when some rule has adjacent symbols X Y with a among the
last words of X and b among the first words of Y (the lowest common ancestor of two adjacent
words in a derivation is such a rule, and every such pair is derivable because the grammar is
context-free and has no empty expansions).

File format, one rule per line, ``#`` starts a comment::

    <sentence>   3  show the <attribute> of <ship>      # <lhs> weight symbols...
    <ship-name>  := kestrel petrel osprey                # one equal-weight rule per word

Nonterminals are ``<name>``; every other token is a word. The start symbol is ``<sentence>``.
Rules of a nonterminal are chosen in proportion to their weights; ``:=`` lines add one rule of
weight 1 per word, and may repeat to continue a list. Recursion is refused (the grammar must be
finite), as are undefined or unused nonterminals.
"""
from __future__ import annotations

import hashlib
import math
import os
import random
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from nnetmix.data.io import ENCODING
from nnetmix.lang.symbols import LangError, SymbolTable

__all__ = ["START", "Rule", "SentenceGrammar", "WordPairGrammar", "read_grammar",
           "wordpair_fst_text", "is_test_sentence", "draw_sentence"]

START = "<sentence>"


def _is_nonterminal(token: str) -> bool:
    return token.startswith("<") and token.endswith(">") and len(token) > 2


@dataclass(frozen=True)
class Rule:
    lhs: str
    weight: float
    rhs: tuple[str, ...]
    where: str  #: file:line, for messages


@dataclass
class SentenceGrammar:
    """A checked, finite weighted grammar; ``rules[nt]`` in file order."""

    rules: dict[str, list[Rule]]
    name: str = "<grammar>"
    _first: dict[str, frozenset] = field(default_factory=dict, repr=False)
    _last: dict[str, frozenset] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._check()
        self._cum = {nt: _cumulative([r.weight for r in rs]) for nt, rs in self.rules.items()}

    def _check(self) -> None:
        if START not in self.rules:
            raise LangError(f"{self.name}: no rule for the start symbol {START}")
        used = {START}
        for rs in self.rules.values():
            for r in rs:
                for t in r.rhs:
                    if _is_nonterminal(t):
                        if t not in self.rules:
                            raise LangError(f"{r.where}: {t} has no rule")
                        used.add(t)
        unused = sorted(set(self.rules) - used)
        if unused:
            raise LangError(f"{self.name}: nonterminals never used: {' '.join(unused)}")
        # depth-first search for a cycle (a recursive grammar has no finite word-pair closure
        # that generate() could promise to terminate on)
        state: dict[str, int] = {}

        def visit(nt: str, path: list[str]) -> None:
            state[nt] = 1
            for r in self.rules[nt]:
                for t in r.rhs:
                    if not _is_nonterminal(t):
                        continue
                    if state.get(t) == 1:
                        cycle = path[path.index(t):] + [t] if t in path else [nt, t]
                        raise LangError(f"{r.where}: the grammar is recursive "
                                        f"({' -> '.join(cycle)})")
                    if t not in state:
                        visit(t, path + [t])
            state[nt] = 2

        visit(START, [START])

    def words(self) -> list[str]:
        """Every word the grammar can produce, sorted in C order."""
        return sorted({t for rs in self.rules.values() for r in rs for t in r.rhs
                       if not _is_nonterminal(t)}, key=lambda w: w.encode())

    def generate(self, rng: random.Random) -> tuple[str, ...]:
        """One sentence, drawn top-down with ``rng`` (one ``rng.random()`` per choice)."""
        out: list[str] = []
        stack = [START]
        while stack:
            t = stack.pop()
            if not _is_nonterminal(t):
                out.append(t)
                continue
            cum = self._cum[t]
            k = _pick(cum, rng.random())
            stack.extend(reversed(self.rules[t][k].rhs))
        return tuple(out)

    def _edge(self, symbol: str, last: bool) -> frozenset:
        if not _is_nonterminal(symbol):
            return frozenset([symbol])
        memo = self._last if last else self._first
        if symbol not in memo:
            memo[symbol] = frozenset().union(
                *(self._edge(r.rhs[-1] if last else r.rhs[0], last) for r in self.rules[symbol]))
        return memo[symbol]

    def first_words(self, symbol: str = START) -> frozenset:
        return self._edge(symbol, last=False)

    def last_words(self, symbol: str = START) -> frozenset:
        return self._edge(symbol, last=True)

    def word_pairs(self) -> "WordPairGrammar":
        """The word-pair grammar the rules imply (see the module docstring)."""
        succ: dict[str, set] = {w: set() for w in self.words()}
        for rs in self.rules.values():
            for r in rs:
                for x, y in zip(r.rhs, r.rhs[1:]):
                    firsts = self.first_words(y)
                    for a in self.last_words(x):
                        succ[a] |= firsts
        return WordPairGrammar(starts=self.first_words(), ends=self.last_words(),
                               successors={w: frozenset(s) for w, s in succ.items()})


def is_test_sentence(words: Sequence[str], test_share: float) -> bool:
    """Whether a sentence belongs to the test side of the sentence space: the first 8 bytes of
    the MD5 of its text, as a fraction of 2**64, fall below ``test_share``. A property of the
    text alone (not of a run's counts or Python's per-process hash seed), so no test sentence can
    appear in any training text, however many sentences either side draws."""
    digest = hashlib.md5(" ".join(words).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") < test_share * 2.0 ** 64


def draw_sentence(grammar: SentenceGrammar, rng: random.Random, test: bool,
                  test_share: float, max_draws: int = 10000) -> tuple[str, ...]:
    """A sentence of the test side (``test``) or the training side, drawn with ``rng`` by
    rejection: the sentence distribution restricted to that side. LangError if ``max_draws``
    draws find none (a ``test_share`` near 0 or 1, or a grammar with few sentences)."""
    for _ in range(max_draws):
        words = grammar.generate(rng)
        if is_test_sentence(words, test_share) == test:
            return words
    raise LangError(f"{grammar.name}: no {'test' if test else 'training'} sentence in "
                    f"{max_draws} draws (test share {test_share})")


def _cumulative(weights: Sequence[float]) -> list[float]:
    total, cum = 0.0, []
    for w in weights:
        total += w
        cum.append(total)
    return [c / total for c in cum]


def _pick(cum: Sequence[float], u: float) -> int:
    for k, c in enumerate(cum):
        if u < c:
            return k
    return len(cum) - 1


@dataclass(frozen=True)
class WordPairGrammar:
    """Which words may start and end a sentence and which may follow each word.

    Probabilities are uniform over the allowed continuations, end of sentence included, as the
    perplexity of RM's word-pair grammar was computed (each word's successors equally likely).
    """

    starts: frozenset
    ends: frozenset
    successors: dict

    def branching(self, word: str) -> int:
        """Allowed continuations of ``word``: its successors, plus one if it may end a sentence."""
        return len(self.successors[word]) + (word in self.ends)

    def sentence_logprob(self, words: Sequence[str]) -> float:
        """Natural log-probability of ``words`` (the end of sentence included); LangError when
        the grammar does not allow it."""
        if not words:
            raise LangError("empty sentence")
        if words[0] not in self.starts:
            raise LangError(f"'{words[0]}' cannot start a sentence")
        lp = -math.log(len(self.starts))
        for a, b in zip(words, words[1:]):
            if b not in self.successors.get(a, ()):
                raise LangError(f"'{b}' cannot follow '{a}'")
            lp -= math.log(self.branching(a))
        if words[-1] not in self.ends:
            raise LangError(f"'{words[-1]}' cannot end a sentence")
        return lp - math.log(self.branching(words[-1]))

    def perplexity(self, sentences: Iterable[Sequence[str]]) -> tuple[float, int, int]:
        """(perplexity, words, sentences) with SRILM's count of events: words plus one end of
        sentence per sentence (``ngram -ppl``'s ``ppl``)."""
        lp, nw, ns = 0.0, 0, 0
        for s in sentences:
            lp += self.sentence_logprob(s)
            nw += len(s)
            ns += 1
        if ns == 0:
            raise LangError("no sentences to compute a perplexity over")
        return math.exp(-lp / (nw + ns)), nw, ns

    def num_pairs(self) -> int:
        return sum(len(s) for s in self.successors.values())


def wordpair_fst_text(wpg: WordPairGrammar, words: SymbolTable) -> str:
    """G as OpenFst text (arcs ``src dst word word cost``, finals ``state cost``): state 0 is the
    sentence start, state k the history "last word had id k"; costs are -log of the uniform
    probabilities. Kaldi's egs/rm/s5 builds its G from RM's word-pair file the same way
    (local/make_rm_lm.pl). No backoff, so no #0 arcs: G is deterministic and epsilon-free."""
    state = {w: words.id(w, words.name) for w in sorted(wpg.successors, key=lambda w: w.encode())}
    lines = []
    cost0 = math.log(len(wpg.starts))
    for w in sorted(wpg.starts, key=lambda w: w.encode()):
        lines.append(f"0 {state[w]} {state[w]} {state[w]} {cost0:.6g}")
    for a in sorted(wpg.successors, key=lambda w: w.encode()):
        n = wpg.branching(a)
        if n == 0:
            continue
        cost = math.log(n)
        for b in sorted(wpg.successors[a], key=lambda w: w.encode()):
            lines.append(f"{state[a]} {state[b]} {state[b]} {state[b]} {cost:.6g}")
        if a in wpg.ends:
            lines.append(f"{state[a]} {cost:.6g}")
    return "\n".join(lines) + "\n"


def read_grammar(path: str | os.PathLike) -> SentenceGrammar:
    """Parse and check a grammar file (format: module docstring); LangError names file:line."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise LangError(f"no such file {path}")
    rules: dict[str, list[Rule]] = {}
    with open(path, **ENCODING) as fh:
        for n, line in enumerate(fh, 1):
            where = f"{path}:{n}"
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            lhs = fields[0]
            if not _is_nonterminal(lhs) or len(fields) < 3:
                raise LangError(f"{where}: expected '<nonterminal> weight symbols...' or "
                                f"'<nonterminal> := words...', got '{line.strip()}'")
            if fields[1] == ":=":
                for w in fields[2:]:
                    if _is_nonterminal(w):
                        raise LangError(f"{where}: ':=' lists words, got {w}")
                    rules.setdefault(lhs, []).append(Rule(lhs, 1.0, (w,), where))
                continue
            try:
                weight = float(fields[1])
            except ValueError:
                raise LangError(f"{where}: weight '{fields[1]}' is not a number") from None
            if not weight > 0 or math.isinf(weight):
                raise LangError(f"{where}: weight must be positive and finite, got {fields[1]}")
            rules.setdefault(lhs, []).append(Rule(lhs, weight, tuple(fields[2:]), where))
    return SentenceGrammar(rules, name=path)
