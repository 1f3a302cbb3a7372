#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""convert-ali.py: Kaldi's convert-ali (src/bin/convert-ali.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Convert alignments from one decision-tree/model to another
Usage:  convert-ali.py  [options] <old-model> <new-model> <new-tree> <old-alignments-rspecifier> <new-alignments-wspecifier>
e.g.: 
 convert-ali.py old/final.mdl new/0.mdl new/tree ark:old/ali.1 ark:new/ali.1
"""


def main(argv=None) -> int:
    from nnetmix.hmm.convert_ali import ConvertAliOptions
    parser = OptionParser(USAGE, prog="convert-ali.py")
    parser.register_group(ConvertAliOptions)

    def body(opts, args):
        from nnetmix.hmm.convert_ali import convert_ali
        done, _failed = convert_ali(*args, opts=parser.group(ConvertAliOptions, opts))
        return 0 if done else 1

    return run_tool(parser, (5, 5), body, argv)


if __name__ == "__main__":
    sys.exit(main())
