#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""build-tree.py: Kaldi's build-tree (src/bin/build-tree.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool
from nnetmix.hmm.tree_build import BuildTreeOptions

USAGE = """
Train decision tree
Usage:  build-tree.py [options] <tree-stats-in> <roots-file> <questions-file> <topo-file> <tree-out>
e.g.:
 build-tree.py treeacc roots.txt 1.qst topo tree
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="build-tree.py")
    parser.register("binary", True, "Write output in binary mode")
    parser.register_group(BuildTreeOptions)

    def body(opts, args):
        from nnetmix.hmm.tree_build import run_build_tree

        run_build_tree(args[0], args[1], args[2], args[3], args[4],
                       parser.group(BuildTreeOptions, opts), opts.binary)
        return 0

    return run_tool(parser, (5, 5), body, argv)


if __name__ == "__main__":
    sys.exit(main())
