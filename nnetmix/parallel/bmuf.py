"""Blockwise Model-Update Filtering (BMUF), seed 002 (Chen & Huo, ICASSP 2016).

After a block of tau minibatches on every rank, with W_bar(t) the average of the N local models:

    G(t)     = W_bar(t) - W_g(t-1)                  (the block's aggregated update)
    Delta(t) = eta * Delta(t-1) + zeta * G(t)       (block momentum eta, block learning rate zeta)
    W(t)     = W(t-1) + Delta(t)
    CBM: W_g(t) = W(t)        NBM (Nesterov): W_g(t) = W(t) + eta * Delta(t)

and every rank starts the next block from W_g(t). W(t) is the model that is validated and saved
(for CBM it is W_g(t)); W_g(t) is only the look-ahead point where the next block starts, so
under NBM the two are distinct buffers. eta = 0, zeta = 1 is plain model averaging, and is done
bitwise as such here (W(t) = W_bar(t), not W(t-1) + (W_bar(t) - W(t-1)), which differs by a
rounding). Default eta = 1 - 1/N, zeta = 1, which makes the seed's constant
C = zeta / (N (1 - eta)) exactly 1 (the seed used 0.9, 0.94, 0.97, 0.986 for 8, 16, 32, 64 GPUs,
C slightly above 1).

``reset_momentum_after_block`` resets the LOCAL SGD velocity (``nnet.velocity``) to zero when a
block starts; it never touches the block momentum Delta. This is what the seed's per-minibatch
analysis assumes: the i-th minibatch of a block contributes
gamma (1 - eps^(tau-i+1)) / (1 - eps) g_i, i.e. its local momentum stops at the block's end, and
it is CNTK's BMUF default (``resetSGDMomentum=true``): the velocity was built around the old
local model and would otherwise push the new start point W_g(t) along a stale direction.

With ``feedback`` (``--mix-compression``, :mod:`nnetmix.parallel.compress`) the block's
aggregated update is computed from the ranks' compressed updates with error feedback,
G(t) = (1/N) sum_r D(C(W_r(t) - W_g(t-1) + e_r)), W_bar(t) = W_g(t-1) + G(t), and filtered as
above; the residuals e_r are checkpointed beside the model, not in the BMUF state.

With ``--overlap-mixing`` (:mod:`nnetmix.parallel.overlap`) W_bar(t) is the average of the
ranks' snapshots taken at the end of the block before, filtered by the same :meth:`BMUF.filter`,
and each rank starts from W_g(t) plus what it trained since its snapshot
(:meth:`BMUF.start_block`, which also resets the local velocity as configured).

The state (W, W_g, Delta, hyper-parameters, block count) is exposed for checkpoints and saved
atomically to an ``.npz``. All arithmetic is on the network's backend (axpy/scale/copy), so a GPU
buffer stays on the GPU; the average W_bar goes through an :class:`AllReducer`, or with
``mixing="hierarchical"`` (``--mixing=hierarchical --bmuf=true``) a
:class:`~nnetmix.parallel.hierarchy.HierarchicalReducer`: the same exact average computed host
by host, filtered as above on every rank.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Optional

import numpy as np

from nnetmix.options import option
from nnetmix.parallel.hierarchy import make_reducer
from nnetmix.parallel.buffers import ParallelError
from nnetmix.kernels import get_backend
from nnetmix.utils.state import Array, read_npz, write_npz

__all__ = ["BmufOptions", "BMUF", "read_bmuf_state"]


@dataclasses.dataclass
class BmufOptions:
    """BMUF hyper-parameters (its fields are options: nnetmix.options.OptionSet.register_group)."""
    block_momentum: float = option(-1.0, "BMUF block momentum eta (negative: 1 - 1/N for N ranks)")
    block_learn_rate: float = option(1.0, "BMUF block learning rate zeta")
    nesterov: bool = option(True, "Nesterov block momentum (NBM) rather than classical (CBM)")
    reset_momentum_after_block: bool = option(True, "Zero the local SGD velocity when each block "
                                              "starts (never the block momentum)")

    def eta(self, num_ranks: int) -> float:
        return 1.0 - 1.0 / num_ranks if self.block_momentum < 0 else float(self.block_momentum)


#: the arrays of a BMUF state file (W, W_g, delta: the flat parameters, one length)
_STATE_SPEC = {"W": Array("f", ("n",)), "W_g": Array("f", ("n",)), "delta": Array("f", ("n",)),
               "nesterov": Array("b"), "blocks": Array("iu", optional=True),
               "block_momentum": Array("f", optional=True),
               "block_learn_rate": Array("f", optional=True),
               "num_ranks": Array("iu", optional=True)}


def read_bmuf_state(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays of a BMUF state file, checked (:mod:`nnetmix.utils.state`); any damage is
    one :class:`~nnetmix.utils.state.StateError` naming the file."""
    return read_npz(path, "BMUF state", _STATE_SPEC, "remove it to start the filter afresh")


class BMUF:
    """BMUF over ``comm`` for the flat parameter buffer ``params`` (e.g. ``nnet.params``).

    Construction takes W = W_g = params (the ranks must start from the same model: check it with
    nnetmix.parallel.check_same_model) and Delta = 0. After each block of local minibatches call
    :meth:`sync`: it averages the local models, applies the filter, writes W_g(t) into ``params``
    and, when asked, zeroes ``velocity``. Validate and save :attr:`model` (W); copy it into a
    buffer with :meth:`copy_model`. :meth:`reset` restarts the filter from a given model (Newbob
    rejecting an epoch restarts from the best model).
    """

    def __init__(self, comm: Any, params: Any, opts: Optional[BmufOptions] = None,
                 allreduce_algorithm: str = "mpi", backend=None, velocity: Any = None,
                 cuda_aware: Optional[bool] = None, feedback: Any = None,
                 mixing: str = "allreduce"):
        self.opts = opts if opts is not None else BmufOptions()
        self.feedback = feedback
        self.num_ranks = comm.Get_size()
        self.eta = self.opts.eta(self.num_ranks)
        self.zeta = float(self.opts.block_learn_rate)
        if not 0.0 <= self.eta < 1.0:
            raise ParallelError(f"BMUF block momentum must be in [0, 1), got {self.eta}")
        if self.zeta <= 0.0:
            raise ParallelError(f"BMUF block learning rate must be positive, got {self.zeta}")
        self.nesterov = bool(self.opts.nesterov)
        if backend is None:
            be = get_backend("cpu")
        else:
            be = backend
        self.be = be
        self.params = params
        self.velocity = velocity
        self.count = int(params.shape[0])
        self.dtype = np.dtype(params.dtype)
        self.reducer = make_reducer(comm, mixing, allreduce_algorithm, self.count, self.dtype,
                                    backend, cuda_aware)
        self.reducer.access.check(params, "BMUF")
        self.W = be.empty(self.count, dtype=self.dtype)
        self.W_g = be.empty(self.count, dtype=self.dtype) if self.nesterov else self.W
        self.delta = be.zeros(self.count, dtype=self.dtype)
        self._G = be.empty(self.count, dtype=self.dtype)
        self.blocks = 0
        self.reset()

    # -- the filter ------------------------------------------------------------------------------
    @property
    def model(self):
        """W(t): the model to validate and save."""
        return self.W

    @property
    def global_model(self):
        """W_g(t): where every rank starts the next block (W itself under CBM)."""
        return self.W_g

    def reset(self, params: Any = None) -> None:
        """W = W_g = params (default: the bound buffer), Delta = 0; params <- W_g."""
        be = self.be
        src = self.params if params is None else params
        be.copy(self.W, src)
        if self.W_g is not self.W:
            be.copy(self.W_g, src)
        be.fill(self.delta, 0.0)
        if src is not self.params:
            be.copy(self.params, self.W_g)

    def sync(self) -> None:
        """End of a block: average the local models and apply the filter (module docstring);
        afterwards ``params`` holds W_g(t) on every rank."""
        if self.feedback is not None:                      # params = W_bar(t)
            self.feedback.average(self.params, self.W_g)
        else:
            self.reducer.average(self.params)
        self.filter(self.params)
        self.start_block()

    def filter(self, average: Any) -> None:
        """The filter of one block, given ``average`` = W_bar(t) (a buffer of the backend; it
        may be ``params``): G, Delta(t), W(t) and W_g(t) as in the module docstring. The
        blocking :meth:`sync` and overlapped mixing (:mod:`nnetmix.parallel.overlap`, where
        W_bar is the average of the ranks' snapshots) share it."""
        be, eta, zeta = self.be, self.eta, self.zeta
        be.copy(self._G, average)                          # G = W_bar(t) - W_g(t-1)
        be.axpy(-1.0, self.W_g, self._G)
        be.scale(self.delta, eta)                          # Delta = eta Delta + zeta G
        be.axpy(zeta, self._G, self.delta)
        if eta == 0.0 and zeta == 1.0:
            be.copy(self.W, average)                       # plain model averaging, bitwise
        else:
            be.axpy(1.0, self.delta, self.W)               # W(t) = W(t-1) + Delta(t)
        if self.nesterov:
            be.copy(self.W_g, self.W)                      # W_g(t) = W(t) + eta Delta(t)
            if eta != 0.0:
                be.axpy(eta, self.delta, self.W_g)
        self.blocks += 1

    def start_block(self, snapshot: Any = None) -> None:
        """The next block starts: ``params`` <- W_g(t), or with ``snapshot`` (overlapped mixing:
        the rank's parameters when the averaged block ended) params <- W_g(t) + (params -
        snapshot), keeping the local progress made since; the local velocity is zeroed when
        ``reset_momentum_after_block``."""
        be = self.be
        if snapshot is None:
            be.copy(self.params, self.W_g)
        else:
            be.axpy(-1.0, snapshot, self.params)
            be.axpy(1.0, self.W_g, self.params)
        if self.opts.reset_momentum_after_block and self.velocity is not None:
            be.fill(self.velocity, 0.0)

    def copy_model(self, dst: Any) -> None:
        """dst <- W(t) (e.g. into nnet.params before validating; restore with copy_global)."""
        self.be.copy(dst, self.W)

    def copy_global(self, dst: Any = None) -> None:
        """dst (default: the bound params) <- W_g(t)."""
        self.be.copy(self.params if dst is None else dst, self.W_g)

    # -- checkpoints -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """Host copies of the state: W, W_g, delta and the hyper-parameters."""
        h = self.be.to_host
        return {"W": h(self.W), "W_g": h(self.W_g), "delta": h(self.delta),
                "block_momentum": np.float64(self.eta), "block_learn_rate": np.float64(self.zeta),
                "nesterov": np.bool_(self.nesterov), "blocks": np.int64(self.blocks),
                "num_ranks": np.int64(self.num_ranks)}

    def load_state_dict(self, state: dict[str, Any], where: str = "BMUF state") -> None:
        """Restore W, W_g, Delta (refusing a state of another size or another filter) and put
        W_g into params, so training resumes where the checkpoint left it."""
        for key in ("W", "W_g", "delta"):
            a = np.asarray(state[key])
            if a.shape != (self.count,):
                raise ParallelError(f"{where}: {key} has shape {a.shape}, expected ({self.count},)")
        if bool(state["nesterov"]) != self.nesterov:
            raise ParallelError(f"{where}: saved with nesterov={bool(state['nesterov'])}, "
                                f"running with nesterov={self.nesterov}")
        be = self.be
        be.copy(self.W, be.asarray(np.asarray(state["W"]), dtype=self.dtype))
        if self.nesterov:
            be.copy(self.W_g, be.asarray(np.asarray(state["W_g"]), dtype=self.dtype))
        be.copy(self.delta, be.asarray(np.asarray(state["delta"]), dtype=self.dtype))
        self.blocks = int(state.get("blocks", 0))
        be.copy(self.params, self.W_g)

    def save(self, path: str | os.PathLike) -> None:
        """Write the state to ``path`` (.npz) atomically; one rank (rank 0) calls it."""
        write_npz(path, self.state_dict())

    def load(self, path: str | os.PathLike) -> None:
        """Read a state written by :meth:`save` (every rank reads the same file)."""
        self.load_state_dict(read_bmuf_state(path), str(path))

    def free(self) -> None:
        self.reducer.free()
