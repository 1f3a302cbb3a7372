#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Estimate the digits recipe's language model: an interpolated Kneser-Ney bigram (ARPA).

Reads a Kaldi ``text`` file (``utt-id w1 w2 ...``), maps words missing from the lang
directory's words.txt to its OOV word (oov.txt), and writes the ARPA file; the library code is
nnetmix/lang/arpa.py. Called by local/prepare_lm.sh.
"""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import logging
import os
import sys

# the nnetmix tree (egs/digits/s5/local -> ../../../..), in case nnetmix is not installed
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), *[".."] * 4))

from nnetmix.lang import (estimate_kn_bigram, normalisation_error, read_lm_text,  # noqa: E402
                          read_symbol_table, write_arpa)
from nnetmix.errors import NnetmixError  # noqa: E402


def get_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--order", type=int, default=2, help="n-gram order, 1 or 2 (default 2)")
    parser.add_argument("--lang", required=True, help="lang directory (words.txt, oov.txt)")
    parser.add_argument("text", help="training transcripts, Kaldi text format")
    parser.add_argument("arpa", help="output ARPA file")
    return parser.parse_args()


def train_lm(text: str, lang: str, arpa: str, order: int = 2) -> None:
    """Estimate the LM of ``text`` over ``lang``'s vocabulary and write it to ``arpa``."""
    words = read_symbol_table(os.path.join(lang, "words.txt"))
    with open(os.path.join(lang, "oov.txt")) as fh:
        oov = fh.read().split()[0]
    corpus = read_lm_text(text, words, oov)
    lm = estimate_kn_bigram(corpus.sentences, order=order)
    err, hist = normalisation_error(lm)
    if err > 1e-6:
        raise NnetmixError(f"the estimated LM does not normalise: history '{' '.join(hist)}' "
                           f"sums to 1{err:+.2e}")
    write_arpa(arpa, lm)
    logging.info("wrote %s: order %d, %s n-grams, from %d sentences (%d tokens, %d OOV)", arpa,
                 lm.order, "+".join(str(len(g)) for g in lm.ngrams), len(corpus.sentences),
                 corpus.num_tokens, sum(corpus.oov.values()))


if __name__ == "__main__":
    logging.basicConfig(format="%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s",
                        level=logging.INFO)
    args = get_args()
    logging.info(vars(args))
    try:
        train_lm(args.text, args.lang, args.arpa, args.order)
    except NnetmixError as e:
        print(f"{sys.argv[0]}: {e}", file=sys.stderr)
        sys.exit(1)
