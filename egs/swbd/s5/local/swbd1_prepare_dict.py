#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The Switchboard dictionary directory (data/local/dict_nosp) from the ms98 lexicon.

As Kaldi's egs/swbd/s5c/local/swbd1_prepare_dict.sh: the pronunciations of
``sw-ms98-dict.text`` (comment lines and its ``file:`` header line dropped), four silence
phones - ``sil`` (silence, the optional silence), ``spn`` (spoken noise: vocalized noise and
<unk>), ``nsn`` (noise), ``lau`` (laughter) - with the words ``!sil``, ``[vocalized-noise]``,
``[noise]``, ``[laughter]`` and ``<unk>`` added, every word mapped as the transcripts are
(:func:`swbd_text.map_word`), ``i ay`` added, everything lower-cased and
sorted unique. The nonsilence phones are every other phone the lexicon uses, one per line
(no stress or tone, so no extra questions).

Left out, on purpose: Kaldi's local/dict.patch (hand corrections of some 200 entries) and the
acronym handling (MSU_single_letter.txt, format_acronyms_dict.py), which rewrites spelled-out
letters and needs the same mapping of the transcripts; see the recipe's README section.

Run by local/swbd1_prepare_dict.sh: ``local/swbd1_prepare_dict.py <sw-ms98-dict.text>
<dict-dir>`` reads the ms98 lexicon and writes the dictionary directory.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from nnetmix.data.io import ENCODING, c_key, write_lines

from local_script import run_script, script_parser
from conversations import CorpusError
from swbd_text import map_word

__all__ = ["SILENCE_PHONES", "EXTRA_WORDS", "DictReport", "read_ms98_dict", "prepare_swbd_dict"]

#: Silence phones, in Kaldi's order; the first is the optional silence.
SILENCE_PHONES = ("sil", "spn", "nsn", "lau")
#: Words given a silence phone.
EXTRA_WORDS = (("!sil", "sil"), ("[vocalized-noise]", "spn"), ("[noise]", "nsn"),
               ("[laughter]", "lau"), ("<unk>", "spn"))


@dataclass
class DictReport:
    """Counts of the written dictionary, and lines of the source that were skipped."""

    words: int = 0
    prons: int = 0
    phones: int = 0
    warnings: list[str] = field(default_factory=list)


def read_ms98_dict(path: str | os.PathLike, warnings: list[str] | None = None
                   ) -> list[tuple[str, tuple[str, ...]]]:
    """``(word, phones)`` of each pronunciation line; a word without phones is skipped with a
    warning (it would be an empty pronunciation in the lexicon)."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"no such file {path} (the ms98 dictionary sw-ms98-dict.text from "
                          f"swb_ms98_transcriptions, LDC97S62 or openslr.org/resources/5)")
    entries = []
    with open(path, **ENCODING) as fh:
        for n, line in enumerate(fh, 1):
            f = line.split()
            if not f or f[0].startswith("#") or (n == 1 and f[0] == "file:"):
                continue
            if len(f) < 2:
                if warnings is not None:
                    warnings.append(f"WARNING: {path}:{n}: word '{f[0]}' has no phones; skipped")
                continue
            entries.append((f[0], tuple(f[1:])))
    if not entries:
        raise CorpusError(f"{path}: no pronunciation lines ('word phone phone ...')")
    return entries


def prepare_swbd_dict(ms98_dict: str | os.PathLike, dict_dir: str | os.PathLike) -> DictReport:
    """Write lexicon.txt, silence_phones.txt, optional_silence.txt, nonsilence_phones.txt and
    an empty extra_questions.txt into ``dict_dir``."""
    rep = DictReport()
    entries = read_ms98_dict(ms98_dict, rep.warnings)
    lexicon: set[str] = set()
    for word, phones in [(w, (p,)) for w, p in EXTRA_WORDS] + entries:
        mapped = map_word(word)
        if mapped:
            lexicon.add(" ".join((mapped,) + phones).lower())
    lexicon.add("i ay")
    lines = sorted(lexicon, key=c_key)
    phones = {p for line in lines for p in line.split()[1:]}
    nonsil = sorted(phones - set(SILENCE_PHONES), key=c_key)
    dict_dir = Path(dict_dir)
    dict_dir.mkdir(parents=True, exist_ok=True)
    (dict_dir / "lexiconp.txt").unlink(missing_ok=True)  # prepare_lang.sh would prefer it
    write_lines(dict_dir / "lexicon.txt", lines)
    write_lines(dict_dir / "silence_phones.txt", SILENCE_PHONES)
    write_lines(dict_dir / "optional_silence.txt", SILENCE_PHONES[:1])
    write_lines(dict_dir / "nonsilence_phones.txt", nonsil)
    write_lines(dict_dir / "extra_questions.txt", [])
    rep.words = len({line.split()[0] for line in lines})
    rep.prons, rep.phones = len(lines), len(nonsil) + len(SILENCE_PHONES)
    return rep


def get_args() -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("ms98_dict", help="sw-ms98-dict.text of the ms98 transcripts")
    parser.add_argument("dict_dir", help="output dictionary directory, e.g. data/local/dict_nosp")
    return parser.parse_args()


def _main(args: argparse.Namespace) -> None:
    report = prepare_swbd_dict(args.ms98_dict, args.dict_dir)
    for line in report.warnings:
        print(f"{args.prog}: {line}", file=sys.stderr)
    print(f"{args.prog}: done, {args.dict_dir}: {report.words} words, {report.prons} "
          f"pronunciations, {report.phones} phones")


if __name__ == "__main__":
    run_script(get_args(), _main)
