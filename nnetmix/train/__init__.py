"""Frame-level DNN training as Kaldi's nnet1: randomizer, cross-entropy epochs, schedules.

    from nnetmix.train import TrainOptions, read_utterances, train_epoch
    stats = train_epoch(nnet, read_utterances("scp:feats.scp", "ark:post.ark"), TrainOptions(),
                        NnetTrainOptions(learn_rate=0.008), feature_transform=transf)
    print(stats.summary_line()); print(stats.report())

:func:`train_epoch` takes any iterable of (key, feats, targets) utterances (a shard for an MPI
rank), an after-minibatch ``hook(step, nnet)`` (where MPI mixing plugs in) and an agreed number
of minibatches; it runs :class:`MinibatchLoop` (:mod:`nnetmix.train.loop`), the minibatch loop
every trainer shares, DNN and RBM. Whole epochs on one worker or N ranks and the schedule over
epochs are one layer up, in :mod:`nnetmix.driver`. :func:`train_streams_epoch`
(:mod:`nnetmix.train.multistream`) is the same loop and update rule for recurrent networks, fed
by a stream batch source (:func:`make_stream_source`): a :class:`StreamBatcher` (truncated BPTT
over parallel utterances), or whole utterances or CSC-BPTT chunks (:class:`PerUttOptions`,
:mod:`nnetmix.train.seqstreams`). Inference (nnet-forward)
is nnetmix.nnet's :func:`~nnetmix.nnet.nnet_forward`.
"""
from nnetmix.train.data import TARGET_KINDS, posterior_to_targets, read_utterances
from nnetmix.train.loop import Hook, MinibatchLoop
from nnetmix.train.newbob import (NewbobDecision, NewbobOptions, NewbobState, exponential_lr,
                                  kaldi_round, newbob_step)
from nnetmix.train.options import RandomizerOptions, TrainError, TrainOptions
from nnetmix.train.prefetch import Prefetcher
from nnetmix.train.randomizer import FrameRandomizer, num_minibatches
from nnetmix.train.stats import EpochStats, parse_report
from nnetmix.train.trainer import train_epoch
from nnetmix.train.streams import StreamBatch, StreamBatcher, StreamOptions, make_stream_source
from nnetmix.train.seqstreams import ChunkBatcher, PerUttOptions, UttBatcher
from nnetmix.train.multistream import train_streams_epoch

__all__ = [
    "TrainOptions", "RandomizerOptions", "TrainError",
    "FrameRandomizer", "num_minibatches", "Prefetcher",
    "read_utterances", "posterior_to_targets", "TARGET_KINDS",
    "train_epoch", "Hook", "MinibatchLoop", "EpochStats", "parse_report",
    "train_streams_epoch", "StreamOptions", "StreamBatcher", "StreamBatch",
    "make_stream_source", "PerUttOptions", "UttBatcher", "ChunkBatcher",
    "NewbobOptions", "NewbobState", "NewbobDecision", "newbob_step", "exponential_lr",
    "kaldi_round",
]
