"""The command line shared by compute-mfcc-feats.py and compute-fbank-feats.py.

The two Kaldi binaries differ only in the feature type and its option group, so one function
builds the parser and runs the extraction for both; each bin/ file keeps its own usage text.
"""
from __future__ import annotations

from typing import Sequence

from nnetmix.cli.binary import OptionParser, run_tool
from nnetmix.feat.extract import ExtractOptions, compute_feats_table
from nnetmix.feat.options import (FbankOptions, FrameOptions, MelOptions, MfccOptions,
                                  config_from_options)

__all__ = ["compute_feats_main"]


def compute_feats_main(kind: str, usage: str, argv: Sequence[str] | None = None) -> int:
    """Run compute-<kind>-feats.py: ``[options] <wav-rspecifier> <feats-wspecifier>``."""
    feat_group = MfccOptions if kind == "mfcc" else FbankOptions
    parser = OptionParser(usage, prog=f"compute-{kind}-feats.py")
    for group in (FrameOptions, MelOptions, feat_group, ExtractOptions):
        parser.register_group(group)

    def body(opts, args):
        config = config_from_options(kind, parser, opts)
        result = compute_feats_table(config, args[0], args[1], parser.group(ExtractOptions, opts))
        return 0 if result.ok else 1

    return run_tool(parser, (2, 2), body, argv)
