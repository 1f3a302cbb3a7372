#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""rbm-train-cd1-mpi.py: rbm-train-cd1-frmshuff over MPI ranks with model mixing.

Run as ``mpiexec -n N rbm-train-cd1-mpi.py ...`` (or ``utils/run.py --num-tasks N log ...``, as
steps/nnet/pretrain_dbn.sh --num-workers N does): each rank trains CD-1 on its own frame-balanced
share of the data and the ranks mix the RBM every --average-every minibatches; the run ends with
the exact average. Takes every option of rbm-train-cd1-frmshuff.py; its log lines (Done ...,
AvgLoss (Mse), progress) are printed once, by rank 0, over the data of all ranks. At N = 1 the
model is rbm-train-cd1-frmshuff.py's, byte for byte. The work is nnetmix.driver.rbm_train, the
same function rbm-train-cd1-frmshuff.py calls."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import logging
import sys

from nnetmix.cli import OptionParser
from nnetmix.cli.training import run_mpi_tool
from nnetmix.driver import RbmMpiOptions, rbm_train
from nnetmix.rbm.options import (Cd1Options, RbmRandomizerOptions, RbmTrainOptions,
                                 register_cd1_options)

USAGE = """Train RBM by Contrastive Divergence alg. with 1 step of Markov Chain Monte-Carlo on N MPI
ranks, mixing the ranks' RBMs every --average-every minibatches (allreduce, butterfly or ring).
The learning rate is not scaled by the number of ranks by default: averaging N CD-1 updates
behaves like one update on an N times larger minibatch (--scale-lr-by-workers=true multiplies it).
Usage:  mpiexec -n N rbm-train-cd1-mpi.py [options] <model-in> <feature-rspecifier> <model-out>
e.g.: mpiexec -n 2 rbm-train-cd1-mpi.py --average-every=10 --utt2num-frames=data/train/utt2num_frames 1.rbm.init scp:train.scp 1.rbm"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="rbm-train-cd1-mpi.py")
    register_cd1_options(p)  # every option of rbm-train-cd1-frmshuff.py
    p.register_group(RbmMpiOptions)
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def work(comm, opts, args) -> int:
        log = logging.getLogger("rbm-train-cd1-mpi")
        mopts = parser.group(RbmMpiOptions, opts)
        res = rbm_train(comm, args[0], args[1], args[2], parser.group(RbmTrainOptions, opts),
                        parser.group(Cd1Options, opts), parser.group(RbmRandomizerOptions, opts),
                        mopts, feature_transform=opts.feature_transform, backend=opts.backend,
                        binary=opts.binary, log=log)
        if comm.Get_rank() == 0:
            st = res.stats
            log.info("%s", st.summary_line())
            log.info("%s", st.report())
            log.info("%s", st.time_split())
            log.info("%d ranks, %d minibatches each, %d mixes (%s every %d), mixing "
                     "%.2fs per rank", res.num_ranks, res.minibatches, res.mixes,
                     mopts.mixing, mopts.average_every, res.time_mix)
        return 0

    return run_mpi_tool(parser, (3, 3), work, argv, output=lambda opts, args: args[2])


if __name__ == "__main__":
    sys.exit(main())
