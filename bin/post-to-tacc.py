#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""post-to-tacc.py: Kaldi's post-to-tacc (src/bin/post-to-tacc.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """From posteriors, compute transition-accumulators
The output is a vector of counts/soft-counts, indexed by transition-id)
Note: the model is only read in order to get the size of the vector

Usage: post-to-tacc.py [options] <model> <post-rspecifier> <accs>
 e.g.: post-to-tacc.py --binary=false 1.mdl "ark:ali-to-post.py ark:1.ali ark:-|" 1.tacc
(--per-pdf=true counts every transition-id; Kaldi's loop stops one short of the last one.)"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="post-to-tacc.py")
    p.register("binary", True, "Write output in binary mode.")
    p.register("per-pdf", False, "if ture, accumulate counts per pdf-id rather than "
               "transition-id. (default: false)")
    return p


def body(opts, args) -> int:
    from nnetmix.hmm.post_tables import post_to_tacc
    post_to_tacc(args[0], args[1], args[2], opts.binary, opts.per_pdf)
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
