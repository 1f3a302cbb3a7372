#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""extract-feature-segments.py: Kaldi's extract-feature-segments
(src/featbin/extract-feature-segments.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Create feature files by segmenting input files.
Note: this program should no longer be needed now that
'ranges' in scp files are supported (utt feats.ark:12[10:99] takes frames 10 to 99).
Usage:  extract-feature-segments.py [options...] <feats-rspecifier>  <segments-file> <feats-wspecifier>
 (segments-file has lines like: output-utterance-id input-utterance-or-spk-id 1.10 2.36)
  e.g. extract-feature-segments.py scp:feats.scp segments ark,scp:seg.ark,seg.scp
See also extract-segments.py (cuts the audio instead)"""


def main(argv=None) -> int:
    from nnetmix.feat.featsegments import FeatureSegmentOptions

    parser = OptionParser(USAGE, prog="extract-feature-segments.py")
    parser.register_group(FeatureSegmentOptions)

    def body(opts, args) -> int:
        from nnetmix.feat.featsegments import extract_feature_segments

        extract_feature_segments(args[0], args[1], args[2],
                                 parser.group(FeatureSegmentOptions, opts))
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
