#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compile-questions.py: Kaldi's compile-questions (src/bin/compile-questions.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Compile questions
Usage:  compile-questions.py [options] <topo> <questions-text-file> <questions-out>
e.g.:
 compile-questions.py topo questions.txt questions.qst
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="compile-questions.py")
    parser.register("binary", True, "Write output in binary mode")
    parser.register("context-width", 3, "Context window size [must match acc-tree-stats].")
    parser.register("central-position", 1, "Central position in phone context window [must "
                    "match acc-tree-stats]")
    parser.register("num-iters-refine", 0, "Number of iters of refining questions at each node.  "
                    ">0 --> questions not refined")
    parser.register("leftmost-questions-truncate", -1, "If > 0, the questions for the left-most "
                    "context position will be truncated to the specified number.")
    parser.register("context-positions", "", "Comma-separated context positions the tree may "
                    "ask about, e.g. 0,1 for no right context (default: all) [nnetmix's]")

    def body(opts, args):
        import logging

        from nnetmix.errors import UsageError
        from nnetmix.hmm.tree_questions import compile_questions, read_int_lists, write_questions
        from nnetmix.kaldi.hmm_topology import read_topology

        topo = read_topology(args[0])
        positions = None
        if opts.context_positions:
            try:
                positions = [int(p) for p in opts.context_positions.split(",")]
            except ValueError:
                raise UsageError(f"--context-positions={opts.context_positions}: expected "
                                 "comma-separated integers") from None
        q = compile_questions(topo, read_int_lists(args[1]), args[1], opts.context_width,
                              opts.num_iters_refine, opts.leftmost_questions_truncate,
                              positions)
        write_questions(args[2], q, opts.binary)
        logging.getLogger("compile-questions").info("Wrote questions to %s", args[2])
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
