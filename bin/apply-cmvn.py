#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""apply-cmvn.py: Kaldi's apply-cmvn (per-utterance, per-speaker or global stats)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Apply cepstral mean and (optionally) variance normalization
Per-utterance by default, or per-speaker if utt2spk option provided
Usage: apply-cmvn.py [options] (<cmvn-stats-rspecifier>|<cmvn-stats-rxfilename>) <feats-rspecifier> <feats-wspecifier>
 e.g.: apply-cmvn.py --utt2spk=ark:data/train/utt2spk scp:data/train/cmvn.scp scp:data/train/feats.scp ark:-
See also: compute-cmvn-stats.py
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="apply-cmvn.py")
    parser.register("utt2spk", "", "rspecifier for utterance to speaker map")
    parser.register("norm-vars", False, "If true, normalize variances.")
    parser.register("norm-means", True, "You can set this to false to turn off mean "
                    "normalization.  Note, the same can be achieved by using "
                    "--fake-dims=0 in modify-cmvn-stats.")

    def body(opts, args):
        from nnetmix.feat.tables import apply_cmvn_table

        counts = apply_cmvn_table(args[0], args[1], args[2], opts.norm_vars, opts.norm_means,
                                  opts.utt2spk)
        return 0 if counts.ok else 1

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
