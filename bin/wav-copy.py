#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""wav-copy.py: Kaldi's wav-copy (src/featbin/wav-copy.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Copy archives of wave files

Usage:  wav-copy.py [options...] <wav-rspecifier> <wav-wspecifier>
e.g. wav-copy.py scp:wav.scp ark:-
See also: wav-to-duration.py extract-segments.py"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="wav-copy.py")

    def body(opts, args) -> int:
        from nnetmix.feat.wavetable import copy_wave_table

        copy_wave_table(args[0], args[1])
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
