"""Symbol tables (phones.txt, words.txt) and the sym2int/int2sym mappings Kaldi scripts use.

A symbol table is ``symbol id`` per line (OpenFst's text SymbolTable; Kaldi's utils/sym2int.pl and
int2sym.pl read it). Lang directories need ids that are dense from 0 (``<eps> 0``), but a table
read here only needs unique symbols and unique ids.
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence, TextIO

from nnetmix.data.io import ENCODING, split_fields, write_lines
from nnetmix.errors import FormatError

__all__ = ["LangError", "SymbolTable", "read_symbol_table", "write_symbol_table",
           "parse_field_spec", "map_fields"]


class LangError(FormatError):
    """A dictionary, lexicon, lang directory or language model breaks what Kaldi expects of it."""


@dataclass
class SymbolTable:
    """Symbols and their integer ids, in file order; ``name`` is the file, for messages."""

    symbols: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    name: str = "<symbol table>"

    def __post_init__(self) -> None:
        self._to_id = dict(zip(self.symbols, self.ids))
        self._to_sym = dict(zip(self.ids, self.symbols))

    @classmethod
    def dense(cls, symbols: Iterable[str], name: str = "<symbol table>") -> "SymbolTable":
        """Ids 0, 1, 2, ... in the order given (how prepare_lang.sh numbers phones and words)."""
        syms = list(symbols)
        seen: set[str] = set()
        for s in syms:
            if s in seen:
                raise LangError(f"{name}: symbol '{s}' appears twice")
            seen.add(s)
        return cls(syms, list(range(len(syms))), name)

    def __contains__(self, symbol: str) -> bool:
        return symbol in self._to_id

    def __len__(self) -> int:
        return len(self.symbols)

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(zip(self.symbols, self.ids))

    def id(self, symbol: str, where: str = "") -> int:
        """The id of ``symbol``; LangError naming ``where`` (file:line) if the table lacks it."""
        try:
            return self._to_id[symbol]
        except KeyError:
            at = f"{where}: " if where else ""
            raise LangError(f"{at}symbol '{symbol}' is not in {self.name}") from None

    def symbol(self, ident: int, where: str = "") -> str:
        try:
            return self._to_sym[ident]
        except KeyError:
            at = f"{where}: " if where else ""
            raise LangError(f"{at}id {ident} is not in {self.name}") from None

    def get(self, symbol: str, default: int | None = None) -> int | None:
        return self._to_id.get(symbol, default)

    def ids_of(self, symbols: Sequence[str], where: str = "") -> list[int]:
        return [self.id(s, where) for s in symbols]

    def lines(self) -> list[str]:
        return [f"{s} {i}" for s, i in zip(self.symbols, self.ids)]

    def max_id(self) -> int:
        return max(self.ids) if self.ids else -1


def read_symbol_table(path: str | os.PathLike) -> SymbolTable:
    """Read ``symbol id`` lines; LangError naming file and line on a malformed or repeated entry."""
    path = os.fspath(path)
    try:
        with open(path, **ENCODING) as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        raise LangError(f"cannot read symbol table {path}: {e.strerror}") from None
    symbols: list[str] = []
    ids: list[int] = []
    seen_s: dict[str, int] = {}
    seen_i: dict[int, int] = {}
    for n, line in enumerate(lines, 1):
        fields = split_fields(line)
        if not fields:
            continue
        if len(fields) != 2 or not fields[1].lstrip("-").isdigit():
            raise LangError(f"{path}:{n}: expected 'symbol integer-id', got '{line[:80]}'")
        sym, ident = fields[0], int(fields[1])
        if sym in seen_s:
            raise LangError(f"{path}:{n}: symbol '{sym}' repeats line {seen_s[sym]}")
        if ident in seen_i:
            raise LangError(f"{path}:{n}: id {ident} repeats line {seen_i[ident]}")
        seen_s[sym], seen_i[ident] = n, n
        symbols.append(sym)
        ids.append(ident)
    return SymbolTable(symbols, ids, path)


def write_symbol_table(path: str | os.PathLike, table: SymbolTable) -> None:
    write_lines(path, table.lines())


_RANGE = re.compile(r"^(\d*)(-(\d*))?$")


def parse_field_spec(spec: str) -> Callable[[int], bool]:
    """sym2int.pl's -f: '2-', '1-2', '3', '-3', comma lists; fields are numbered from 1."""
    ranges = []
    for part in spec.split(","):
        m = _RANGE.match(part)
        if not part or m is None or (not m.group(1) and not m.group(2)):
            raise LangError(f"bad field specifier '{spec}' (e.g. 2-, 1-2, 3)")
        lo = int(m.group(1)) if m.group(1) else 1
        hi = (int(m.group(3)) if m.group(3) else None) if m.group(2) else lo
        ranges.append((lo, hi))
    return lambda i: any(lo <= i and (hi is None or i <= hi) for lo, hi in ranges)


def map_fields(table_path: str, inputs: Sequence[str], chosen: Callable[[int], bool],
               to_int: bool, map_oov: str | None, out: TextIO,
               warn: Callable[[str], None]) -> int:
    """sym2int.pl / int2sym.pl: map the ``chosen`` fields of each line of ``inputs`` (``-`` is
    stdin) through the table to ``out``; returns how many OOVs were replaced by ``map_oov``.

    Without ``map_oov`` an unknown token is a LangError naming the file, line and field; with
    it, the first 20 replacements and the total are reported through ``warn``, as Kaldi's do.
    """
    table = read_symbol_table(table_path)
    if to_int:
        lookup = {s: str(i) for s, i in table}
    else:
        lookup = {str(i): s for s, i in table}
    oov_value = None
    if map_oov is not None:
        oov_value = lookup.get(map_oov, map_oov if map_oov.isdigit() and to_int else None)
        if oov_value is None:
            raise LangError(f"--map-oov {map_oov} is not in {table_path}")
    replaced = 0

    def convert(fh: TextIO, where: str) -> None:
        nonlocal replaced
        for n, line in enumerate(fh, 1):
            toks = line.split()
            for k, tok in enumerate(toks):
                if not chosen(k + 1):
                    continue
                val = lookup.get(tok)
                if val is None:
                    if oov_value is None:
                        what = "symbol" if to_int else "integer"
                        raise LangError(f"{where}:{n}: undefined {what} '{tok}' (field {k + 1}) "
                                        f"in {table_path}")
                    if replaced < 20:
                        warn(f"replacing {tok} with {map_oov}")
                    replaced += 1
                    val = oov_value
                toks[k] = val
            out.write(" ".join(toks) + "\n")

    for name in inputs or ["-"]:
        if name == "-":
            convert(sys.stdin, "stdin")
        else:
            with open(name, **ENCODING) as fh:
                convert(fh, name)
    if replaced:
        warn(f"** Replaced {replaced} instances of OOVs with {map_oov}")
    return replaced
