#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-train-mpi.py: nnet-train-frmshuff over MPI with model averaging or BMUF.

Run as ``mpiexec -n N nnet-train-mpi.py ...`` (or ``utils/run.py --num-tasks N log ...``): each
rank trains on its own frame-balanced share of the data and the ranks mix their models every
--average-every minibatches; the epoch ends with one model (the exact average, or BMUF's W).
Takes every option of nnet-train-frmshuff.py; its log lines (AvgLoss, FRAME_ACCURACY, the
summary) are printed once, by rank 0, over the data of all ranks. The work is
nnetmix.driver.dnn_epoch, the same function nnet-train-frmshuff.py calls.

A recurrent network (<LstmProjected>, <BlstmProjected>) is trained as nnet-train-multistream.py
trains it, with its --num-streams and --batch-size: each rank runs --num-streams utterances of its
shard in parallel, a minibatch is one step of --batch-size frames of each, and --average-every
(a BMUF block too) counts these steps. A mix mixes the parameters only: each rank keeps the LSTM
state of its own streams. With --stream-mode=perutt it is trained as
nnet-train-multistream-perutt.py trains it, with that tool's options: --num-streams whole
utterances per step (--max-frames, --matrix-buffer-size), or with --chunk-size (and
--chunk-left-context, --chunk-right-context) CSC-BPTT chunks, --num-streams chunks per step.
--num-streams defaults to each mode's tool's default, as Kaldi's two tools: 4 for multistream,
20 for perutt. --average-every and a BMUF block then count these steps of utterances or
chunks. Only --optimizer=sgd for these."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import logging
import sys

from nnetmix.cli import OptionParser
from nnetmix.cli.streams import mpi_stream_options, register_mpi_stream_options
from nnetmix.cli.training import (check_epoch_args, frmshuff_epoch, register_frmshuff_options,
                                  run_mpi_tool)
from nnetmix.driver import dnn_epoch
from nnetmix.parallel import MpiTrainOptions

USAGE = """Perform one iteration (epoch) of Neural Network training with mini-batch Stochastic
Gradient Descent on N MPI ranks with model averaging (every --average-every minibatches:
allreduce, butterfly, ring or hierarchical mixing) or blockwise model-update filtering
(--bmuf=true). Hierarchical mixing averages inside each host (the ranks MPI places on one
node), then among one leader per host, so only the leaders' messages cross the network.
A recurrent network (LSTM, BLSTM) trains in multi-stream steps (--num-streams, --batch-size),
or with --stream-mode=perutt on whole utterances or CSC-BPTT chunks (--chunk-size, ...).
The training targets are usually pdf-posteriors, prepared by ali-to-post.
Usage:  mpiexec -n N nnet-train-mpi.py [options] <feature-rspecifier> <targets-rspecifier> <model-in> [<model-out>]
e.g.: mpiexec -n 2 nnet-train-mpi.py --average-every=10 --utt2num-frames=data/train/utt2num_frames scp:feats.scp ark:posterior.ark nnet.init nnet.iter1
e.g.: mpiexec -n 2 nnet-train-mpi.py --bmuf=true --stream-mode=perutt --num-streams=20 --chunk-size=64 --chunk-left-context=21 --chunk-right-context=21 scp:feats.scp ark:posterior.ark blstm.init blstm.iter1"""


def make_parser() -> OptionParser:
    p = OptionParser(USAGE, prog="nnet-train-mpi.py")
    register_frmshuff_options(p)  # every option of nnet-train-frmshuff.py
    p.register_group(MpiTrainOptions)
    register_mpi_stream_options(p)  # the multistream tools', for a recurrent network
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def work(comm, opts, args) -> int:
        log = logging.getLogger("nnet-train-mpi")
        spec, files = frmshuff_epoch(parser, opts, args,
                                     mixing=parser.group(MpiTrainOptions, opts),
                                     streams=mpi_stream_options(opts))
        res = dnn_epoch(comm, spec, files, log=log)
        if comm.Get_rank() == 0:
            log.info("%s", res.stats.summary_line())
            log.info("%s", res.stats.report())
            log.info("%s", res.summary(spec.mixing, spec.train.cross_validate))
        return 0

    return run_mpi_tool(parser, (3, 4), work, argv,
                        check=lambda opts, args: (check_epoch_args(parser, opts, args),
                                                  mpi_stream_options(opts),
                                                  parser.group(MpiTrainOptions, opts).check()),
                        output=lambda opts, args: args[3] if len(args) > 3 else None)


if __name__ == "__main__":
    sys.exit(main())
