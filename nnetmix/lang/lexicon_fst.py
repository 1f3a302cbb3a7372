"""The lexicon FSTs L.fst and L_disambig.fst, built with kaldifst as prepare_lang.sh builds them.

prepare_lang.sh writes the FST as text with utils/lang/make_lexicon_fst.py, compiles it with
fstcompile (states renumbered in order of appearance), adds the ``#0`` self-loops to
L_disambig with fstaddselfloops and sorts the arcs by output label. We write the same text, with
integer labels, and run the same three operations through kaldifst (``compile``,
``add_self_loops``, ``arcsort``), so the result is the FST Kaldi's tools would write.

Two layouts of the optional silence exist in Kaldi:

* ``py`` (utils/lang/make_lexicon_fst.py, current Kaldi, the default): a start state with
  epsilon arcs to the loop state (cost -log(1-p)) and to a silence state (cost -log p); every
  word's last phone goes to the loop state (+ -log(1-p)) or the silence state (+ -log p); the
  silence state reaches the loop state through the silence phone (then the last disambiguation
  symbol, in L_disambig).
* ``pl`` (utils/make_lexicon_fst.pl, older Kaldi, which built ../shared/kaldi-fixtures/yesno):
  the start state reaches the loop state directly through the silence phone, and a word whose
  pronunciation is the bare silence phone gets no optional silence after it.

Both give every word sequence the same probability of being followed by silence.
"""
from __future__ import annotations

import math
import os
from typing import Sequence

from nnetmix.lang.dictdir import LexiconEntry
from nnetmix.lang.symbols import LangError, SymbolTable
from nnetmix.outfile import write_via_temp

__all__ = ["lexicon_fst_text", "make_lexicon_fst", "write_fst", "LEXICON_FST_STYLES"]

LEXICON_FST_STYLES = ("py", "pl")


def _arc(src: int, dst: int, ilabel: int, olabel: int, cost: float) -> str:
    head = f"{src}\t{dst}\t{ilabel}\t{olabel}"
    return f"{head}\t{cost!r}" if cost else head


def lexicon_fst_text(prons: Sequence[tuple[LexiconEntry, str]], phones: SymbolTable,
                     words: SymbolTable, sil_prob: float, sil_phone: str,
                     sil_disambig: str | None = None, style: str = "py") -> str:
    """The fstcompile text (integer labels) of the lexicon FST.

    ``prons`` are (entry, disambiguation symbol or '') pairs (see add_lex_disambig); the symbol is
    appended to the pronunciation. ``sil_disambig`` (e.g. '#2') goes after the optional silence
    in L_disambig. ``sil_prob`` 0 gives a single loop state and no optional silence.
    """
    if style not in LEXICON_FST_STYLES:
        raise LangError(f"unknown lexicon FST style '{style}' (expected py or pl)")
    if not 0.0 <= sil_prob < 1.0:
        raise LangError(f"--sil-prob must be in [0, 1), got {sil_prob}")
    lines: list[str] = []
    where = "lexicon"

    def pron_ids(e: LexiconEntry, disambig: str) -> list[int]:
        seq = list(e.phones) + ([disambig] if disambig else [])
        return phones.ids_of(seq, f"{where} entry '{e.word}'")

    if sil_prob == 0.0:
        loop, nxt = 0, 1
        for e, dis in prons:
            cost = -math.log(e.prob)
            pron = pron_ids(e, dis)
            word = words.id(e.word, where)
            cur = loop
            for i, p in enumerate(pron[:-1]):
                lines.append(_arc(cur, nxt, p, word if i == 0 else 0, cost if i == 0 else 0.0))
                cur, nxt = nxt, nxt + 1
            last = len(pron) - 1
            lines.append(_arc(cur, loop, pron[-1], word if last == 0 else 0,
                              cost if last == 0 else 0.0))
        lines.append(f"{loop}\t0")
        return "\n".join(lines) + "\n"

    sil_cost = -math.log(sil_prob)
    no_sil_cost = -math.log(1.0 - sil_prob)
    sil = phones.id(sil_phone, "optional silence")
    dis_id = phones.id(sil_disambig, "silence disambiguation symbol") if sil_disambig else None
    start, loop, sil_state, nxt = 0, 1, 2, 3
    lines.append(_arc(start, loop, 0, 0, no_sil_cost))
    if style == "py":
        lines.append(_arc(start, sil_state, 0, 0, sil_cost))
        if dis_id is None:
            lines.append(_arc(sil_state, loop, sil, 0, 0.0))
        else:
            lines.append(_arc(sil_state, nxt, sil, 0, 0.0))
            lines.append(_arc(nxt, loop, dis_id, 0, 0.0))
            nxt += 1
    else:
        if dis_id is None:
            lines.append(_arc(start, loop, sil, 0, sil_cost))
            lines.append(_arc(sil_state, loop, sil, 0, 0.0))
        else:
            dstate, nxt = nxt, nxt + 1
            lines.append(_arc(start, dstate, sil, 0, sil_cost))
            lines.append(_arc(sil_state, dstate, sil, 0, 0.0))
            lines.append(_arc(dstate, loop, dis_id, 0, 0.0))
    for e, dis in prons:
        pron_cost = -math.log(e.prob)
        pron = pron_ids(e, dis)
        word = words.id(e.word, where)
        cur = loop
        for i, p in enumerate(pron[:-1]):
            lines.append(_arc(cur, nxt, p, word if i == 0 else 0, pron_cost if i == 0 else 0.0))
            cur, nxt = nxt, nxt + 1
        last = len(pron) - 1
        olabel = word if last == 0 else 0
        own = pron_cost if last == 0 else 0.0
        if style == "pl" and pron[-1] == sil:
            lines.append(_arc(cur, loop, pron[-1], olabel, own))  # no opt-sil after silence
            continue
        lines.append(_arc(cur, loop, pron[-1], olabel, no_sil_cost + own))
        lines.append(_arc(cur, sil_state, pron[-1], olabel, sil_cost + own))
    lines.append(f"{loop}\t0")
    return "\n".join(lines) + "\n"


def make_lexicon_fst(prons: Sequence[tuple[LexiconEntry, str]], phones: SymbolTable,
                     words: SymbolTable, sil_prob: float, sil_phone: str,
                     sil_disambig: str | None = None, self_loops: Sequence[str] = (),
                     style: str = "py"):
    """A kaldifst.StdVectorFst: compiled, ``self_loops`` (e.g. ['#0']) added, olabel-sorted."""
    import kaldi_hmm_gmm  # noqa: F401  (before kaldifst: importing kaldifst first can hang)
    import kaldifst

    text = lexicon_fst_text(prons, phones, words, sil_prob, sil_phone, sil_disambig, style)
    fst = kaldifst.compile(text)
    if self_loops:
        kaldifst.add_self_loops(fst, phones.ids_of(self_loops, "wdisambig"),
                                words.ids_of(self_loops, "wdisambig"))
    kaldifst.arcsort(fst, sort_type="olabel")
    return fst


def write_fst(fst, path: str | os.PathLike) -> None:
    """Write an FST in OpenFst binary form to a temporary name, then rename it into place."""
    write_via_temp(path, fst.write)
