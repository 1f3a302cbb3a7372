#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""check-g-properties.py: utils/format_lm.sh's checks on G.fst (Kaldi's fstisstochastic and utils/lang/check_g_properties.pl)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import ScriptUsage, script_main
from nnetmix.lang.grammar import check_g
from nnetmix.lang.symbols import read_symbol_table

USAGE = "Usage: {prog} <G.fst> <lexicon> <words.txt>"


def check(prog: str, argv) -> int:
    """Fails when G has a cycle of empty words (#0, or words with no phones in the lexicon)."""
    if len(argv) != 3:
        raise ScriptUsage("")
    g, lexicon, words = argv
    lo, hi = check_g(g, lexicon, read_symbol_table(words))
    # fstisstochastic's two numbers (largest and smallest -log of a state's total probability):
    # the first should be close to zero, the second is negative for a backoff LM (the backoff
    # arcs make the states' sums exceed one).
    print(f"{prog}: {g}: fstisstochastic: {hi:g} {lo:g}")
    return 0


def main(argv=None) -> int:
    return script_main(check, USAGE, "check-g-properties.py", argv, log=True)


if __name__ == "__main__":
    sys.exit(main())
