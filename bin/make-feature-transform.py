#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""make-feature-transform.py: the nnet1 input feature transform of steps/nnet/train.sh and
pretrain_dbn.sh in one call (Kaldi pipes nnet-initialize, nnet-forward, compute-cmvn-stats,
cmvn-to-nnet and nnet-concat for it): nnetmix.nnet.feature_transform_from_table."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Build the nnet1 feature transform: splice +/-N frames, then global CMVN of the spliced
frames (<AddShift> + <Rescale>) estimated on the first --max-utts utterances of the features.
Usage: make-feature-transform.py [options] <feats-rspecifier> <nnet-out>
 e.g.: make-feature-transform.py --splice=5 pipeline:exp/dnn/feats_tr.json exp/dnn/tr_splice5_cmvn-g.nnet"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="make-feature-transform.py")
    parser.register("splice", 5, "Splice features +/-N frames")
    parser.register("max-utts", 10000, "Use at most this many utterances for the CMVN (the first "
                    "of the utterance list)")
    parser.register("binary", False, "Write output in binary mode")

    def body(opts, args) -> int:
        import logging

        from nnetmix.nnet import feature_transform_from_table

        ft = feature_transform_from_table(args[0], splice=opts.splice, max_utts=opts.max_utts)
        ft.write(args[1], binary=opts.binary)
        logging.getLogger("make-feature-transform").info(
            "Written the feature transform (%d -> %d) to %s", ft.input_dim, ft.output_dim,
            args[1])
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
