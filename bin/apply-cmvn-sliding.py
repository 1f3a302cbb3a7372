#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""apply-cmvn-sliding.py: Kaldi's apply-cmvn-sliding (src/featbin/apply-cmvn-sliding.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Apply sliding-window cepstral mean (and optionally variance)
normalization per utterance.  If center == true, window is centered
on frame being normalized; otherwise it precedes it in time.
Useful for speaker-id; see also apply-cmvn-online

Usage: apply-cmvn-sliding.py [options] <feats-rspecifier> <feats-wspecifier>
  e.g. apply-cmvn-sliding.py --norm-vars=false --center=true --cmn-window=300 scp:feats.scp ark:-
See also apply-cmvn.py (per-speaker or per-utterance statistics)"""


def main(argv=None) -> int:
    from nnetmix.feat.sliding import SlidingCmnOptions

    parser = OptionParser(USAGE, prog="apply-cmvn-sliding.py")
    parser.register_group(SlidingCmnOptions)

    def body(opts, args) -> int:
        from nnetmix.feat.sliding import apply_cmvn_sliding

        counts = apply_cmvn_sliding(args[0], args[1], parser.group(SlidingCmnOptions, opts))
        return 0 if counts.ok else 1

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
