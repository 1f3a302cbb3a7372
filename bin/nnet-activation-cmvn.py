#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-activation-cmvn.py: the mean activation of a network over features as cmvn-to-nnet
writes it, for the next RBM of steps/nnet/pretrain_dbn.sh (Kaldi pipes nnet-forward,
compute-cmvn-stats and cmvn-to-nnet for it): nnetmix.rbm.activation_cmvn."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Mean activation of a network's outputs over a feature table, written as
cmvn-to-nnet writes it (<AddShift> of minus the mean, <Rescale>), for an <Rbm> prototype's
<VisibleBiasCmvnFilename>.
Usage: nnet-activation-cmvn.py [options] <nnet-in> <feats-rspecifier> <nnet-out>
 e.g.: nnet-activation-cmvn.py "nnet-concat.py ft 1.dbn - |" pipeline:exp/dbn/feats_tr.json 2.cmvn"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="nnet-activation-cmvn.py")
    parser.register("max-utts", 10000, "Use at most this many utterances (the first of the "
                    "utterance list)")
    parser.register("binary", False, "Write output in binary mode")
    parser.register("backend", "cpu", "Compute backend for the forward pass: cpu, cuda or auto")

    def body(opts, args) -> int:
        import logging

        from nnetmix.feat import first_keys, open_features
        from nnetmix.kernels import get_backend
        from nnetmix.nnet import read_nnet
        from nnetmix.rbm.dbn import activation_cmvn

        net = read_nnet(args[0]).to_backend(get_backend(opts.backend))
        with open_features(args[1], first_keys(args[1], opts.max_utts)) as feats:
            cmvn = activation_cmvn((m for _, m in feats), net, opts.max_utts, args[1])
        cmvn.write(args[2], binary=opts.binary)
        logging.getLogger("nnet-activation-cmvn").info(
            "Written the activation stats of %s (dim %d) to %s", args[0], cmvn.input_dim, args[2])
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
