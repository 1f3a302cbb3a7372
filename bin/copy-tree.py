#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""copy-tree.py: Kaldi's copy-tree (src/bin/copy-tree.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copy decision tree (possibly changing binary/text format)
Usage:  copy-tree.py [--binary=false] <tree-in> <tree-out>"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="copy-tree.py")
    p.register("binary", True, "Write output in binary mode")
    return p


def body(opts, args) -> int:
    import logging
    from nnetmix.kaldi.context_dep import read_tree, write_tree
    write_tree(args[1], read_tree(args[0]), opts.binary)
    logging.getLogger("copy-tree").info("Copied tree")
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
