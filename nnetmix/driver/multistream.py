"""One epoch of multi-stream training on one worker: the library behind
bin/nnet-train-multistream.py and bin/nnet-train-multistream-perutt.py (Kaldi's
nnet-train-multistream and nnet-train-multistream-perutt; with PerUttOptions' chunk options,
seed 002's CSC-BPTT)::

    spec = EpochSpec(TrainOptions(), NnetTrainOptions(learn_rate=1e-4),
                     streams=StreamOptions(num_streams=4, batch_size=20))
    res = multistream_epoch(spec, EpochFiles("scp:feats.scp", "ark:post.ark", "nnet.in",
                                             "nnet.out"))

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

import dataclasses
import logging
from typing import Optional

from nnetmix.driver.dnn import EpochResult, dnn_epoch
from nnetmix.driver.spec import EpochFiles, EpochSpec

__all__ = ["multistream_epoch"]

logger = logging.getLogger(__name__)


def multistream_epoch(spec: EpochSpec, files: EpochFiles,
                      log: Optional[logging.Logger] = None) -> EpochResult:
    """One epoch (or CV pass with ``spec.train.cross_validate``) in the steps of
    ``spec.streams`` (StreamOptions or PerUttOptions); see the module docstring."""
    return dnn_epoch(None, dataclasses.replace(spec, streams_always=True), files,
                     log=log or logger)
