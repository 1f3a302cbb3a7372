"""Invariants of a lang directory, the core of what Kaldi's utils/validate_lang.pl checks.

Symbol tables dense from ``<eps> 0``; words.txt ends with ``#0 <s> </s>``; every ``#n`` phone in
phones/disambig; silence and nonsilence partition the real phones, as do sets and roots; the
word-boundary table and the topology cover every real phone; oov.int agrees with oov.txt; L.fst
and L_disambig.fst read and are sorted by output label.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from nnetmix.kaldi.fstfile import FstFormatError, read_checked_fst
from nnetmix.lang.symbols import LangError, SymbolTable, read_symbol_table

__all__ = ["lang_problems", "validate_lang_dir"]


def _ints(path: Path, skip: int = 0) -> list[list[int]]:
    if not path.is_file():
        raise LangError(f"no such file {path}")
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        f = line.split()[skip:]
        try:
            rows.append([int(x) for x in f])
        except ValueError:
            raise LangError(f"{path}:{n}: expected integers, got '{line[:80]}'") from None
    return rows


def _dense(table: SymbolTable) -> str | None:
    if sorted(table.ids) != list(range(len(table))):
        return f"{table.name}: ids are not 0..{len(table) - 1}"
    if table.get("<eps>") != 0:
        return f"{table.name}: <eps> is not 0"
    return None


def lang_problems(lang: str | os.PathLike, check_fsts: bool = True) -> list[str]:
    """Every broken invariant of ``lang``, one line each (empty when the directory is good)."""
    lang = Path(lang)
    ph = lang / "phones"
    out: list[str] = []
    phones = read_symbol_table(lang / "phones.txt")
    words = read_symbol_table(lang / "words.txt")
    for t in (phones, words):
        if (p := _dense(t)) is not None:
            out.append(p)
    for w in ("#0", "<s>", "</s>"):
        if w not in words:
            out.append(f"{words.name}: no {w}")
    disambig = {i for s, i in phones if re.fullmatch(r"#\d+", s)}
    real = {i for s, i in phones if i != 0 and i not in disambig}
    listed = {i for row in _ints(ph / "disambig.int") for i in row}
    if listed != disambig:
        out.append(f"{ph / 'disambig.int'}: has {sorted(listed)}, phones.txt's #n are "
                   f"{sorted(disambig)}")
    sil = [i for row in _ints(ph / "silence.int") for i in row]
    nonsil = [i for row in _ints(ph / "nonsilence.int") for i in row]
    if sorted(sil + nonsil) != sorted(real):
        out.append(f"{ph}: silence.int and nonsilence.int do not partition the {len(real)} phones")
    for name, skip in (("sets.int", 0), ("roots.int", 2)):
        members = [i for row in _ints(ph / name, skip) for i in row]
        if sorted(members) != sorted(real):
            out.append(f"{ph / name}: does not list every phone exactly once")
    if (ph / "word_boundary.int").is_file():
        wb = [
            line.split() for line in (ph / "word_boundary.int").read_text().splitlines()]
        covered = {int(r[0]) for r in wb}
        if covered != real:
            out.append(f"{ph / 'word_boundary.int'}: misses phones {sorted(real - covered)}")
        bad = [r for r in wb if r[1:] not in (["begin"], ["end"], ["internal"], ["singleton"],
                                               ["nonword"])]
        if bad:
            out.append(f"{ph / 'word_boundary.int'}: bad class in '{' '.join(bad[0])}'")
    topo = (lang / "topo").read_text() if (lang / "topo").is_file() else ""
    topo_phones = [int(x) for m in re.findall(r"<ForPhones>(.*?)</ForPhones>", topo, re.S)
                   for x in m.split()]
    if sorted(topo_phones) != sorted(real):
        out.append(f"{lang / 'topo'}: <ForPhones> do not cover every phone exactly once")
    oov_txt = (lang / "oov.txt").read_text().split() if (lang / "oov.txt").is_file() else []
    oov_int = (lang / "oov.int").read_text().split() if (lang / "oov.int").is_file() else []
    if len(oov_txt) != 1 or oov_int != [str(words.get(oov_txt[0]))]:
        out.append(f"{lang}: oov.txt {oov_txt} and oov.int {oov_int} disagree with words.txt")
    if check_fsts:
        for name in ("L.fst", "L_disambig.fst"):
            path = lang / name
            if not path.is_file():
                out.append(f"{path}: missing (expected an OpenFst FST)")
                continue
            try:
                fst = read_checked_fst(str(path))
            except FstFormatError as e:
                out.append(str(e))
                continue
            if not fst.is_olabel_sorted:
                out.append(f"{path}: arcs are not sorted by output label")
    return out


def validate_lang_dir(lang: str | os.PathLike, check_fsts: bool = True) -> None:
    """LangError naming the first broken invariant."""
    problems = lang_problems(lang, check_fsts)
    if problems:
        raise LangError(problems[0] + (f" (and {len(problems) - 1} more problems)"
                                       if len(problems) > 1 else ""))
