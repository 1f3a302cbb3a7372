#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The dictionary directory from the LibriSpeech lexicon, as Kaldi's egs/librispeech/s5/local/
prepare_dict.sh makes it when run from its stage 3 (Kaldi's mini_librispeech run.sh does).

Reads ``librispeech-lexicon.txt`` (OpenSLR resource 11: ``WORD<tab>PHONE PHONE ...``, ARPAbet
with stress digits, one pronunciation per line; its 200,000 words are the LMs' vocabulary, the
pronunciations CMUdict's or from Kaldi's Sequitur G2P model). Writes <dict-dir>/{lexicon.txt,
silence_phones.txt (SIL, SPN), optional_silence.txt (SIL), nonsilence_phones.txt (one line per
base phone with its stress variants: one tree root), extra_questions.txt (the silence phones,
then one line per stress level)} through nnetmix/lang/cmu.py's write_dict_dir, and adds
``!SIL SIL``, ``<SPOKEN_NOISE> SPN`` and ``<UNK> SPN`` to the lexicon, as Kaldi's stages 3-4.
Kaldi's stages 0-2 (CMUdict and G2P pronunciations for words of the vocabulary the downloaded
lexicon lacks) are not run, as in Kaldi's recipe: the downloaded lexicon covers the vocabulary.
A line that is not a word and ARPAbet phones is one error naming the file and line, and nothing
is written.

Usage: ``local/prepare_dict.py <lexicon> <dict-dir>``
"""
from __future__ import annotations

import argparse
import os

from nnetmix.lang.cmu import split_stress, write_dict_dir
from nnetmix.lang.dictdir import LexiconEntry
from nnetmix.lang.symbols import LangError

from local_script import run_script, script_parser

__all__ = ["SILENCE_WORDS", "read_lexicon", "prepare_dict"]

#: The words Kaldi's prepare_dict.sh (stage 4) adds and their silence phones.
SILENCE_WORDS = {"!SIL": "SIL", "<SPOKEN_NOISE>": "SPN", "<UNK>": "SPN"}


def read_lexicon(path: str | os.PathLike) -> list[LexiconEntry]:
    """The pronunciations of a LibriSpeech-style lexicon; LangError naming a bad line."""
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise LangError(f"no such file {path} (librispeech-lexicon.txt of OpenSLR resource 11: "
                        f"local/download_corpus.py, or pass --corpus-dir)") from None
    entries = []
    with fh:
        for n, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 2:
                raise LangError(f"{path}:{n}: word '{fields[0]}' has no phones")
            for p in fields[1:]:
                try:
                    split_stress(p)
                except LangError as e:
                    raise LangError(f"{path}:{n}: {e} (word {fields[0]})") from None
            entries.append(LexiconEntry(fields[0], 1.0, tuple(fields[1:])))
    if not entries:
        raise LangError(f"{path}: no pronunciations")
    return entries


def prepare_dict(lexicon: str | os.PathLike, dict_dir: str | os.PathLike) -> int:
    """Write ``dict_dir`` from ``lexicon``; the number of pronunciations read."""
    entries = read_lexicon(lexicon)
    write_dict_dir(dict_dir, entries, SILENCE_WORDS, optional_silence="SIL")
    return len(entries)


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("lexicon", help="librispeech-lexicon.txt")
    p.add_argument("dict_dir", help="the dictionary directory to write (data/local/dict_nosp)")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    n = prepare_dict(args.lexicon, args.dict_dir)
    print(f"{args.prog}: wrote {args.dict_dir}: {n} pronunciations of {args.lexicon} and "
          f"{len(SILENCE_WORDS)} silence words")


if __name__ == "__main__":
    run_script(get_args(), main)
