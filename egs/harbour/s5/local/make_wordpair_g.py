#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Write the word-pair grammar's G.fst into a lang directory and report its test perplexity.

Reads the sentence grammar (local/harbour_grammar.txt) and <lang-dir>/words.txt; writes
<lang-dir>/G.fst: one state per word, arcs to the words the grammar lets follow it, all
continuations equally likely, as Kaldi's egs/rm/s5 makes G from RM's word-pair file (see
nnetmix/lang/sentgram.py). With --text, prints the grammar's perplexity of that Kaldi text file
(SRILM's count: words plus one end of sentence per sentence) and writes it to <lang-dir>/ppl.
"""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import logging
import os
import sys

from nnetmix.errors import NnetmixError
from nnetmix.lang.lexicon_fst import write_fst
from nnetmix.lang.sentgram import read_grammar, wordpair_fst_text
from nnetmix.lang.symbols import LangError, read_symbol_table


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--text", help="Kaldi text file whose perplexity is reported")
    p.add_argument("grammar", help="sentence grammar file")
    p.add_argument("lang_dir", help="lang directory (words.txt in, G.fst out)")
    return p.parse_args()


def make_wordpair_g(grammar_file: str, lang_dir: str, text: str | None = None) -> None:
    import kaldi_hmm_gmm  # noqa: F401  (before kaldifst, see docs/design.md)
    import kaldifst

    grammar = read_grammar(grammar_file)
    wpg = grammar.word_pairs()
    words = read_symbol_table(os.path.join(lang_dir, "words.txt"))
    missing = [w for w in grammar.words() if w not in words]
    if missing:
        raise LangError(f"{lang_dir}/words.txt lacks {len(missing)} grammar word(s): "
                        f"{' '.join(missing[:10])} (was the lang made from this grammar's words?)")
    g = kaldifst.compile(wordpair_fst_text(wpg, words))
    kaldifst.arcsort(g, sort_type="ilabel")
    write_fst(g, os.path.join(lang_dir, "G.fst"))
    logging.info(f"wrote {lang_dir}/G.fst: {g.num_states} states, {wpg.num_pairs()} word pairs, "
                 f"{len(wpg.starts)} sentence starts, {len(wpg.ends)} sentence ends")
    if text:
        with open(text, encoding="utf-8") as fh:
            sents = [line.split()[1:] for line in fh if line.split()]
        try:
            ppl, nw, ns = wpg.perplexity(sents)
        except LangError as e:
            raise LangError(f"{text}: a sentence the word-pair grammar does not allow: {e}") from None
        line = f"{text}: {ns} sentences, {nw} words, word-pair perplexity {ppl:.2f}"
        with open(os.path.join(lang_dir, "ppl"), "w", encoding="utf-8") as fh:
            fh.write(line + "\n")
        print(line)


if __name__ == "__main__":
    logging.basicConfig(format="%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s",
                        level=logging.INFO)
    args = get_args()
    try:
        make_wordpair_g(args.grammar, args.lang_dir, args.text)
    except NnetmixError as e:
        logging.error(str(e))
        sys.exit(1)
