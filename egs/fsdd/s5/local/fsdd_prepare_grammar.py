#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The isolated-word grammar G.fst of the FSDD recipe: exactly one digit word per utterance.

G has two states: from the start state one arc per word (input and output the word, cost
-log(1/10): the ten digits equally likely) to a final state. The optional silence before and
after the word is not in G: L.fst (utils/prepare_lang.sh) already puts an optional SIL at the
start and after every word, so HCLG accepts "[SIL] digit [SIL]", the grammar the recipe wants.
An ARPA unigram through utils/format_lm.sh would not do: its words loop on the unigram state, so
it allows any number of words, where an isolated-word task allows one. The text is compiled with
kaldifst (OpenFst's fstcompile) against words.txt, ilabel-sorted as arpa2fst leaves G, and
checked as utils/format_lm.sh checks G (check_g: no cycle of empty words, and the per-state
probability sums, which here are exactly one).

Usage: ``local/fsdd_prepare_grammar.py <words.txt> <lexicon.txt> <G.fst>``; G.fst is written
to a temporary name and renamed into place.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import math
import os

import kaldi_hmm_gmm  # noqa: F401  (before kaldifst: importing kaldifst first can hang)
import kaldifst

from nnetmix.lang.grammar import check_g
from nnetmix.lang.lexicon_fst import write_fst
from nnetmix.lang.symbols import LangError, SymbolTable, read_symbol_table

from fsdd_data_prep import WORDS
from local_script import run_script, script_parser

__all__ = ["grammar_text", "make_grammar"]


def grammar_text(words: SymbolTable, vocab=WORDS) -> str:
    """OpenFst text of the one-word grammar over ``vocab``, labels from ``words``."""
    if not vocab:
        raise LangError("the grammar needs at least one word")
    cost = -math.log(1.0 / len(vocab))
    lines = [f"0\t1\t{words.id(w)}\t{words.id(w)}\t{cost:.7g}" for w in vocab]
    return "\n".join(lines + ["1\t0"]) + "\n"


def make_grammar(words_txt: str | os.PathLike, lexicon: str | os.PathLike,
                 g_fst: str | os.PathLike) -> tuple[float, float]:
    """Write G.fst; returns format_lm.sh's fstisstochastic numbers (both 0 here)."""
    words = read_symbol_table(words_txt)
    missing = [w for w in WORDS if w not in words]
    if missing:
        raise LangError(f"{words_txt}: no word {missing[0]} (make the lang directory from "
                        f"local/fsdd_prepare_dict.py's dictionary)")
    fst = kaldifst.compile(grammar_text(words))
    kaldifst.arcsort(fst, sort_type="ilabel")
    write_fst(fst, g_fst)
    try:
        return check_g(os.fspath(g_fst), os.fspath(lexicon), words)
    except LangError:
        os.unlink(g_fst)
        raise


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("words", help="words.txt of the lang directory")
    p.add_argument("lexicon", help="the lexicon the lang directory was made from")
    p.add_argument("g_fst", help="the G.fst to write")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    lo, hi = make_grammar(args.words, args.lexicon, args.g_fst)
    print(f"{args.prog}: wrote {args.g_fst}: {len(WORDS)} words, one per utterance; "
          f"fstisstochastic: {hi:g} {lo:g}")


if __name__ == "__main__":
    run_script(get_args(), main)
