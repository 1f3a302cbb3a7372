"""Command lines of the lang scripts in utils/, which hand their arguments here.

``python3 -m nnetmix.lang.cli <command> <prog> [args...]``; ``prog`` is the script's ``$0`` so
messages start with the name the user typed. Commands: ``prepare_lang`` (utils/prepare_lang.sh
passes its parsed options as ``--name=value``), ``check_g`` (utils/format_lm.sh's checks on G),
``sym2int`` and ``int2sym`` (utils/sym2int.pl, utils/int2sym.pl). A user mistake prints one
``prog: ...`` line on stderr and exits 1, never a traceback.
"""
from __future__ import annotations

import dataclasses
import re
import sys
from typing import Callable, Sequence, TextIO

from nnetmix.data.io import ENCODING
from nnetmix.script_cli import Commands, ScriptUsage, dispatch
from nnetmix.log import setup_logging

__all__ = ["main", "run", "COMMANDS", "parse_field_spec", "map_fields"]



def _bool(name: str, text: str) -> bool:
    if text not in ("true", "false"):
        raise ScriptUsage(f"--{name} takes true or false, got '{text}'")
    return text == "true"


def prepare_lang_cmd(prog: str, argv: Sequence[str]) -> int:
    from nnetmix.lang.prepare import LangOptions, prepare_lang
    from nnetmix.lang.validate import validate_lang_dir

    opts = LangOptions()
    fields = {f.name: f for f in dataclasses.fields(LangOptions)}
    args = list(argv)
    while args and args[0].startswith("--"):
        name, eq, value = args.pop(0)[2:].partition("=")
        key = name.replace("-", "_")
        if key not in fields or not eq:
            raise ScriptUsage(f"invalid option --{name}")
        default = fields[key].default
        try:
            conv = (_bool(name, value) if isinstance(default, bool)
                    else type(default)(value))
        except ValueError:
            raise ScriptUsage(f"bad value for --{name}: '{value}'") from None
        setattr(opts, key, conv)
    if len(args) != 4:
        raise ScriptUsage("")
    src, oov, tmp, lang = args
    s = prepare_lang(src, oov, tmp, lang, opts)
    validate_lang_dir(lang)
    print(f"{prog}: {lang}: {s.num_phones} phones, {s.num_disambig} disambiguation symbols "
          f"(#0 to #{s.num_disambig - 1}), {s.num_words} words, {s.num_prons} pronunciations")
    return 0


def check_g_cmd(prog: str, argv: Sequence[str]) -> int:
    from nnetmix.lang.grammar import check_g
    from nnetmix.lang.symbols import read_symbol_table

    if len(argv) != 3:
        raise ScriptUsage("")
    g, lexicon, words = argv
    lo, hi = check_g(g, lexicon, read_symbol_table(words))
    # fstisstochastic's two numbers (largest and smallest -log of a state's total probability):
    # the first should be close to zero, the second is negative for a backoff LM (the backoff
    # arcs make the states' sums exceed one).
    print(f"{prog}: {g}: fstisstochastic: {hi:g} {lo:g}")
    return 0


_RANGE = re.compile(r"^(\d*)(-(\d*))?$")


def parse_field_spec(spec: str) -> Callable[[int], bool]:
    """sym2int.pl's -f: '2-', '1-2', '3', '-3', comma lists; fields are numbered from 1."""
    ranges = []
    for part in spec.split(","):
        m = _RANGE.match(part)
        if not part or m is None or (not m.group(1) and not m.group(2)):
            raise ScriptUsage(f"bad field specifier '{spec}' (e.g. 2-, 1-2, 3)")
        lo = int(m.group(1)) if m.group(1) else 1
        hi = (int(m.group(3)) if m.group(3) else None) if m.group(2) else lo
        ranges.append((lo, hi))
    return lambda i: any(lo <= i and (hi is None or i <= hi) for lo, hi in ranges)


def map_fields(prog: str, table_path: str, inputs: Sequence[str], fields: str | None,
               to_int: bool, map_oov: str | None, out: TextIO) -> int:
    """The body of sym2int.pl / int2sym.pl: map the chosen fields of each line through the table."""
    from nnetmix.lang.symbols import LangError, read_symbol_table

    table = read_symbol_table(table_path)
    if to_int:
        lookup = {s: str(i) for s, i in table}
    else:
        lookup = {str(i): s for s, i in table}
    chosen = parse_field_spec(fields) if fields else (lambda i: True)
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
                        print(f"{prog}: replacing {tok} with {map_oov}", file=sys.stderr)
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
        print(f"{prog}: ** Replaced {replaced} instances of OOVs with {map_oov}", file=sys.stderr)
    return 0


def _sym_cmd(to_int: bool) -> Callable[[str, Sequence[str]], int]:
    def cmd(prog: str, argv: Sequence[str]) -> int:
        args = list(argv)
        fields = map_oov = None
        while args and args[0].startswith("-") and args[0] != "-":
            opt = args.pop(0)
            if opt == "-f" and args:
                fields = args.pop(0)
            elif opt.startswith("-f") and len(opt) > 2:
                fields = opt[2:]
            elif opt == "--map-oov" and args and to_int:
                map_oov = args.pop(0)
            else:
                raise ScriptUsage(f"invalid option {opt}")
        if not args:
            raise ScriptUsage("")
        return map_fields(prog, args[0], args[1:], fields, to_int, map_oov, sys.stdout)
    return cmd


_PREPARE_USAGE = "Usage: {prog} [options] <dict-src-dir> <oov-dict-entry> <tmp-dir> <lang-dir>"
_CHECK_G_USAGE = "Usage: {prog} <G.fst> <lexicon> <words.txt>"
_SYM2INT_USAGE = """Usage: {prog} [--map-oov <oov-symbol>] [-f <field-range>] <symtab> [<input> ...]
 e.g.: {prog} -f 2- data/lang/words.txt data/train/text
field ranges: 2-  1-2  3  1,3-  (fields are numbered from 1)"""
_INT2SYM_USAGE = """Usage: {prog} [-f <field-range>] <symtab> [<input> ...] > <output>
 e.g.: {prog} -f 2- data/lang/words.txt exp/decode/scoring/10.tra"""

COMMANDS: Commands = {
    "prepare_lang": (prepare_lang_cmd, _PREPARE_USAGE),
    "check_g": (check_g_cmd, _CHECK_G_USAGE),
    "sym2int": (_sym_cmd(True), _SYM2INT_USAGE),
    "int2sym": (_sym_cmd(False), _INT2SYM_USAGE),
}



def run(command: str, prog: str, argv: Sequence[str]) -> int:
    """Run one command (the utils/*.pl entry points call this)."""
    return dispatch(COMMANDS, __name__, [command, prog, *argv], setup_logging)


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m nnetmix.lang.cli <command> <prog> [args...]``."""
    return dispatch(COMMANDS, __name__, argv, setup_logging)


if __name__ == "__main__":
    sys.exit(main())
