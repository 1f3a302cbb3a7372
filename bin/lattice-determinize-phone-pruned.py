#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""lattice-determinize-phone-pruned.py: Kaldi's lattice-determinize-phone-pruned
(src/latbin/lattice-determinize-phone-pruned.cc) on our lattice archives: a determinization
pass on phones and words, then one on words (nnetmix/decode/phonedet.py)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Determinize lattices, keeping only the best path (sequence of acoustic states)
for each input-symbol sequence. This version does phone inertion when doing a
first pass determinization, it then removes the inserted symbols and does a
second pass determinization. It also does pruning as part of the determinization
algorithm, which is more efficient and prevents blowup.

Usage: lattice-determinize-phone-pruned.py [options] <model> \\
                  <lattice-rspecifier> <lattice-wspecifier>
 e.g.: lattice-determinize-phone-pruned.py --acoustic-scale=0.1 \\
                            final.mdl ark:in.lats ark:det.lats
"""


def main(argv=None) -> int:
    from nnetmix.decode.latrescore import DeterminizeToolOptions
    from nnetmix.decode.phonedet import PhoneDeterminizeOptions
    parser = OptionParser(USAGE, prog="lattice-determinize-phone-pruned.py")
    parser.register_group(DeterminizeToolOptions)
    parser.register_group(PhoneDeterminizeOptions)

    def body(opts, args):
        from nnetmix.decode.latrescore import determinize_lattices
        from nnetmix.decode.phonedet import phone_start_labels
        from nnetmix.kaldi.transition_model import read_transition_model
        tm = read_transition_model(args[0])
        phones = (phone_start_labels(tm), parser.group(PhoneDeterminizeOptions, opts))
        done, _ = determinize_lattices(args[1], args[2], opts.acoustic_scale, opts.beam,
                                       max_mem=opts.max_mem, impl=opts.determinize_impl,
                                       phones=phones)
        return 0 if done else 1

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
