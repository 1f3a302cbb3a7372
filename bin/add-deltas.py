#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""add-deltas.py: Kaldi's add-deltas (delta and delta-delta features, edges replicated)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Add deltas (typically to raw mfcc or plp features
Usage: add-deltas.py [options] in-rspecifier out-wspecifier
 e.g.: add-deltas.py --delta-order=2 scp:data/train/feats.scp ark:-
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="add-deltas.py")
    parser.register("delta-order", 2, "Order of delta computation")
    parser.register("delta-window", 2, "Parameter controlling window for delta computation "
                    "(actual window size for each delta order is 1 + 2*delta-window-size)")
    parser.register("truncate", 0, "If nonzero, first truncate features to this dimension.")

    def body(opts, args):
        from nnetmix.feat.tables import add_deltas_table

        add_deltas_table(args[0], args[1], opts.delta_order, opts.delta_window, opts.truncate)
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
