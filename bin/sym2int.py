#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""sym2int.py: utils/sym2int.pl: map the symbols of chosen fields to their integer ids."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import script_main
from nnetmix.cli.symbols import symbol_map_command

USAGE = """Usage: {prog} [--map-oov <oov-symbol>] [-f <field-range>] <symtab> [<input> ...]
 e.g.: {prog} -f 2- data/lang/words.txt data/train/text
field ranges: 2-  1-2  3  1,3-  (fields are numbered from 1)"""


def main(argv=None) -> int:
    return script_main(symbol_map_command(True), USAGE, "sym2int.py", argv, log=True)


if __name__ == "__main__":
    sys.exit(main())
