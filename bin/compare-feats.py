#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compare-feats.py: Kaldi's compare-feats (src/featbin/compare-feats.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Computes relative difference between two sets of features
per dimension and an average difference
Can be used to figure out how different two sets of features are.
Inputs must have same dimension.  Prints to stdout a similarity
metric vector that is 1.0 per dimension if the features identical,
and <1.0 otherwise, and an average overall similarity value.

Usage: compare-feats.py [options] <in-rspecifier1> <in-rspecifier2>
  e.g. compare-feats.py ark:1.ark ark:2.ark
Exit status 0 when the features are similar (overall similarity >= --threshold), else 1."""


def main(argv=None) -> int:
    from nnetmix.feat.compare import CompareOptions

    parser = OptionParser(USAGE, prog="compare-feats.py")
    parser.register_group(CompareOptions)

    def body(opts, args) -> int:
        from nnetmix.feat.compare import compare_feats

        result = compare_feats(args[0], args[1], parser.group(CompareOptions, opts))
        return 0 if result.similar else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
