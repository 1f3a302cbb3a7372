#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""rbm-train-cd1-frmshuff.py: Kaldi's rbm-train-cd1-frmshuff (src/nnetbin/rbm-train-cd1-frmshuff.cc).

CD-1 training of a one-<Rbm> network over shuffled frames through nnetmix.driver.rbm_train on
one worker; the log lines (Iteration, Done ..., AvgLoss (Mse), progress) are Kaldi's."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import logging
import sys

from nnetmix.cli import OptionParser, run_tool
from nnetmix.driver import rbm_train
from nnetmix.rbm.options import (Cd1Options, RbmRandomizerOptions, RbmTrainOptions,
                                 register_cd1_options)

USAGE = """Train RBM by Contrastive Divergence alg. with 1 step of Markov Chain Monte-Carlo.
The tool can perform several iterations (--num-iters) or it can subsample the training
dataset (--drop-data)
Usage:  rbm-train-cd1-frmshuff.py [options] <model-in> <feature-rspecifier> <model-out>
e.g.: rbm-train-cd1-frmshuff.py 1.rbm.init scp:train.scp 1.rbm"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="rbm-train-cd1-frmshuff.py")
    register_cd1_options(p)
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def body(opts, args) -> int:
        log = logging.getLogger("rbm-train-cd1-frmshuff")
        st = rbm_train(None, args[0], args[1], args[2], parser.group(RbmTrainOptions, opts),
                       parser.group(Cd1Options, opts), parser.group(RbmRandomizerOptions, opts),
                       feature_transform=opts.feature_transform, backend=opts.backend,
                       binary=opts.binary, log=log).stats
        log.info("%s", st.summary_line())
        log.info("%s", st.report())
        log.info("%s", st.time_split())
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
