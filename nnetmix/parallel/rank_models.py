# Copyright 2026 nnetmix authors. Apache 2.0.
"""Each rank's own model from one epoch to the next: ``--epoch-average=false``, seed 000's way.

nnetmix ends every epoch with the ranks' exact average, so one model is validated, saved and
given to the next epoch. Seed 000's butterfly and ring mixing have no such step: each node
trains on from its own model, and the partial mixes are all the nodes ever share. To run that
with an MPI job per epoch, the ranks' models must outlive the job:

* At the epoch's end rank 0's own model is the one validated and saved (``<model-out>``), and
  every rank's parameters are gathered on rank 0 and written beside it,
  ``<model-out>.ranks.npz`` (one float32 row per rank, the number of ranks and the digest of
  the model saved beside it, as it reads back: a text model's parameters at precision 7),
  committed with the model.
* The next epoch starts every rank from ``<model-in>`` (they must agree on it, as always), then
  rank r takes row r of ``<model-in>.ranks.npz``. Without that file (the first epoch, a model
  of an averaged run) every rank starts from ``<model-in>``. A file saved with another model
  (its digest differs: a model converted to text afterwards, or replaced) is not used: every
  rank starts from ``<model-in>``, with a warning. One written by another number of ranks is
  refused, or with ``--resume-workers=any`` left aside the same way.

A scheduler that rejects an epoch goes back to the last accepted model, whose ``.ranks.npz``
is beside it, so the ranks go back to their own models of that epoch too. N models of P
float32 parameters are 4 N P bytes on rank 0 and on disk per epoch.
"""
from __future__ import annotations

import logging
import os
from typing import Any, Optional

import numpy as np

from nnetmix.parallel.buffers import ParallelError
from nnetmix.utils.state import Array, read_npz, write_npz

__all__ = ["RANK_MODELS_SUFFIX", "check_epoch_average", "gather_rank_models",
           "read_rank_models", "write_rank_models", "take_rank_model"]

RANK_MODELS_SUFFIX = ".ranks.npz"   #: every rank's own model, beside the model rank 0 saved

_SPEC = {"params": Array("f", (None, None)), "num_ranks": Array("iu"), "model": Array("U")}
_FIX = "remove it to start every rank from <model-in>"


def check_epoch_average(epoch_average: bool, bmuf: bool, compression: str,
                        overlap: bool) -> None:
    """--epoch-average=false is for plain mixing: BMUF's W, compressed mixing's residuals and
    the overlapped mix's pending average all assume one model at the epoch's end."""
    if epoch_average:
        return
    what = ("--bmuf=true" if bmuf else f"--mix-compression={compression}"
            if compression != "none" else "--overlap-mixing=true" if overlap else "")
    if what:
        raise ParallelError(f"--epoch-average=false with {what}: only plain mixing (allreduce, "
                            "butterfly, ring) keeps each rank's own model between epochs")


def gather_rank_models(comm: Any, nnet: Any, model_digest: str
                       ) -> Optional[dict[str, np.ndarray]]:
    """Every rank's parameters of ``nnet`` gathered on rank 0 (None elsewhere), with the digest
    of rank 0's model, the one saved beside them. Collective."""
    own = np.ascontiguousarray(nnet.get_params(), dtype=np.float32)
    size = comm.Get_size()
    rows = np.empty((size, own.shape[0]), np.float32) if comm.Get_rank() == 0 else None
    comm.Gather(own, rows, root=0)
    if rows is None:
        return None
    return {"params": rows, "num_ranks": np.int64(size), "model": np.str_(model_digest)}


def read_rank_models(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays of a ``.ranks.npz`` file, checked; damage is one StateError naming it."""
    return read_npz(path, "rank models", _SPEC, _FIX)


def write_rank_models(path: str | os.PathLike, state: dict[str, np.ndarray]) -> None:
    write_npz(path, state)


def take_rank_model(path: str, nnet: Any, rank: int, size: int, model_digest: str,
                    log: logging.Logger, resume: Any = None) -> bool:
    """Rank ``rank``'s ``nnet`` (read from <model-in>) takes its own row of ``path`` when the
    file is there and belongs to that model (module docstring); True when it did. ``resume``: the
    run's
    :class:`~nnetmix.parallel.elastic.ElasticResume` (another number of ranks: refused, or
    left aside under ``any``)."""
    if not path or not os.path.exists(path):
        log.info("no rank models %s: every rank starts from <model-in>", path or "(a pipe)")
        return False
    state = read_rank_models(path)
    rows = state["params"]
    n = int(state["num_ranks"])
    if n != rows.shape[0]:
        raise ParallelError(f"{path}: rank models: {rows.shape[0]} rows for num_ranks {n} "
                            f"({_FIX})")
    if n != size:
        if resume is None or not resume.saved(path, "rank models", n):
            raise ParallelError(f"{path}: rank models written by {n} ranks, this run has {size} "
                                f"(run at {n}, or {_FIX})")
        log.info("elastic resume: rank models %s of %d ranks cannot be given to %d: every rank "
                 "starts from <model-in> (rank 0's)", path, n, size)
        return False
    if str(state["model"]) != model_digest:
        log.warning("rank models %s were saved with another model than <model-in>: every rank "
                    "starts from <model-in>", path)
        return False
    if rows.shape[1] != nnet.num_params:
        raise ParallelError(f"{path}: rank models of {rows.shape[1]} parameters, the model has "
                            f"{nnet.num_params} ({_FIX})")
    nnet.set_params(rows[rank])
    log.info("rank models %s: rank %d starts from its own model of the last epoch", path, rank)
    return True
