#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""rbm-train-cd1-frmshuff.py: Kaldi's rbm-train-cd1-frmshuff (src/nnetbin/rbm-train-cd1-frmshuff.cc).

CD-1 training of a one-<Rbm> network over shuffled frames through nnetmix.rbm.train_rbm; the
log lines (Iteration, Done ..., AvgLoss (Mse), progress) are Kaldi's."""
import os
import sys

try:
    from nnetmix.cli import OptionParser, run_tool
except ImportError:  # run without the venv's nnetmix installed: use this checkout's
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from nnetmix.cli import OptionParser, run_tool

USAGE = """Train RBM by Contrastive Divergence alg. with 1 step of Markov Chain Monte-Carlo.
The tool can perform several iterations (--num-iters) or it can subsample the training
dataset (--drop-data)
Usage:  rbm-train-cd1-frmshuff.py [options] <model-in> <feature-rspecifier> <model-out>
e.g.: rbm-train-cd1-frmshuff.py 1.rbm.init scp:train.scp 1.rbm"""


def make_parser() -> OptionParser:
    from nnetmix.rbm import Cd1Options, RbmRandomizerOptions, RbmTrainOptions

    p = OptionParser(USAGE, prog="rbm-train-cd1-frmshuff.py")
    p.register_group(RbmTrainOptions)
    p.register_group(RbmRandomizerOptions)
    p.register_group(Cd1Options)
    p.register("binary", False, "Write output in binary mode")
    p.register("feature-transform", "", "Feature transform in Nnet format")
    p.register("backend", "cpu", "Compute backend: cpu, cuda or auto (the feature transform "
               "runs on it too)")
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def body(opts, args) -> int:
        import logging

        from nnetmix.kernels import get_backend
        from nnetmix.nnet import read_nnet
        from nnetmix.rbm import (Cd1Options, RbmRandomizerOptions, RbmTrainOptions,
                                 read_features, train_rbm)

        log = logging.getLogger("rbm-train-cd1-frmshuff")
        be = get_backend(opts.backend)
        transform = None
        if opts.feature_transform:
            transform = read_nnet(opts.feature_transform, rbm_to_affine=True).to_backend(be)
        nnet = read_nnet(args[0]).to_backend(be)
        st = train_rbm(nnet, lambda it: read_features(args[1]),
                       parser.group(RbmTrainOptions, opts), parser.group(Cd1Options, opts),
                       parser.group(RbmRandomizerOptions, opts), feature_transform=transform,
                       log=log)
        nnet.write(args[2], binary=opts.binary)
        log.info("%s", st.summary_line())
        log.info("%s", st.report())
        log.info("%s", st.time_split())
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
