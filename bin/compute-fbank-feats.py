#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compute-fbank-feats.py: Kaldi's compute-fbank-feats, computed through kaldi-native-fbank."""
import os
import sys

try:
    from nnetmix.cli import OptionParser, run_tool
except ImportError:  # run without the venv's nnetmix installed: use this checkout's
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from nnetmix.cli import OptionParser, run_tool

from nnetmix.feat.extract import ExtractOptions
from nnetmix.feat.options import FrameOptions, MelOptions, FbankOptions

USAGE = """
Create Mel-filter bank (FBANK) feature files.  Samples are used on Kaldi's scale (16-bit PCM
as integers); an utterance that cannot be read or is shorter than one frame is warned about and skipped.
Note: --dither defaults to 1.0 as in Kaldi; conf/fbank.conf sets --dither=0 (reproducible).
Usage:  compute-fbank-feats.py [options...] <wav-rspecifier> <feats-wspecifier>
 e.g.: compute-fbank-feats.py --config=conf/fbank.conf scp:data/train/wav.scp ark,scp:fbank/raw_fbank.ark,fbank/raw_fbank.scp
"""


def build_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="compute-fbank-feats.py")
    for group in (FrameOptions, MelOptions, FbankOptions, ExtractOptions):
        p.register_group(group)
    return p


def main(argv=None) -> int:
    parser = build_parser()

    def body(opts, args):
        from nnetmix.feat.extract import compute_feats_table
        from nnetmix.feat.options import config_from_options

        config = config_from_options("fbank", parser, opts)
        result = compute_feats_table(config, args[0], args[1], parser.group(ExtractOptions, opts))
        return 0 if result.ok else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
