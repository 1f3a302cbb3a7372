"""The command line shared by prob-to-post.py and logprob-to-post.py.

Kaldi's two binaries differ only in whether the matrix entries are probabilities or their logs,
so one function builds the parser and runs the conversion for both; each bin/ file keeps its own
usage text.
"""
from __future__ import annotations

from typing import Sequence

from nnetmix.cli.binary import OptionParser, run_tool
from nnetmix.hmm.post_tables import PostPruneOptions, prob_to_post

__all__ = ["prob_to_post_main"]


def prob_to_post_main(prog: str, usage: str, log: bool, argv: Sequence[str] | None = None) -> int:
    """Run ``prog``: ``[options] <matrix-rspecifier> <posteriors-wspecifier>``; exit status 1
    when no matrix was converted, as Kaldi's."""
    parser = OptionParser(usage, prog=prog)
    parser.register_group(PostPruneOptions)

    def body(opts, args):
        o = parser.group(PostPruneOptions, opts)
        return 0 if prob_to_post(args[0], args[1], o.min_post, o.random_prune, log=log).ok else 1

    return run_tool(parser, (2, 2), body, argv)
