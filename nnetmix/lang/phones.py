"""Word-position-dependent phones, phone sets and lexicon disambiguation symbols.

These follow Kaldi's utils/prepare_lang.sh (the phone map, sets/roots/extra_questions, the
word_boundary classes) and utils/add_lex_disambig.pl (which pronunciations get #1, #2, ...).
"""
from __future__ import annotations

from typing import Sequence

from nnetmix.lang.dictdir import Dictionary, LexiconEntry

__all__ = ["position_dependent_lexicon", "make_phone_map", "apply_phone_map",
           "add_lex_disambig", "word_boundary_class", "POSITION_CLASSES"]

#: word_boundary.txt class of each suffix; a phone without one is "nonword".
POSITION_CLASSES = {"_B": "begin", "_E": "end", "_I": "internal", "_S": "singleton"}


def position_dependent_lexicon(lexicon: Sequence[LexiconEntry]) -> list[LexiconEntry]:
    """Mark phones _B (first), _I (inside), _E (last) or _S (the only one), silence included."""
    out = []
    for e in lexicon:
        p = e.phones
        if len(p) == 1:
            marked = (p[0] + "_S",)
        else:
            marked = (p[0] + "_B",) + tuple(x + "_I" for x in p[1:-1]) + (p[-1] + "_E",)
        out.append(LexiconEntry(e.word, e.prob, marked))
    return out


def make_phone_map(d: Dictionary, position_dependent: bool) -> dict[str, list[str]]:
    """Base phone -> its variants, as $tmpdir/phone_map.txt.

    Silence phones keep their bare form too (it is the optional silence between words, which is
    not part of any word): ``sil -> sil sil_B sil_E sil_I sil_S``.
    """
    if not position_dependent:
        return {p: [p] for p in d.silence_phones + d.nonsilence_phones}
    pmap = {p: [p] + [p + s for s in ("_B", "_E", "_I", "_S")] for p in d.silence_phones}
    pmap.update({p: [p + s for s in ("_B", "_E", "_I", "_S")] for p in d.nonsilence_phones})
    return pmap


def apply_phone_map(lines: Sequence[Sequence[str]], pmap: dict[str, list[str]]) -> list[list[str]]:
    """utils/apply_map.pl: each phone of each line replaced by its list of variants."""
    return [[v for p in line for v in pmap[p]] for line in lines]


def add_lex_disambig(lexicon: Sequence[LexiconEntry]) -> tuple[list[tuple[LexiconEntry, str]], int]:
    """Pronunciations with their disambiguation symbol ('' for none), and the highest one used.

    As utils/add_lex_disambig.pl: a phone sequence gets ``#n`` when it is shared by several
    words or is a prefix of another word's sequence; the k-th word sharing a sequence gets #k.
    """
    count: dict[tuple[str, ...], int] = {}
    prefixes: set[tuple[str, ...]] = set()
    for e in lexicon:
        count[e.phones] = count.get(e.phones, 0) + 1
        for k in range(len(e.phones)):
            prefixes.add(e.phones[:k])
    last: dict[tuple[str, ...], int] = {}
    out: list[tuple[LexiconEntry, str]] = []
    max_disambig = 0
    for e in lexicon:
        if e.phones not in prefixes and count[e.phones] == 1:
            out.append((e, ""))
            continue
        n = last.get(e.phones, 0) + 1
        last[e.phones] = n
        max_disambig = max(max_disambig, n)
        out.append((e, f"#{n}"))
    return out, max_disambig


def word_boundary_class(phone: str) -> str:
    """begin/end/internal/singleton from the suffix, else nonword (phones/word_boundary.txt)."""
    return POSITION_CLASSES.get(phone[-2:], "nonword")
