#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""extract-segments.py: Kaldi's extract-segments (cut utterances out of recordings)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Extract segments from a large audio file in WAV format.
Usage:  extract-segments.py [options] <wav-rspecifier> <segments-file> <wav-wspecifier>
 e.g.: extract-segments.py scp:wav.scp segments ark:- | <some-other-program>
 segments-file format: each line is either
<segment-id> <recording-id> <start-time> <end-time>
e.g. call-861225-A-0050-0065 call-861225-A 5.0 6.5
or (less frequently, and not supported in scripts):
<segment-id> <wav-file-name> <start-time> <end-time> <channel>
where <channel> will normally be 0 (left) or 1 (right)
e.g. call-861225-A-0050-0065 call-861225 5.0 6.5 1
And <end-time> of -1 means the segment runs till the end of the WAV file
wav.scp entries may be files (WAV, FLAC, mono SPHERE), 'sph2pipe ... f.sph |' (served without
the sph2pipe binary), other 'command |' pipes, or wave archives (ark:...).
See also: compute-mfcc-feats.py, wav-to-duration.py
"""


def main(argv=None) -> int:
    from nnetmix.feat.segments import SegmentOptions

    parser = OptionParser(USAGE, prog="extract-segments.py")
    parser.register_group(SegmentOptions)

    def body(opts, args):
        from nnetmix.feat.segments import extract_segments

        extract_segments(args[0], args[1], args[2], parser.group(SegmentOptions, opts))
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
