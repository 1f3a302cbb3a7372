"""The command line shared by compute-{mfcc,fbank,plp}-feats.py and the pitch tool.

The Kaldi binaries differ only in the feature type and its option groups, so one function
builds the parser and runs the extraction for each; each bin/ file keeps its own usage text.
"""
from __future__ import annotations

from typing import Sequence

from nnetmix.cli.binary import OptionParser, run_tool
from nnetmix.feat.extract import ExtractOptions, compute_feats_table
from nnetmix.feat.options import FEATURE_KINDS, FrameOptions, MelOptions, config_from_options
from nnetmix.feat.pitch import PitchExtractor, PitchOptions, ProcessPitchOptions

__all__ = ["compute_feats_main", "compute_pitch_main"]


def compute_feats_main(kind: str, usage: str, argv: Sequence[str] | None = None) -> int:
    """Run compute-<kind>-feats.py: ``[options] <wav-rspecifier> <feats-wspecifier>``."""
    feat_group = FEATURE_KINDS[kind]
    parser = OptionParser(usage, prog=f"compute-{kind}-feats.py")
    for group in (FrameOptions, MelOptions, feat_group, ExtractOptions):
        parser.register_group(group)

    def body(opts, args):
        config = config_from_options(kind, parser, opts)
        result = compute_feats_table(config, args[0], args[1], parser.group(ExtractOptions, opts))
        return 0 if result.ok else 1

    return run_tool(parser, (2, 2), body, argv)


def compute_pitch_main(usage: str, prog: str, argv: Sequence[str] | None = None) -> int:
    """compute-and-process-kaldi-pitch-feats.py: ``[options] <wav-rspecifier> <wspecifier>``."""
    parser = OptionParser(usage, prog=prog)
    for group in (PitchOptions, ProcessPitchOptions, ExtractOptions):
        parser.register_group(group)

    def body(opts, args):
        extractor = PitchExtractor(parser.group(PitchOptions, opts),
                                   parser.group(ProcessPitchOptions, opts))
        result = compute_feats_table(extractor, args[0], args[1],
                                     parser.group(ExtractOptions, opts))
        return 0 if result.ok else 1

    return run_tool(parser, (2, 2), body, argv)
