#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""rbm-train-cd1-mpi.py: rbm-train-cd1-frmshuff over MPI ranks with model mixing.

Run as ``mpiexec -n N rbm-train-cd1-mpi.py ...`` (or ``utils/run.py --num-tasks N log ...``, as
steps/nnet/pretrain_dbn.sh --num-workers N does): each rank trains CD-1 on its own frame-balanced
share of the data and the ranks mix the RBM every --average-every minibatches; the run ends with
the exact average. Takes every option of rbm-train-cd1-frmshuff.py; its log lines (Done ...,
AvgLoss (Mse), progress) are printed once, by rank 0, over the data of all ranks. At N = 1 the
model is rbm-train-cd1-frmshuff.py's, byte for byte. The work is nnetmix.driver.rbm_train."""
import os
import sys

try:
    from nnetmix.cli import OptionParser, run_tool
except ImportError:  # run without the venv's nnetmix installed: use this checkout's
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from nnetmix.cli import OptionParser, run_tool

USAGE = """Train RBM by Contrastive Divergence alg. with 1 step of Markov Chain Monte-Carlo on N MPI
ranks, mixing the ranks' RBMs every --average-every minibatches (allreduce, butterfly or ring).
The learning rate is not scaled by the number of ranks by default: averaging N CD-1 updates
behaves like one update on an N times larger minibatch (--scale-lr-by-workers=true multiplies it).
Usage:  mpiexec -n N rbm-train-cd1-mpi.py [options] <model-in> <feature-rspecifier> <model-out>
e.g.: mpiexec -n 2 rbm-train-cd1-mpi.py --average-every=10 --utt2num-frames=data/train/utt2num_frames 1.rbm.init scp:train.scp 1.rbm"""

PROG = "rbm-train-cd1-mpi.py"


def make_parser() -> OptionParser:
    from nnetmix.driver import RbmMpiOptions
    from nnetmix.rbm.options import register_cd1_options

    p = OptionParser(USAGE, prog=PROG)
    register_cd1_options(p)  # every option of rbm-train-cd1-frmshuff.py
    p.register_group(RbmMpiOptions)
    return p


def main(argv=None) -> int:
    parser = make_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    from nnetmix.parallel.failure import launcher_rank

    if launcher_rank() > 0:  # one copy of the command line in the job log, from rank 0
        argv = ["--print-args=false"] + argv

    def body(opts, args) -> int:
        import logging

        from mpi4py import MPI

        from nnetmix.driver import RbmMpiOptions, rbm_train, setup_rank_logging
        from nnetmix.parallel.failure import run_job
        from nnetmix.rbm import Cd1Options, RbmRandomizerOptions, RbmTrainOptions

        comm = MPI.COMM_WORLD
        log = logging.getLogger("rbm-train-cd1-mpi")
        mopts = parser.group(RbmMpiOptions, opts)
        setup_rank_logging(comm, PROG, opts.verbose, mopts.rank_log)

        def work() -> int:
            res = rbm_train(comm, args[0], args[1], args[2],
                            parser.group(RbmTrainOptions, opts), parser.group(Cd1Options, opts),
                            parser.group(RbmRandomizerOptions, opts), mopts,
                            feature_transform=opts.feature_transform, backend=opts.backend,
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

        return run_job(comm, work)

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
