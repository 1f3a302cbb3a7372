#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""cluster-phones.py: Kaldi's cluster-phones (src/bin/cluster-phones.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Cluster phones (or sets of phones) into sets for various purposes
Usage:  cluster-phones.py [options] <tree-stats-in> <phone-sets-in> <clustered-phones-out>
e.g.:
 cluster-phones.py 1.tacc phonesets.txt questions.txt
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="cluster-phones.py")
    parser.register("central-position", 1, "Central position in context window [must match "
                    "acc-tree-stats]")
    parser.register("context-width", 3, "Does not have any effect-- included for scripting "
                    "convenience.")
    parser.register("pdf-class-list", "1", "Colon-separated list of HMM positions to consider "
                    "[Default = 1: just central position for 3-state models].")
    parser.register("mode", "questions", "Mode of operation: \"questions\"->sets suitable for "
                    "decision trees; \"k-means\"->k-means algorithm, output k classes (set "
                    "num-classes options)")
    parser.register("num-classes", -1, "For k-means mode, number of classes.")
    parser.register("srand", 0, "nnetmix: seed of the k-means starts (Kaldi uses rand())")

    def body(opts, args):
        import logging

        from nnetmix.errors import UsageError
        from nnetmix.hmm.tree_questions import (automatically_obtain_questions,
                                                kmeans_cluster_phones, read_int_lists,
                                                write_int_lists)
        from nnetmix.hmm.tree_stats import read_tree_stats

        if opts.mode not in ("questions", "k-means"):
            raise UsageError(f"--mode={opts.mode}: expected questions or k-means")
        if opts.mode == "questions" and opts.num_classes != -1:
            raise UsageError("num-classes option is not (currently) compatible with "
                             "\"questions\" mode.")
        try:
            classes = [int(t) for t in opts.pdf_class_list.split(":")]
        except ValueError:
            raise UsageError("Invalid pdf-class-list string [expecting colon-separated list of "
                             f"integers]: {opts.pdf_class_list}") from None
        stats = read_tree_stats(args[0])
        sets = read_int_lists(args[1])
        if not sets:
            raise UsageError(f"No phone sets in phone sets file {args[1]}")
        if opts.mode == "questions":
            out = automatically_obtain_questions(stats, sets, classes, opts.central_position,
                                                 opts.srand, name=args[1])
        else:
            out = kmeans_cluster_phones(stats, sets, classes, opts.central_position,
                                        opts.num_classes, opts.srand, name=args[1])
        write_int_lists(args[2], out)
        logging.getLogger("cluster-phones").info("Wrote questions to %s", args[2])
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
