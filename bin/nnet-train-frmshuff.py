#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-train-frmshuff.py: Kaldi's nnet-train-frmshuff (src/nnetbin/nnet-train-frmshuff.cc).

One epoch of frame-shuffled minibatch SGD (or, with --cross-validate=true, one evaluation pass)
through nnetmix.train.train_epoch; the summary, AvgLoss and FRAME_ACCURACY lines are Kaldi's.
Targets are pdf posteriors (ali-to-post output, one (pdf, 1.0) pair per frame) or, with
--targets-kind=ali, pdf alignments (ali-to-pdf output). Only --objective-function=xent.
With --optimizer=ngsgd the affine layers are updated by online natural-gradient SGD, whose
state is read from <model-in>.ngsgd.npz when it exists and written to <model-out>.ngsgd.npz."""
import os
import sys

try:
    from nnetmix.cli import OptionParser, run_tool
except ImportError:  # run without the venv's nnetmix installed: use this checkout's
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from nnetmix.cli import OptionParser, run_tool

USAGE = """Perform one iteration (epoch) of Neural Network training with
mini-batch Stochastic Gradient Descent. The training targets
are usually pdf-posteriors, prepared by ali-to-post.
Usage:  nnet-train-frmshuff.py [options] <feature-rspecifier> <targets-rspecifier> <model-in> [<model-out>]
e.g.: nnet-train-frmshuff.py scp:feats.scp ark:posterior.ark nnet.init nnet.iter1"""


def make_parser() -> OptionParser:
    from nnetmix.train.tool_options import register_frmshuff_options

    p = OptionParser(USAGE, prog="nnet-train-frmshuff.py")
    register_frmshuff_options(p)
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def body(opts, args) -> int:
        import logging

        from nnetmix.errors import UsageError
        from nnetmix.kernels import get_backend
        from nnetmix.nnet import NnetTrainOptions, read_nnet
        from nnetmix.train import TrainOptions, read_utterances, train_epoch
        from nnetmix.train.ngsgd import setup_optimizer, state_path

        def _beside(model: str) -> str:  # NG-SGD state of a model file; none for pipes/stdout
            return "" if model == "-" or "|" in model else state_path(model)
        from nnetmix.train.options import OptimizerOptions

        log = logging.getLogger("nnet-train-frmshuff")
        if len(args) != 3 + (0 if opts.cross_validate else 1):
            sys.stderr.write(parser.format_usage())
            raise UsageError(f"wrong number of arguments: {len(args)} (expected "
                             f"{3 + (0 if opts.cross_validate else 1)} with "
                             f"--cross-validate={'true' if opts.cross_validate else 'false'})")
        train_opts = parser.group(TrainOptions, opts)
        update_opts = parser.group(NnetTrainOptions, opts)
        optim_opts = parser.group(OptimizerOptions, opts)
        optim_opts.check()
        transform = None
        if opts.feature_transform:
            transform = read_nnet(opts.feature_transform).to_backend(get_backend("cpu"))
        nnet = read_nnet(args[2]).to_backend(get_backend(opts.backend))
        ng = None
        if not opts.cross_validate:
            ng = setup_optimizer(nnet, optim_opts, opts.ngsgd_state_in or _beside(args[2]),
                                 seed=train_opts.randomizer_seed, log=log)
        utts = read_utterances(args[0], args[1], opts.targets_kind)
        st = train_epoch(nnet, utts, train_opts, None if opts.cross_validate else update_opts,
                         feature_transform=transform, log=log)
        if not opts.cross_validate:
            nnet.write(args[3], binary=opts.binary)
            if ng is not None:
                out = opts.ngsgd_state_out or _beside(args[3])
                if out:
                    ng.save(out)
                log.info("NG-SGD state written to %s (%d layer updates limited by "
                         "--max-change-per-sample)", out or "nowhere", ng.num_limited)
        log.info("%s", st.summary_line())
        log.info("%s", st.report())
        log.info("%s", st.time_split())
        return 0

    return run_tool(parser, (3, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
