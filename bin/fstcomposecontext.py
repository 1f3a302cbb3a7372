#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""fstcomposecontext.py: Kaldi's fstcomposecontext (src/fstbin/fstcomposecontext.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Composes on the left with a dynamically created context FST (kaldifst.compose_context),
and arc-sorts the result on input labels (as mkgraph.sh's fstarcsort does after it).

Usage: fstcomposecontext.py [options] <ilabels-output-file> <in.fst> <out.fst>
 e.g.: fstcomposecontext.py --context-size=1 --central-position=0 \\
   --read-disambig-syms=data/lang/phones/disambig.int \\
   --write-disambig-syms=data/lang/tmp/disambig_ilabels_1_0.int \\
   data/lang/tmp/ilabels_1_0 data/lang/tmp/LG.fst data/lang/tmp/CLG_1_0.fst
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="fstcomposecontext.py")
    parser.register("context-size", 3, "Size of phone context window")
    parser.register("central-position", 1, "Designated central position in context window")
    parser.register("read-disambig-syms", "", "List of disambiguation symbols on input of in.fst")
    parser.register("write-disambig-syms", "", "List of disambiguation symbols on input of out.fst")

    def body(opts, args):
        import logging
        from nnetmix.decode.mkgraph import compose_context
        n = compose_context(opts.context_size, opts.central_position, opts.read_disambig_syms,
                            opts.write_disambig_syms, args[0], args[1], args[2])
        logging.getLogger("fstcomposecontext").info("Wrote %s (%d input labels)", args[2], n)
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
