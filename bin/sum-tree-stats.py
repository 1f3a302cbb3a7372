#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""sum-tree-stats.py: Kaldi's sum-tree-stats (src/bin/sum-tree-stats.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Sum statistics for phonetic-context tree building.
Usage:  sum-tree-stats.py [options] tree-accs-out tree-accs-in1 tree-accs-in2 ...
e.g.:
 sum-tree-stats.py treeacc 1.treeacc 2.treeacc 3.treeacc
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="sum-tree-stats.py")
    parser.register("binary", True, "Write output in binary mode")

    def body(opts, args):
        import logging

        from nnetmix.hmm.tree_stats import sum_tree_stats, write_tree_stats

        stats = sum_tree_stats(args[1:])
        write_tree_stats(args[0], stats, opts.binary)
        logging.getLogger("sum-tree-stats").info("Wrote summed accs ( %d individual stats)",
                                                 len(stats))
        return 0 if len(stats) else 1

    return run_tool(parser, (2, 10 ** 9), body, argv)


if __name__ == "__main__":
    sys.exit(main())
