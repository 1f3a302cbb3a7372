#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""copy-feats.py: Kaldi's copy-feats (copy features, possibly changing format)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Copy features [and possibly change format]
Usage: copy-feats.py [options] <feature-rspecifier> <feature-wspecifier>
or:   copy-feats.py [options] <feats-rxfilename> <feats-wxfilename>
 e.g.: copy-feats.py ark:- ark,scp:foo.ark,foo.scp
 or: copy-feats.py ark:foo.ark ark,t:txt.ark
See also: copy-matrix.py, splice-feats.py, add-deltas.py, apply-cmvn.py
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="copy-feats.py")
    parser.register("binary", True, "Binary-mode output (not relevant if writing to archive)")
    parser.register("compress", False, "If true, write output in compressed form (only "
                    "for a wspecifier, i.e. archive/script output, as in Kaldi)")
    parser.register("compression-method", 1, "Only relevant if --compress=true; the method (1 "
                    "through 7) to compress the matrix.  Search for CompressionMethod in "
                    "src/matrix/compressed-matrix.h.")
    parser.register("write-num-frames", "", "Wspecifier to write length in frames of each "
                    "utterance. e.g. 'ark,t:utt2num_frames'.  Only applicable if writing tables, "
                    "not when this program is writing individual files.  See also feat-to-len.")

    def body(opts, args):
        from nnetmix.feat.tables import copy_feats

        return 0 if copy_feats(args[0], args[1], opts.binary, opts.write_num_frames,
                               opts.compress, opts.compression_method).ok else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
