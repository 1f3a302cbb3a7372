"""One epoch of multi-stream training on one worker: the library behind
bin/nnet-train-multistream.py and bin/nnet-train-multistream-perutt.py (Kaldi's
nnet-train-multistream and nnet-train-multistream-perutt; with PerUttOptions' chunk options,
seed 002's CSC-BPTT)::

    res = multistream_epoch("scp:feats.scp", "ark:post.ark", "nnet.in", "nnet.out",
                            TrainOptions(), StreamOptions(num_streams=4, batch_size=20),
                            NnetTrainOptions(learn_rate=1e-4))

It is :func:`~nnetmix.driver.dnn.dnn_epoch` on one worker with the stream options (one epoch
driver for frames, streams, one worker and MPI ranks), a feed-forward network trained in streams
too (as Kaldi's tools do, with a warning): it writes the model (training only, atomically) and
the result file (:func:`~nnetmix.driver.dnn.write_result`, the one a scheduler reads), so
nnet-train-scheduler.py can run these tools as its ``--train-tool``. The stream
options choose the batch source (:func:`~nnetmix.train.streams.make_stream_source`). One
worker: over MPI ranks (model averaging, BMUF) nnet-train-mpi.py trains a recurrent network in
streams (:func:`~nnetmix.driver.dnn.dnn_epoch`, :mod:`nnetmix.driver.batches`).
"""
from __future__ import annotations

import logging
from typing import Optional, Union

from nnetmix.driver.dnn import EpochResult, dnn_epoch
from nnetmix.nnet import NnetTrainOptions
from nnetmix.train.options import TrainOptions
from nnetmix.train.seqstreams import PerUttOptions
from nnetmix.train.streams import StreamOptions

__all__ = ["multistream_epoch"]

logger = logging.getLogger(__name__)


def multistream_epoch(feats: str, targets: str, model_in: str, model_out: Optional[str],
                      train_opts: TrainOptions,
                      stream_opts: Union[StreamOptions, PerUttOptions],
                      update_opts: NnetTrainOptions, *, feature_transform: str = "",
                      backend: str = "cpu", targets_kind: str = "post", binary: bool = True,
                      result_file: str = "",
                      log: Optional[logging.Logger] = None) -> EpochResult:
    """One epoch (or CV pass with ``train_opts.cross_validate``); see the module docstring."""
    return dnn_epoch(None, feats, targets, model_in, model_out, train_opts, update_opts,
                     feature_transform=feature_transform, backend=backend,
                     targets_kind=targets_kind, binary=binary, log=log or logger,
                     result_file=result_file, stream_opts=stream_opts, streams_always=True)
