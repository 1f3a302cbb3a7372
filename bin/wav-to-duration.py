#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""wav-to-duration.py: Kaldi's wav-to-duration (seconds per recording)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Read wav files and output an archive consisting of a single float:
the duration of each one in seconds.
Usage:  wav-to-duration.py [options...] <wav-rspecifier> <duration-wspecifier>
 e.g.: wav-to-duration.py scp:wav.scp ark,t:-
See also: extract-segments.py, feat-to-len.py
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="wav-to-duration.py")
    parser.register("read-entire-file", False, "If true, read entire file (nnetmix always "
                    "decodes the whole recording, so this changes nothing; kept for Kaldi's "
                    "scripts)")

    def body(opts, args):
        from nnetmix.feat.duration import wav_to_duration

        return 0 if wav_to_duration(args[0], args[1]) else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
