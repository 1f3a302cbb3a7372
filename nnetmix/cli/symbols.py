"""The command line shared by sym2int.py and int2sym.py (utils/sym2int.pl, utils/int2sym.pl).

Kaldi's two Perl scripts take the same Perl-style options (``-f 2-``, ``-f2-``, and for sym2int
``--map-oov <symbol>``); one function parses them for both and calls
:func:`nnetmix.lang.symbols.map_fields`. Each bin/ file keeps its own usage text.
"""
from __future__ import annotations

import sys
from typing import Callable, Sequence

from nnetmix.cli.script import ScriptUsage
from nnetmix.lang.symbols import LangError, map_fields, parse_field_spec

__all__ = ["symbol_map_command"]


def symbol_map_command(to_int: bool) -> Callable[[str, Sequence[str]], int]:
    """The ``func(prog, argv)`` of sym2int (``to_int``) or int2sym, for script_main."""
    def command(prog: str, argv: Sequence[str]) -> int:
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
        try:
            chosen = parse_field_spec(fields) if fields else (lambda i: True)
        except LangError as e:
            raise ScriptUsage(str(e)) from None
        map_fields(args[0], args[1:], chosen, to_int, map_oov, sys.stdout,
                   lambda line: print(f"{prog}: {line}", file=sys.stderr))
        return 0
    return command
