"""One epoch of multi-stream training on one worker: the library behind
bin/nnet-train-multistream.py and bin/nnet-train-multistream-perutt.py (Kaldi's
nnet-train-multistream and nnet-train-multistream-perutt; with PerUttOptions' chunk options,
seed 002's CSC-BPTT)::

    res = multistream_epoch("scp:feats.scp", "ark:post.ark", "nnet.in", "nnet.out",
                            TrainOptions(), StreamOptions(num_streams=4, batch_size=20),
                            NnetTrainOptions(learn_rate=1e-4))

It reads the model, the feature transform and the utterances, runs
:func:`~nnetmix.train.multistream.train_streams_epoch`, and writes the model (training only,
atomically) and the result file (:func:`~nnetmix.driver.dnn.write_result`, the one a scheduler
reads), so nnet-train-scheduler.py can run these tools as its ``--train-tool``. The stream
options choose the batch source (:func:`~nnetmix.train.streams.make_stream_source`). One
worker: over MPI ranks (model averaging, BMUF) nnet-train-mpi.py trains a recurrent network in
streams (:func:`~nnetmix.driver.dnn.dnn_epoch`, :mod:`nnetmix.driver.batches`).
"""
from __future__ import annotations

import logging
import time
from typing import Optional, Union

from nnetmix.driver.dnn import EpochResult, write_result
from nnetmix.kernels import get_backend
from nnetmix.nnet import NnetTrainOptions, read_nnet
from nnetmix.train.data import read_utterances
from nnetmix.train.multistream import train_streams_epoch
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
    log = log or logger
    t0 = time.perf_counter()
    cv = bool(train_opts.cross_validate)
    transform = read_nnet(feature_transform).to_backend(get_backend("cpu")) \
        if feature_transform else None
    nnet = read_nnet(model_in).to_backend(get_backend(backend))
    st = train_streams_epoch(nnet, read_utterances(feats, targets, targets_kind), train_opts,
                             stream_opts, None if cv else update_opts,
                             feature_transform=transform, log=log)
    wall = time.perf_counter() - t0
    res = EpochResult(st, st, 1, st.minibatches, st.time_optimize, 0.0,
                      st.time_total if cv else 0.0, st.time_io, wall)
    if not cv and model_out:
        nnet.write(model_out, binary=binary)
    if result_file:
        write_result(result_file, res)
    return res
