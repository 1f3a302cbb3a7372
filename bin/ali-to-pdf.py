#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""ali-to-pdf.py: Kaldi's ali-to-pdf (src/bin/ali-to-pdf.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Converts alignments (containing transition-ids) to pdf-ids, zero-based.
Usage:  ali-to-pdf.py  [options] <model> <alignments-rspecifier> <pdfs-wspecifier>
e.g.: 
 ali-to-pdf.py 1.mdl ark:1.ali ark,t:-"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="ali-to-pdf.py")


def body(opts, args) -> int:
    import logging
    from nnetmix.kaldi.transition_model import ali_to_pdf, read_transition_model
    done = ali_to_pdf(read_transition_model(args[0]), args[1], args[2])
    logging.getLogger("ali-to-pdf").info("Converted %d alignments to pdf sequences.", done)
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
