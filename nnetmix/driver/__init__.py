"""What the training tools call: one DNN epoch or one RBM training run, on one worker or N MPI
ranks, and the learning-rate schedule over epochs.

    from nnetmix.driver import EpochFiles, EpochSpec, dnn_epoch, rbm_train, run_schedule
    files = EpochFiles("scp:feats.scp", "ark:post.ark", "nnet.in", "nnet.out")
    res = dnn_epoch(None, EpochSpec(TrainOptions(), NnetTrainOptions(learn_rate=0.008)),
                    files)                                          # one worker
    res = dnn_epoch(MPI.COMM_WORLD, EpochSpec(..., mixing=MpiTrainOptions(average_every=10)),
                    files)                                          # N ranks

This is the layer above :mod:`nnetmix.train` (the one minibatch loop, the DNN and RBM update
rules) and :mod:`nnetmix.parallel` (mixing, BMUF, partition, agreement): it puts them together.
:class:`~nnetmix.driver.ranks.Workers` is the one place where one worker and N ranks differ.
"""
from nnetmix.driver.dnn import EpochResult, dnn_epoch, read_result, write_result
from nnetmix.driver.multistream import multistream_epoch
from nnetmix.driver.ranks import (TASK_LOG_ENV, MixingHook, Shards, Workers, frame_counts,
                                  setup_rank_logging, table_frames)
from nnetmix.driver.rbm import RbmMpiOptions, RbmResult, local_frames, rbm_train
from nnetmix.driver.scheduler import ScheduleOptions, TrainCommandOptions, run_schedule
from nnetmix.driver.spec import EpochFiles, EpochSpec

__all__ = [
    "EpochSpec", "EpochFiles",
    "dnn_epoch", "EpochResult", "write_result", "read_result", "multistream_epoch",
    "rbm_train", "RbmResult", "RbmMpiOptions", "local_frames",
    "Workers", "Shards", "MixingHook", "setup_rank_logging", "frame_counts", "table_frames",
    "TASK_LOG_ENV", "run_schedule", "ScheduleOptions", "TrainCommandOptions",
]
