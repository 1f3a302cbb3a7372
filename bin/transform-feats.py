#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""transform-feats.py: Kaldi's transform-feats (src/featbin/transform-feats.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Apply transform (e.g. LDA; HLDA; fMLLR/CMLLR; MLLT/STC)
Linear transform if transform-num-cols == feature-dim, affine if
transform-num-cols == feature-dim+1 (->append 1.0 to features)
Per-utterance by default, or per-speaker if utt2spk option provided
Global if transform-rxfilename provided.
Usage: transform-feats.py [options] (transform-rspecifier|transform-rxfilename) feats-rspecifier feats-wspecifier
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="transform-feats.py")
    parser.register("utt2spk", "", "rspecifier for utterance to speaker map")

    def body(opts, args):
        from nnetmix.feat.tables import transform_feats_table

        return 0 if transform_feats_table(args[0], args[1], args[2], opts.utt2spk).ok else 1

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
