"""Elastic resume (``--resume-workers``): an epoch that starts from a checkpoint written by N
ranks, run at M ranks.

A checkpoint is the model plus the state beside it, and three of its files record the N that
wrote them: the BMUF state (``num_ranks``), the residuals of compressed mixing (one row per
rank) and, written by nnet-train-mpi.py, the NG-SGD state (``num_ranks`` in its metadata; a
state of nnet-train-frmshuff.py, or of an older run, records none and is taken as it is). A plain
model-averaging model records nothing: it is the same whatever N was.

``same`` (the default) refuses a state written at N != M with one line naming the file: the
run's learning rate, block momentum and data partition all depend on N, so a run that changes
it must say so. ``any`` resumes it, and each rank's log says what changed, one line per item:

* **BMUF**: W, W_g and Delta are kept (the filter goes on from where it stood; the ranks start
  from the checkpoint's W_g); the block momentum and block learning rate are the options'
  values for M (default eta = 1 - 1/M, which keeps seed 002's C = zeta / (M (1 - eta)) at 1).
  Delta was built with N's eta; it settles to M's steady state within about 1/(1 - eta) blocks.
* **Learning rate**: x M for model averaging (``--scale-lr-by-workers``), as any run at M.
* **NG-SGD**: the state holds rank 0's Fisher estimate only (each rank keeps its own during the
  epoch and rank 0 saves its one; docs/parallel.md "NG-SGD"), so there is nothing per rank to
  remap: every one of the M ranks starts from it, as all N did. Averaging the ranks' low-rank
  factors would not be an estimate of anything (their subspaces differ).
* **Residuals** (``--mix-compression``): rank r's residual is what rank r's compression dropped,
  so N rows cannot be given to M ranks exactly. What the model is still owed is their mean,
  (1/N) sum_r e_r (a mix applies the mean of the sent updates); each of the M ranks starts with
  that mean, so the next mixes deliver exactly it. Only its split over the ranks is lost.
* **Data partition**: cut afresh into M shards balanced by frames (it is cut per epoch anyway).
"""
from __future__ import annotations

import json
import logging
import os
from typing import Any, Optional

import numpy as np

from nnetmix.parallel.buffers import ParallelError
from nnetmix.utils.state import Array, read_npz

__all__ = ["RESUME_WORKERS", "check_resume_workers", "ElasticResume", "ngsgd_saved_ranks"]

RESUME_WORKERS = ("same", "any")


def check_resume_workers(value: str) -> None:
    if value not in RESUME_WORKERS:
        raise ParallelError(f"--resume-workers={value}: expected same (refuse a checkpoint "
                            "written by another number of ranks) or any (resume it)")


def ngsgd_saved_ranks(arrays: dict[str, np.ndarray]) -> Optional[int]:
    """The number of ranks recorded in an NG-SGD state's metadata (None: not recorded)."""
    try:
        n = json.loads(str(arrays["meta"])).get("num_ranks")
    except (KeyError, ValueError, AttributeError):
        return None  # damage is the state reader's to report
    return int(n) if isinstance(n, int) and n > 0 else None


class ElasticResume:
    """One rank's view of the checkpoint an epoch starts from (module docstring): each state
    loader hands its file's recorded N to :meth:`saved`; the remapping methods do the rest."""

    def __init__(self, policy: str, num_ranks: int, log: logging.Logger):
        check_resume_workers(policy)
        self.policy = policy
        self.size = int(num_ranks)
        self.log = log
        self.from_ranks: Optional[int] = None   #: N of the first state written at N != M

    def saved(self, path: str, what: str, num_ranks: Optional[int]) -> bool:
        """True when ``path`` (a ``what``) was written by another number of ranks and is to be
        remapped; refused (ParallelError naming the file) under ``same``."""
        if num_ranks is None or int(num_ranks) == self.size:
            return False
        n = int(num_ranks)
        if self.policy != "any":
            raise ParallelError(f"{path}: {what} written by {n} ranks, this run has {self.size} "
                                f"(pass --resume-workers=any to resume it at {self.size} ranks, "
                                f"or run at {n})")
        if self.from_ranks is None:
            self.from_ranks = n
        return True

    # -- the items ---------------------------------------------------------------------------
    def bmuf_state(self, state: dict[str, Any], path: str, eta: float, zeta: float,
                   block_momentum_option: float) -> None:
        """Check a BMUF state about to be resumed; W, W_g, Delta are kept as they are."""
        n = state.get("num_ranks")
        if not self.saved(path, "BMUF state", None if n is None else int(n)):
            return
        old_eta = state.get("block_momentum")
        old_zeta = state.get("block_learn_rate")
        how = (f"1 - 1/{self.size}" if block_momentum_option < 0
               else "--block-momentum as given")
        self.log.info("elastic resume: BMUF state %s of %d ranks: W, W_g and Delta kept (block "
                      "%d); block momentum %s -> %g (%s), block learning rate %s -> %g", path,
                      int(n), int(state.get("blocks", 0)),
                      "?" if old_eta is None else "%g" % float(old_eta), eta, how,
                      "?" if old_zeta is None else "%g" % float(old_zeta), zeta)

    def ngsgd_state(self, arrays: dict[str, np.ndarray], path: str) -> None:
        """Check an NG-SGD state about to be read (rank 0's estimate: taken as it is)."""
        n = ngsgd_saved_ranks(arrays)
        if self.saved(path, "NG-SGD state", n):
            self.log.info("elastic resume: NG-SGD state %s of %d ranks holds rank 0's Fisher "
                          "estimate only: each of the %d ranks starts from it, as all %d did",
                          path, n, self.size, n)

    def ngsgd_file(self, path: str) -> None:
        """:meth:`ngsgd_state` of the NG-SGD state file at ``path``, when there is one."""
        if path and os.path.isfile(path):
            self.ngsgd_state(read_npz(path, "NG-SGD state", {"meta": Array("U")},
                                      "delete it to start a fresh estimate"), path)

    def mix_state(self, state: dict[str, Any], path: str) -> dict[str, Any]:
        """A mixing state for this run: at another N, every rank gets the mean residual."""
        res = np.asarray(state["residual"])
        n = int(state["num_ranks"]) if "num_ranks" in state else int(res.shape[0])
        if res.ndim != 2 or not self.saved(path, "mixing state", n):
            return state
        mean = res.astype(np.float64).mean(axis=0).astype(np.float32)
        self.log.info("elastic resume: mixing state %s holds the residuals of %d ranks, which "
                      "cannot be given back rank by rank at %d: each rank starts with their mean "
                      "(RMS %g), what the model is still owed; their split over the ranks is "
                      "dropped", path, n, self.size,
                      float(np.sqrt(np.mean(np.square(mean, dtype=np.float64)))))
        out = dict(state)
        out["residual"] = np.tile(mean, (self.size, 1))
        out["num_ranks"] = np.int64(self.size)
        return out

    def report(self, lr_factor_of, epoch: int) -> None:
        """The lines for what changed with the run rather than a file: the learning rate and
        the data partition (``lr_factor_of(n)``: the learning-rate multiplier at n ranks)."""
        n = self.from_ranks
        if n is None:
            if self.policy == "any":
                self.log.info("elastic resume: no state of the checkpoint records another "
                              "number of ranks than %d: nothing to remap", self.size)
            return
        self.log.info("elastic resume: learning rate x %g at %d ranks (x %g at the checkpoint's "
                      "%d)", lr_factor_of(self.size), self.size, lr_factor_of(n), n)
        self.log.info("elastic resume: data partition of epoch %d cut into %d shards balanced "
                      "by frames (the checkpoint's run had %d)", epoch, self.size, n)
