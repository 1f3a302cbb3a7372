#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""show-alignments.py: Kaldi's show-alignments (src/bin/show-alignments.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Display alignments in human-readable form
Usage:  show-alignments.py  [options] <phone-syms> <model> <alignments-rspecifier>
e.g.: 
 show-alignments.py phones.txt 1.mdl ark:1.ali
See also: ali-to-phones.py, copy-int-vector.py"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="show-alignments.py")


def body(opts, args) -> int:
    from nnetmix.hmm.show_alignments import show_alignments
    from nnetmix.kaldi.transition_model import read_transition_model
    from nnetmix.lang.symbols import read_symbol_table
    phones = read_symbol_table(args[0])
    tm = read_transition_model(args[1])
    show_alignments(tm, phones, args[2], sys.stdout)
    sys.stdout.flush()
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
