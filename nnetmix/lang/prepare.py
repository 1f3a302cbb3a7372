"""Build a Kaldi lang directory (data/lang) from a dictionary directory, as utils/prepare_lang.sh.

Writes ``phones.txt words.txt oov.txt oov.int topo L.fst L_disambig.fst`` and ``phones/`` with
``silence nonsilence optional_silence disambig context_indep`` (.txt .int .csl), ``sets roots
extra_questions`` (.txt .int), ``word_boundary`` (.txt .int, position-dependent phones only),
``wdisambig.txt wdisambig_phones.int wdisambig_words.int`` and ``align_lexicon`` (.txt .int),
each laid out as Kaldi's script writes it. The tmp dir gets ``lexiconp.txt``,
``lexiconp_disambig.txt``, ``phone_map.txt`` and ``lex_ndisambig``.

Not supported (Kaldi options): --unk-fst, --phone-symbol-table, --extra-word-disambig-syms and
silence-probability lexicons (lexiconp_silprob.txt).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from nnetmix.data.io import c_key, c_sorted, write_lines
from nnetmix.lang.dictdir import Dictionary, read_dict_dir
from nnetmix.lang.lexicon_fst import LEXICON_FST_STYLES, make_lexicon_fst, write_fst
from nnetmix.lang.phones import (add_lex_disambig, apply_phone_map, make_phone_map,
                                 position_dependent_lexicon, word_boundary_class)
from nnetmix.lang.symbols import LangError, SymbolTable
from nnetmix.lang.topo import make_topo
from nnetmix.options import option

__all__ = ["LangOptions", "LangSummary", "prepare_lang"]


@dataclass
class LangOptions:
    """prepare_lang.sh's options (same names and defaults)."""

    position_dependent_phones: bool = option(True, "mark phones _B _E _I _S by their position in "
                                             "the word")
    sil_prob: float = option(0.5, "probability of optional silence between words, 0 <= p < 1")
    num_sil_states: int = option(5, "HMM states of silence phones")
    num_nonsil_states: int = option(3, "HMM states of other phones")
    share_silence_phones: bool = option(False, "one tree root (pdfs) for all silence phones")
    share_state_roots: bool = option(True, "one tree root for all states of a phone")
    num_extra_phone_disambig_syms: int = option(1, "phone disambiguation symbols beyond the "
                                                "lexicon's (the first is used after "
                                                "optional silence)")
    lexicon_fst_style: str = option("py", "py: utils/lang/make_lexicon_fst.py layout; pl: the "
                                    "older make_lexicon_fst.pl layout")


@dataclass
class LangSummary:
    num_phones: int      #: non-disambiguation phones
    num_disambig: int    #: #0 ... #n in phones/disambig.txt
    num_words: int       #: words of the lexicon
    num_prons: int


def _write_ints(path: Path, rows: Sequence[Sequence[int]]) -> None:
    write_lines(path, [" ".join(str(i) for i in row) for row in rows])


def _write_set(phdir: Path, name: str, phones: Sequence[str], table: SymbolTable) -> None:
    ids = table.ids_of(phones, f"phones/{name}.txt")
    write_lines(phdir / f"{name}.txt", phones)
    write_lines(phdir / f"{name}.int", [str(i) for i in ids])
    write_lines(phdir / f"{name}.csl", [":".join(str(i) for i in ids)])


def prepare_lang(dict_dir: str | os.PathLike, oov_word: str, tmp_dir: str | os.PathLike,
                 lang_dir: str | os.PathLike, opts: LangOptions | None = None) -> LangSummary:
    """Write ``lang_dir`` from ``dict_dir``; LangError (file, line, what) on bad input."""
    opts = opts or LangOptions()
    if opts.lexicon_fst_style not in LEXICON_FST_STYLES:
        raise LangError(f"--lexicon-fst-style must be py or pl, got '{opts.lexicon_fst_style}'")
    if not 0.0 <= opts.sil_prob < 1.0:
        raise LangError(f"--sil-prob must be in [0, 1), got {opts.sil_prob}")
    pd = opts.position_dependent_phones
    d: Dictionary = read_dict_dir(dict_dir, position_dependent=pd)
    tmp, lang = Path(tmp_dir), Path(lang_dir)
    phdir = lang / "phones"
    for p in (tmp, lang, phdir):
        p.mkdir(parents=True, exist_ok=True)

    lexicon = position_dependent_lexicon(d.lexicon) if pd else list(d.lexicon)
    pmap = make_phone_map(d, pd)
    write_lines(tmp / "phone_map.txt", [" ".join([p] + v) for p, v in pmap.items()])
    write_lines(tmp / "lexiconp.txt",
                [f"{e.word}\t{e.prob:g}\t{' '.join(e.phones)}" for e in lexicon])

    # Phone sets, in the order prepare_lang.sh lists them.
    if opts.share_silence_phones:
        set_lines = apply_phone_map([d.silence_phones] + d.nonsilence, pmap)
        first = "not-shared not-split"
    else:
        set_lines = apply_phone_map(d.silence + d.nonsilence, pmap)
        first = None
    split_kind = "shared split" if opts.share_state_roots else "not-shared split"
    root_kinds = [first if (i == 0 and first) else split_kind for i in range(len(set_lines))]
    silence = [p for line in apply_phone_map(d.silence, pmap) for p in line]
    nonsilence = [p for line in apply_phone_map(d.nonsilence, pmap) for p in line]
    extra_q = [" ".join(line) for line in apply_phone_map(d.extra_questions, pmap)]
    if pd:  # questions about word position, as the script appends them (trailing space and all)
        for suffix in ("_B", "_E", "_I", "_S"):
            extra_q.append("".join(f"{p}{suffix} " for p in d.nonsilence_phones))
        for suffix in ("", "_B", "_E", "_I", "_S"):
            extra_q.append("".join(f"{p}{suffix} " for p in d.silence_phones))

    # Disambiguation symbols: the lexicon's, then one more for the optional silence.
    prons, max_disambig = add_lex_disambig(lexicon)
    ndisambig = max_disambig + opts.num_extra_phone_disambig_syms
    (tmp / "lex_ndisambig").write_text(f"{ndisambig}\n")
    write_lines(tmp / "lexiconp_disambig.txt",
                [f"{e.word}\t{e.prob:g}\t{' '.join(e.phones + ((dis,) if dis else ()))}"
                 for e, dis in prons])
    disambig = [f"#{n}" for n in range(ndisambig + 1)]
    phones = SymbolTable.dense(["<eps>"] + silence + nonsilence + disambig,
                               str(lang / "phones.txt"))

    vocab = c_sorted({e.word for e in lexicon})
    words = SymbolTable.dense(["<eps>"] + vocab + ["#0", "<s>", "</s>"], str(lang / "words.txt"))
    if oov_word not in words or oov_word in ("<eps>", "#0", "<s>", "</s>"):
        raise LangError(f"the OOV word '{oov_word}' is not a word of {d.lexicon_file} "
                        "(give a word the lexicon has, e.g. <UNK> or <SPOKEN_NOISE>)")

    write_lines(lang / "phones.txt", phones.lines())
    write_lines(lang / "words.txt", words.lines())
    write_lines(lang / "oov.txt", [oov_word])
    write_lines(lang / "oov.int", [str(words.id(oov_word))])

    write_lines(phdir / "sets.txt", [" ".join(s) for s in set_lines])
    _write_ints(phdir / "sets.int", [phones.ids_of(s, "phones/sets.txt") for s in set_lines])
    write_lines(phdir / "roots.txt", [f"{k} {' '.join(s)}" for k, s in zip(root_kinds, set_lines)])
    write_lines(phdir / "roots.int",
                [f"{k} {' '.join(str(i) for i in phones.ids_of(s, 'phones/roots.txt'))}"
                 for k, s in zip(root_kinds, set_lines)])
    write_lines(phdir / "extra_questions.txt", extra_q)
    _write_ints(phdir / "extra_questions.int",
                [phones.ids_of(q.split(), "phones/extra_questions.txt") for q in extra_q])
    for name, members in (("silence", silence), ("nonsilence", nonsilence),
                          ("optional_silence", [d.optional_silence]), ("disambig", disambig),
                          ("context_indep", silence)):
        _write_set(phdir, name, members, phones)
    if pd:
        wb = [(p, word_boundary_class(p)) for p in silence + nonsilence]
        write_lines(phdir / "word_boundary.txt", [f"{p} {c}" for p, c in wb])
        write_lines(phdir / "word_boundary.int", [f"{phones.id(p)} {c}" for p, c in wb])
    else:
        src_wb = Path(dict_dir) / "word_boundary.txt"
        for stale in ("word_boundary.txt", "word_boundary.int"):
            (phdir / stale).unlink(missing_ok=True)
        if src_wb.is_file():  # made by another source, as Kaldi allows
            rows = [line.split() for line in src_wb.read_text().splitlines() if line.strip()]
            write_lines(phdir / "word_boundary.txt", [" ".join(r) for r in rows])
            write_lines(phdir / "word_boundary.int",
                        [f"{phones.id(r[0], str(src_wb))} {' '.join(r[1:])}" for r in rows])
    write_lines(phdir / "wdisambig.txt", ["#0"])
    write_lines(phdir / "wdisambig_phones.int", [str(phones.id("#0"))])
    write_lines(phdir / "wdisambig_words.int", [str(words.id("#0"))])

    # align_lexicon: "word word phones", plus "<eps> <eps> sil", sorted and unique as sort | uniq.
    rows = {f"{e.word} {e.word} {' '.join(e.phones)}" for e in lexicon}
    rows.add(f"<eps> <eps> {d.optional_silence}")
    align = sorted(rows, key=c_key)
    write_lines(phdir / "align_lexicon.txt", align)
    align_int = []
    for row in align:
        f = row.split()
        align_int.append(" ".join([str(words.id(f[0])), str(words.id(f[1]))]
                                  + [str(i) for i in phones.ids_of(f[2:], "align_lexicon")]))
    write_lines(phdir / "align_lexicon.int", align_int)

    topo = make_topo(opts.num_nonsil_states, opts.num_sil_states,
                     phones.ids_of(nonsilence), phones.ids_of(silence))
    write_lines(lang / "topo", topo.splitlines())

    plain = [(e, "") for e in lexicon]
    style = opts.lexicon_fst_style
    write_fst(make_lexicon_fst(plain, phones, words, opts.sil_prob, d.optional_silence,
                               style=style), lang / "L.fst")
    write_fst(make_lexicon_fst(prons, phones, words, opts.sil_prob, d.optional_silence,
                               sil_disambig=f"#{ndisambig}", self_loops=["#0"], style=style),
              lang / "L_disambig.fst")
    return LangSummary(len(silence) + len(nonsilence), len(disambig), len(vocab), len(lexicon))
