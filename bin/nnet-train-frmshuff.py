#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-train-frmshuff.py: Kaldi's nnet-train-frmshuff (src/nnetbin/nnet-train-frmshuff.cc).

One epoch of frame-shuffled minibatch SGD (or, with --cross-validate=true, one evaluation pass)
through nnetmix.driver.dnn_epoch on one worker; the summary, AvgLoss and FRAME_ACCURACY lines are
Kaldi's. Targets are pdf posteriors (ali-to-post output, one (pdf, 1.0) pair per frame) or, with
--targets-kind=ali, pdf alignments (ali-to-pdf output). Only --objective-function=xent.
With --optimizer=ngsgd the affine layers are updated by online natural-gradient SGD, whose
state is read from <model-in>.ngsgd.npz when it exists and written to <model-out>.ngsgd.npz."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import logging
import sys

from nnetmix.cli import OptionParser, run_tool
from nnetmix.cli.training import (check_epoch_args, frmshuff_epoch, log_epoch,
                                  register_frmshuff_options)
from nnetmix.driver import dnn_epoch

USAGE = """Perform one iteration (epoch) of Neural Network training with
mini-batch Stochastic Gradient Descent. The training targets
are usually pdf-posteriors, prepared by ali-to-post.
Usage:  nnet-train-frmshuff.py [options] <feature-rspecifier> <targets-rspecifier> <model-in> [<model-out>]
e.g.: nnet-train-frmshuff.py scp:feats.scp ark:posterior.ark nnet.init nnet.iter1"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="nnet-train-frmshuff.py")
    register_frmshuff_options(p)
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def body(opts, args) -> int:
        check_epoch_args(parser, opts, args)
        log = logging.getLogger("nnet-train-frmshuff")
        res = dnn_epoch(None, *frmshuff_epoch(parser, opts, args), log=log)
        log_epoch(log, res.stats)
        return 0

    return run_tool(parser, (3, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
