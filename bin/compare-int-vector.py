#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compare-int-vector.py: Kaldi's compare-int-vector (src/bin/compare-int-vector.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Compare vectors of integers (e.g. phone alignments)
Prints to stdout fields of the form:
<utterance-id>  <num-frames-in-utterance>  <num-frames-that-differ>

e.g.:
 SWB1_A_31410_32892 420 36

Usage:
compare-int-vector.py [options] <vector1-rspecifier> <vector2-rspecifier>

e.g. compare-int-vector.py scp:foo.scp scp:bar.scp > comparison
E.g. the inputs might come from ali-to-phones.py.
Warnings are printed if the vector lengths differ for a given utterance-id,
and in those cases, the number of frames printed will be the smaller of the two.

See also: ali-to-phones.py, copy-int-vector.py"""


def main(argv=None) -> int:
    from nnetmix.kaldi.compare_ints import CompareIntOptions

    parser = OptionParser(USAGE, prog="compare-int-vector.py")
    parser.register_group(CompareIntOptions)

    def body(opts, args) -> int:
        from nnetmix.kaldi.compare_ints import compare_int_vectors

        compare_int_vectors(args[0], args[1], sys.stdout, parser.group(CompareIntOptions, opts))
        sys.stdout.flush()
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
