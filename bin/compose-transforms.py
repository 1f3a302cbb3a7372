#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compose-transforms.py: Kaldi's compose-transforms (src/featbin/compose-transforms.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Compose (affine or linear) feature transforms
Usage: compose-transforms.py [options] (transform-A-rspecifier|transform-A-rxfilename) (transform-B-rspecifier|transform-B-rxfilename) (transform-out-wspecifier|transform-out-wxfilename)
 Note: it does matrix multiplication (A B) so B is the transform that gets applied
  to the features first.  If b-is-affine = true, then assume last column of b corresponds to offset
 e.g.: compose-transforms.py 1.mat 2.mat 3.mat
   compose-transforms.py 1.mat ark:2.trans ark:3.trans
   compose-transforms.py ark:1.trans ark:2.trans ark:3.trans
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="compose-transforms.py")
    parser.register("utt2spk", "", "rspecifier for utterance to speaker map (if mixing "
                    "utterance and speaker ids)")
    parser.register("b-is-affine", False, "If true, treat last column of transform b as an "
                    "offset term (only relevant if a is affine)")
    parser.register("binary", True, "Write in binary mode (only relevant if output is a "
                    "wxfilename)")

    def body(opts, args):
        from nnetmix.feat.tables import compose_transforms_tables

        compose_transforms_tables(args[0], args[1], args[2], opts.b_is_affine, opts.utt2spk,
                                  opts.binary)
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
