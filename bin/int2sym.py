#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""int2sym.py: utils/int2sym.pl: map the integer ids of chosen fields to their symbols."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import script_main
from nnetmix.cli.symbols import symbol_map_command

USAGE = """Usage: {prog} [-f <field-range>] <symtab> [<input> ...] > <output>
 e.g.: {prog} -f 2- data/lang/words.txt exp/decode/scoring/10.tra"""


def main(argv=None) -> int:
    return script_main(symbol_map_command(False), USAGE, "int2sym.py", argv, log=True)


if __name__ == "__main__":
    sys.exit(main())
