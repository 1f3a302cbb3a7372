"""The dictionary directory (data/local/dict) that utils/prepare_lang.sh starts from.

Files, as Kaldi's utils/validate_dict_dir.pl expects them: ``silence_phones.txt`` and
``nonsilence_phones.txt`` (one line per base phone; the phones on a line are its stress or tone
variants and share a tree root), ``optional_silence.txt`` (one silence phone), ``lexicon.txt``
(``word phone ...``) or ``lexiconp.txt`` (``word prob phone ...``, used when present), and
``extra_questions.txt`` (may be absent or empty). Every check names the file and the line.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from nnetmix.data.io import ENCODING, split_fields
from nnetmix.lang.symbols import LangError

__all__ = ["LexiconEntry", "Dictionary", "read_dict_dir", "RESERVED_WORDS"]

#: Words prepare_lang.sh adds itself (words.txt) or refuses in a lexicon.
RESERVED_WORDS = ("<eps>", "#0", "<s>", "</s>")
_POSITION_SUFFIXES = ("_B", "_E", "_I", "_S")


@dataclass(frozen=True)
class LexiconEntry:
    """One pronunciation: the word, its probability (1.0 from lexicon.txt) and its phones."""

    word: str
    prob: float
    phones: tuple[str, ...]


@dataclass
class Dictionary:
    """A parsed, checked dictionary directory."""

    silence: list[list[str]]          #: lines of silence_phones.txt
    nonsilence: list[list[str]]       #: lines of nonsilence_phones.txt
    optional_silence: str             #: the phone in optional_silence.txt
    extra_questions: list[list[str]]  #: lines of extra_questions.txt (none when absent)
    lexicon: list[LexiconEntry]       #: in file order (it sets the state order of L.fst)
    lexicon_file: str                 #: lexiconp.txt or lexicon.txt, whichever was read

    @property
    def silence_phones(self) -> list[str]:
        return [p for line in self.silence for p in line]

    @property
    def nonsilence_phones(self) -> list[str]:
        return [p for line in self.nonsilence for p in line]


def _read_lines(path: Path) -> list[str]:
    if not path.is_file():
        raise LangError(f"no such file {path}")
    with open(path, **ENCODING) as fh:
        return fh.read().splitlines()


def _check_phone(p: str, where: str, position_dependent: bool) -> None:
    if p == "<eps>" or p.startswith("#"):
        raise LangError(f"{where}: phone '{p}' is reserved (<eps> and #N are disambiguation "
                        "symbols)")
    if position_dependent and p.endswith(_POSITION_SUFFIXES):
        raise LangError(f"{where}: phone '{p}' ends in a word-position suffix _B/_E/_I/_S, "
                        "which prepare_lang.sh adds itself (rename it, or use "
                        "--position-dependent-phones false)")


def _read_phone_lists(path: Path, seen: dict[str, str], position_dependent: bool,
                      allow_empty: bool) -> list[list[str]]:
    lines = []
    for n, text in enumerate(_read_lines(path), 1):
        phones = split_fields(text)
        if not phones:
            if allow_empty:
                continue
            raise LangError(f"{path}:{n}: empty line (one base phone and its variants per line)")
        for p in phones:
            where = f"{path}:{n}"
            _check_phone(p, where, position_dependent)
            if p in seen:
                raise LangError(f"{where}: phone '{p}' is listed twice (also at {seen[p]}); "
                                "each phone belongs to exactly one of silence_phones.txt and "
                                "nonsilence_phones.txt, once")
            seen[p] = where
        lines.append(phones)
    if not lines and not allow_empty:
        raise LangError(f"{path}: no phones")
    return lines


def _read_lexicon(path: Path, with_probs: bool, phones: dict[str, str]) -> list[LexiconEntry]:
    entries: list[LexiconEntry] = []
    seen: dict[tuple[str, tuple[str, ...]], int] = {}
    for n, text in enumerate(_read_lines(path), 1):
        fields = split_fields(text)
        if not fields:
            raise LangError(f"{path}:{n}: empty line")
        word, rest = fields[0], fields[1:]
        where = f"{path}:{n}"
        if word in RESERVED_WORDS:
            raise LangError(f"{where}: word '{word}' is reserved (prepare_lang.sh adds "
                            "<eps>, #0, <s> and </s> to words.txt itself)")
        prob = 1.0
        if with_probs:
            try:
                prob = float(rest[0]) if rest else math.nan
            except ValueError:
                prob = math.nan
            if not 0.0 < prob <= 1.0:
                raise LangError(f"{where}: expected 'word prob phone ...' with 0 < prob <= 1, "
                                f"got '{text.strip()[:80]}'")
            rest = rest[1:]
        if not rest:
            raise LangError(f"{where}: word '{word}' has no phones (empty pronunciations are "
                            "not supported)")
        for p in rest:
            if p not in phones:
                raise LangError(f"{where}: phone '{p}' of word '{word}' is not in "
                                "silence_phones.txt or nonsilence_phones.txt")
        key = (word, tuple(rest))
        if key in seen:
            raise LangError(f"{where}: duplicate pronunciation of '{word}' (also line {seen[key]})")
        seen[key] = n
        entries.append(LexiconEntry(word, prob, tuple(rest)))
    if not entries:
        raise LangError(f"{path}: empty lexicon")
    return entries


def read_dict_dir(src: str | os.PathLike, position_dependent: bool = True) -> Dictionary:
    """Read and check ``src`` as validate_dict_dir.pl does; LangError on the first problem."""
    src = Path(src)
    if not src.is_dir():
        raise LangError(f"no such directory {src}")
    phones: dict[str, str] = {}
    silence = _read_phone_lists(src / "silence_phones.txt", phones, position_dependent, False)
    nonsilence = _read_phone_lists(src / "nonsilence_phones.txt", phones, position_dependent,
                                   False)
    opt_path = src / "optional_silence.txt"
    opt = [f for line in _read_lines(opt_path) for f in split_fields(line)]
    if len(opt) != 1:
        raise LangError(f"{opt_path}: expected exactly one phone, got {len(opt)}")
    if opt[0] not in {p for line in silence for p in line}:
        raise LangError(f"{opt_path}:1: optional silence phone '{opt[0]}' is not in "
                        f"{src / 'silence_phones.txt'}")
    extra: list[list[str]] = []
    eq_path = src / "extra_questions.txt"
    if eq_path.is_file():
        for n, text in enumerate(_read_lines(eq_path), 1):
            line = split_fields(text)
            for p in line:
                if p not in phones:
                    raise LangError(f"{eq_path}:{n}: phone '{p}' is not in silence_phones.txt "
                                    "or nonsilence_phones.txt")
            if line:
                extra.append(line)
    lexp = src / "lexiconp.txt"
    lex_path, with_probs = (lexp, True) if lexp.is_file() else (src / "lexicon.txt", False)
    lexicon = _read_lexicon(lex_path, with_probs, phones)
    return Dictionary(silence, nonsilence, opt[0], extra, lexicon, str(lex_path))
