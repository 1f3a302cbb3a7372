#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""show-transitions.py: Kaldi's show-transitions (src/bin/show-transitions.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Print debugging info from transition model, in human-readable form
Usage:  show-transitions.py <phones-symbol-table> <transition/model-file> [<occs-file>]
e.g.: 
 show-transitions.py phones.txt 1.mdl 1.occs
See also: show-alignments.py, hmm-info.py"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="show-transitions.py")


def body(opts, args) -> int:
    from nnetmix.errors import FormatError
    from nnetmix.hmm.show_alignments import transition_lines
    from nnetmix.kaldi import read_object
    from nnetmix.kaldi.transition_model import read_transition_model
    from nnetmix.lang.symbols import read_symbol_table
    phones = read_symbol_table(args[0])
    tm = read_transition_model(args[1])
    occs = read_object(args[2], "vec") if len(args) > 2 else None
    if occs is not None and len(occs) != tm.num_pdfs:
        raise FormatError(f"{args[2]}: {len(occs)} occupation counts, the model {args[1]} has "
                          f"{tm.num_pdfs} pdfs")
    sys.stdout.write("".join(line + "\n" for line in transition_lines(tm, phones, occs)))
    sys.stdout.flush()
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
