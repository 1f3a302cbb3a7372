#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""matrix-dim.py: Kaldi's matrix-dim (src/bin/matrix-dim.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Print dimension info on an input matrix (rows then cols, separated by tab), to
standard output.  Output for single filename: rows[tab]cols.  Output per line for
archive of files: key[tab]rows[tab]cols
Usage: matrix-dim.py [options] <matrix-in>|<in-rspecifier>
e.g.: matrix-dim.py final.mat | cut -f 2
See also: feat-to-len.py, feat-to-dim.py"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="matrix-dim.py")


def body(opts, args) -> int:
    from nnetmix.kaldi.sums import matrix_dim
    n = matrix_dim(args[0], sys.stdout)
    sys.stdout.flush()
    return 0 if n else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (1, 1), body, argv)


if __name__ == "__main__":
    sys.exit(main())
