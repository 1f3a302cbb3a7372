#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""tree-info.py: Kaldi's tree-info (src/bin/tree-info.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Print information about decision tree (mainly the number of pdfs), to stdout
Usage:  tree-info.py <tree-in>
 e.g.: tree-info.py exp/mono/tree
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="tree-info.py")

    def body(opts, args):
        from nnetmix.decode.mkgraph import tree_info
        for k, v in tree_info(args[0]).items():
            sys.stdout.write(f"{k} {v}\n")
        return 0

    return run_tool(parser, (1, 1), body, argv)


if __name__ == "__main__":
    sys.exit(main())
