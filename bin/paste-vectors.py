#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""paste-vectors.py: Kaldi's paste-vectors (src/featbin/paste-vectors.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Concatenate vector files.
Append to vectors the first archive the vectors under the same key
from the second and following archives, and output the result.
NOTE: Keys absent from the first archive will not be present in output,
even if they occur in the additional input archives.
Usage: paste-vectors.py <in-rspecifier1> <in-rspecifier2> [<in-rspecifier3> ...] <out-wspecifier>
See also: paste-feats.py, copy-feats.py, copy-matrix.py, append-vector-to-feats, concat-feats.py"""


def make_parser() -> OptionParser:
    return OptionParser(USAGE, prog="paste-vectors.py")


def body(opts, args) -> int:
    from nnetmix.kaldi.sums import paste_vectors
    return 0 if paste_vectors(args[:-1], args[-1]).ok else 1


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 1 << 20), body, argv)


if __name__ == "__main__":
    sys.exit(main())
