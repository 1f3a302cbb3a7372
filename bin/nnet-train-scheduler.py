#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-train-scheduler.py: Kaldi's steps/nnet/train_scheduler.sh as one tool.

Newbob (or exponential) learning-rate schedule over epochs with cross-validation after each,
restart-safe; each epoch in process (one worker, the work of nnet-train-frmshuff.py) or as its
own job (--train-cmd: MPI training with nnet-train-mpi.py). The work is
nnetmix.driver.run_schedule."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool
from nnetmix.cli.training import epoch_spec
from nnetmix.driver.scheduler import ScheduleOptions, TrainCommandOptions, run_schedule
from nnetmix.nnet import NnetTrainOptions
from nnetmix.train import TrainOptions

USAGE = """Train a neural network with frame-level cross-entropy under a learning-rate schedule
(Newbob as Kaldi's steps/nnet/train_scheduler.sh, or exponential decay), cross-validating after
every epoch. Resumes after the last finished epoch; does nothing when <exp-dir>/final.nnet exists.
Usage: nnet-train-scheduler.py [options] <mlp-init> <feats-tr> <feats-cv> <labels-tr> <labels-cv> <exp-dir>
e.g.: nnet-train-scheduler.py --feature-transform=exp/dnn/final.feature_transform exp/dnn/nnet.init scp:exp/dnn/train.scp scp:exp/dnn/cv.scp ark:exp/dnn/pdf_post.tr.ark ark:exp/dnn/pdf_post.cv.ark exp/dnn"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="nnet-train-scheduler.py")
    p.register_group(NnetTrainOptions)
    p.register_group(TrainOptions)
    p.register_group(ScheduleOptions)
    p.register_group(TrainCommandOptions)
    p.register("feature-transform", "", "Feature transform in nnet1 format (applied per utterance)")
    p.register("backend", "cpu", "Compute backend: cpu, cuda or auto")
    p.register("targets-kind", "post", "Targets: post (pdf posteriors, ali-to-post) or ali "
               "(pdf alignments, int vectors)")
    p.register("binary", True, "Write the models in binary mode")
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def body(opts, args) -> int:
        run_schedule(*args, epoch_spec(parser, opts), parser.group(ScheduleOptions, opts),
                     verbose=max(1, opts.verbose),
                     command=parser.group(TrainCommandOptions, opts))
        return 0

    return run_tool(parser, (6, 6), body, argv)


if __name__ == "__main__":
    sys.exit(main())
