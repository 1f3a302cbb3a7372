#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-boost-silence.py: Kaldi's gmm-boost-silence (src/gmmbin/gmm-boost-silence.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Modify GMM-based model to boost (by a certain factor) all
probabilities associated with the specified phones (could be
all silence phones, or just the ones used for optional silence).
Note: this is done by modifying the GMM weights.  If the silence
model shares a GMM with other models, then it will modify the GMM
weights for all models that may correspond to silence.

Usage:  gmm-boost-silence.py [options] <silence-phones-list> <model-in> <model-out>
e.g.: gmm-boost-silence.py --boost=1.5 1:2:3 1.mdl 1_boostsil.mdl
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-boost-silence.py")
    parser.register("binary", True, "Write output in binary mode")
    parser.register("boost", 1.5, "Factor by which to boost silence probs")

    def body(opts, args):
        import logging

        from nnetmix.errors import UsageError
        from nnetmix.hmm.gmm_tools import boost_silence, read_model, write_model

        log = logging.getLogger("nnetmix.hmm.gmm_tools")
        try:
            phones = sorted(int(p) for p in args[0].split(":") if p != "")
        except ValueError:
            raise UsageError(f"<silence-phones-list> must be like 1:2:3, got '{args[0]}'") \
                from None
        if len(set(phones)) != len(phones):
            raise UsageError(f"silence phones non-unique: {args[0]}")
        model = read_model(args[1])
        if phones:
            boost_silence(model, phones, opts.boost)
        else:
            log.warning("gmm-boost-silence: no silence phones specified, doing nothing.")
        write_model(args[2], model.tm, list(model.am), opts.binary)
        log.info("Wrote model to %s", args[2])
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
