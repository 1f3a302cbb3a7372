#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""acc-tree-stats.py: Kaldi's acc-tree-stats (src/bin/acc-tree-stats.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool
from nnetmix.errors import FormatError
from nnetmix.hmm.tree_stats import AccTreeStatsOptions

USAGE = """
Accumulate statistics for phonetic-context tree building.
Usage:  acc-tree-stats.py [options] <model-in> <features-rspecifier> <alignments-rspecifier> <tree-accs-out>
e.g.:
 acc-tree-stats.py 1.mdl scp:train.scp ark:1.ali 1.tacc
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="acc-tree-stats.py")
    parser.register("binary", True, "Write output in binary mode")
    parser.register_group(AccTreeStatsOptions)

    def body(opts, args):
        import logging

        from nnetmix.hmm.tree_stats import acc_tree_stats_tables, write_tree_stats

        log = logging.getLogger("acc-tree-stats")
        stats, n = acc_tree_stats_tables(args[0], args[1], args[2],
                                         parser.group(AccTreeStatsOptions, opts))
        if not n["done"]:
            raise FormatError(f"no utterance of {args[1]} had an alignment in {args[2]}, so "
                              f"{args[3]} is not written")
        write_tree_stats(args[3], stats, opts.binary)
        log.info("Accumulated stats for %d files, %d failed due to no alignment, %d failed for "
                 "other reasons.", n["done"], n["no_ali"], n["other"])
        log.info("Number of separate stats (context-dependent states) is %d", len(stats))
        return 0 if n["done"] else 1

    return run_tool(parser, (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
