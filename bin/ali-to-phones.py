#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""ali-to-phones.py: Kaldi's ali-to-phones (src/bin/ali-to-phones.cc); no --write-lengths."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Convert model-level alignments to phone-sequences (in integer, not text, form)
Usage:  ali-to-phones.py  [options] <model> <alignments-rspecifier> <phone-transcript-wspecifier|ctm-wxfilename>
e.g.: 
 ali-to-phones.py 1.mdl ark:1.ali ark:-
or:
 ali-to-phones.py --ctm-output 1.mdl ark:1.ali 1.ctm
See also: show-alignments lattice-align-phones, compare-int-vector"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="ali-to-phones.py")
    p.register("ctm-output", False,
               "If true, output the alignments in ctm format (the confidences will be set to 1)")
    p.register("frame-shift", 0.01, "frame shift used to control the times of the ctm output")
    p.register("per-frame", False,
               "If true, write out the frame-level phone alignment (else phone sequence)")
    return p


def body(opts, args) -> int:
    import logging
    from nnetmix.kaldi.transition_model import (ali_to_phones, ali_to_phones_ctm,
                                                read_transition_model)
    tm = read_transition_model(args[0])
    if opts.ctm_output:
        done = ali_to_phones_ctm(tm, args[1], args[2], opts.frame_shift)
    else:
        done = ali_to_phones(tm, args[1], args[2], per_frame=opts.per_frame)
    logging.getLogger("ali-to-phones").info("Done %d utterances.", done)
    return 0


def main(argv=None) -> int:
    return run_tool(make_parser(), (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
