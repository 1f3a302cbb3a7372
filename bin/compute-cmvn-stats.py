#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""compute-cmvn-stats.py: Kaldi's compute-cmvn-stats (2 x (dim+1) float64 stats)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Compute cepstral mean and variance normalization statistics
If wspecifier provided: per-utterance by default, or per-speaker if
spk2utt option provided; if wxfilename: global
Usage: compute-cmvn-stats.py [options] <feats-rspecifier> (<stats-wspecifier>|<stats-wxfilename>)
 e.g.: compute-cmvn-stats.py --spk2utt=ark:data/train/spk2utt scp:data/train/feats.scp ark,scp:cmvn.ark,data/train/cmvn.scp
   or: compute-cmvn-stats.py scp:data/train/feats.scp global_cmvn.mat
See also: apply-cmvn.py
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="compute-cmvn-stats.py")
    parser.register("spk2utt", "", "rspecifier for speaker to utterance-list map")
    parser.register("binary", True, "write in binary mode (applies only to global CMN/CVN)")
    parser.register("fake", False, "Write stats that do no normalization (mean 0, variance 1) "
                    "for each speaker of --spk2utt (an nnetmix addition, for "
                    "steps/compute_cmvn_stats.sh --fake)")

    def body(opts, args):
        from nnetmix.feat.tables import compute_cmvn_stats

        return 0 if compute_cmvn_stats(args[0], args[1], opts.spk2utt, opts.binary,
                                       opts.fake).ok else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
