"""The command line shared by gmm-est-fmllr.py and gmm-est-fmllr-gpost.py.

Kaldi's two binaries differ only in the posteriors they read (over transition-ids, or
Gaussian-level), so one function builds the parser and runs the estimation for both; each bin/
file keeps its own usage text.
"""
from __future__ import annotations

from typing import Sequence

from nnetmix.cli.binary import OptionParser, run_tool
from nnetmix.hmm.fmllr import FmllrOptions, est_fmllr

__all__ = ["est_fmllr_main"]


def est_fmllr_main(prog: str, usage: str, gpost: bool, argv: Sequence[str] | None = None) -> int:
    """Run ``prog``: ``[options] <model-in> <feature-rspecifier> <post-rspecifier>
    <transform-wspecifier>``; exit status 1 when no utterance was done, as Kaldi's."""
    parser = OptionParser(usage, prog=prog)
    parser.register("spk2utt", "", "rspecifier for speaker to utterance-list map")
    parser.register_group(FmllrOptions)

    def body(opts, args):
        done = est_fmllr(args[0], args[1], args[2], args[3], parser.group(FmllrOptions, opts),
                         opts.spk2utt, gpost)
        return 0 if done else 1

    return run_tool(parser, (4, 4), body, argv)
