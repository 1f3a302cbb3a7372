#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""feat-to-dim.py: Kaldi's feat-to-dim (the feature dimension, or a key->dim table)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Reads an archive of features.  If second argument is wxfilename, writes
the feature dimension of the first feature file; if second argument is
wspecifier, writes an archive of the feature dimension, indexed by utterance
id.
Usage: feat-to-dim.py [options] <feat-rspecifier> (<dim-wspecifier>|<dim-wxfilename>)
 e.g.: feat-to-dim.py scp:feats.scp -
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="feat-to-dim.py")

    def body(opts, args):
        from nnetmix.feat.tables import feat_to_dim

        feat_to_dim(args[0], args[1])
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
