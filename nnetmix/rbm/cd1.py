"""One CD-1 step of an RBM through a compute backend (Kaldi's rbm-train-cd1-frmshuff inner loop
and Rbm::Propagate / Reconstruct / RbmUpdate, src/nnet/nnet-rbm.h).

With v the visible minibatch (N x I), W (O x I), visible bias a, hidden bias b::

    h+ = f_h(v W^T + b)                  positive phase (f: sigmoid if bern, identity if gauss)
    s  = [h+ > u], u ~ U[0,1)            hidden states (gauss hidden units: s = h+ + N(0,1))
    v- = f_v(s W + a)                     reconstruction
    h- = f_h(v- W^T + b)                  negative phase
    dW = mmt*dW + lr/N (h+^T v - h-^T v-) - lr*l2*W;  W += dW   (biases: row sums, no L2)

All matrix work goes through the Backend (gemm with alpha/beta, bias_sigmoid, add_bias,
sum_rows, axpy, scale). The random numbers are drawn on the host from one seeded numpy
generator (PCG64; Kaldi uses CuRand, so numbers differ but runs are reproducible): the hidden
probabilities come to the host, are compared there and go back (one N x O round trip per
minibatch on cuda; the Backend has no sampling kernel). The reconstruction comes to the host too,
for the reconstruction MSE and the weight-explosion guard.

The parameters are those of a one-component :class:`~nnetmix.nnet.Nnet` (``nnet.params`` is the
flat buffer MPI averages); the momentum ("corr") buffers are ``nnet.velocity``, same layout.

Weight-explosion guard (Gaussian visible units only, as Kaldi): when the standard deviation of
the reconstruction over the whole minibatch exceeds twice that of the data
(``pos_vis_std * 2 < neg_vis_std``), the weights and both biases are scaled by
``pos_vis_std / neg_vis_std``, the learning rate is multiplied by 0.9 (until the next momentum
step sets it again), the momentum buffers are zeroed, a warning is logged, and this minibatch
makes no update.
"""
from __future__ import annotations

import dataclasses
import logging
import math
from typing import Optional

import numpy as np

from nnetmix.nnet import Nnet, Rbm
from nnetmix.rbm.options import RbmError

__all__ = ["Cd1", "Cd1Result", "std_all"]

logger = logging.getLogger(__name__)


def std_all(x: np.ndarray) -> float:
    """Kaldi's ComputeStdDev (nnet-utils.h): the standard deviation over ALL elements,
    sqrt(E[x^2] - E[x]^2), the variance forced to be >= 0."""
    a = np.asarray(x, dtype=np.float64)
    n = a.size
    mean = a.sum() / n
    var = float(np.einsum("ij,ij->", a, a) / n - mean * mean) if a.ndim == 2 else \
        float((a * a).sum() / n - mean * mean)
    if var < 0.0:
        var = 0.0
    return math.sqrt(var)


@dataclasses.dataclass
class Cd1Result:
    """What one step reports."""

    mse: float            #: 0.5 * sum of squared reconstruction errors (Kaldi's Mse loss)
    frames: int
    guarded: bool = False  #: the weight-explosion guard fired (no update this minibatch)


class Cd1:
    """CD-1 on the single <Rbm> of ``nnet`` (already on its backend).

    ``learn_rate`` and ``momentum`` are the values handed to the RBM (Kaldi's trn_opts_rbm), set
    by the trainer's momentum schedule through :meth:`set_rates`.
    """

    def __init__(self, nnet: Nnet, learn_rate: float, momentum: float, l2_penalty: float,
                 seed: int = 777, log: Optional[logging.Logger] = None):
        if len(nnet.components) != 1 or not isinstance(nnet.components[0], Rbm):
            got = ", ".join(c.marker for c in nnet.components) or "nothing"
            raise RbmError(f"CD-1 training needs a network of exactly one <Rbm>, got {got}")
        self.nnet = nnet
        self.rbm: Rbm = nnet.components[0]
        self.be = nnet._be()
        self.learn_rate = float(learn_rate)
        self.momentum = float(momentum)
        self.l2_penalty = float(l2_penalty)
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.log = log or logger
        self._bufs: dict[str, object] = {}
        self._rows = 0

    def set_rates(self, learn_rate: float, momentum: float) -> None:
        self.learn_rate = float(learn_rate)
        self.momentum = float(momentum)

    # -- buffers ----------------------------------------------------------------------------
    def _buffers(self, rows: int):
        if rows != self._rows:
            be, dt = self.be, self.nnet.dtype
            i, o = self.rbm.input_dim, self.rbm.output_dim
            self._bufs = {"pos_vis": be.empty((rows, i), dt), "neg_vis": be.empty((rows, i), dt),
                          "pos_hid": be.empty((rows, o), dt), "hid_state": be.empty((rows, o), dt),
                          "neg_hid": be.empty((rows, o), dt),
                          "err_rows": be.empty(rows, np.float64)}  # per-frame squared error
            self._rows = rows
        return self._bufs

    # -- the unit functions -----------------------------------------------------------------
    def propagate(self, vis, out) -> None:
        """out = hidden probabilities (Rbm::Propagate)."""
        p, be = self.rbm.params, self.be
        be.gemm(vis, p["W"], out, trans_b=True)
        if self.rbm.hid_type == "bern":
            be.bias_sigmoid(out, p["hid_bias"], out)
        else:
            be.add_bias(out, p["hid_bias"])

    def reconstruct(self, hid, out) -> None:
        """out = visible probabilities (bern) or means (gauss) given hidden states."""
        p, be = self.rbm.params, self.be
        be.gemm(hid, p["W"], out)
        if self.rbm.vis_type == "bern":
            be.bias_sigmoid(out, p["vis_bias"], out)
        else:
            be.add_bias(out, p["vis_bias"])

    def sample_hidden(self, probs, out, uniforms: Optional[np.ndarray] = None) -> None:
        """Bernoulli states [p > u] (u from the generator unless given) or, for Gaussian hidden
        units, p + N(0, 1) noise (CuRand::BinarizeProbs / AddGaussNoise)."""
        be, dt = self.be, self.nnet.dtype
        shape = tuple(probs.shape)
        if self.rbm.hid_type == "bern":
            u = self.rng.random(shape, dtype=np.float32) if uniforms is None else uniforms
            if be.name != "cpu":  # into a buffer kept on the device, in u's own type
                key = f"uniform_{np.dtype(u.dtype).str}"
                if key not in self._bufs:
                    self._bufs[key] = be.empty(shape, np.dtype(u.dtype))
                be.copy(self._bufs[key], u)
                u = self._bufs[key]
            be.binarize(probs, u, out)
        else:
            noise = self.rng.standard_normal(shape, dtype=np.float32) if uniforms is None \
                else uniforms
            be.copy(out, probs)
            be.axpy(1.0, be.asarray(noise, dtype=dt), out)

    # -- one minibatch ----------------------------------------------------------------------
    def step(self, pos_vis_host: np.ndarray, uniforms: Optional[np.ndarray] = None) -> Cd1Result:
        """One CD-1 update from a host minibatch (N x I); returns the reconstruction MSE."""
        be, nnet = self.be, self.nnet
        rows = int(pos_vis_host.shape[0])
        b = self._buffers(rows)
        pos_vis = b["pos_vis"]
        be.copy(pos_vis, np.asarray(pos_vis_host, dtype=nnet.dtype))
        pos_hid, hid_state = b["pos_hid"], b["hid_state"]
        neg_vis, neg_hid = b["neg_vis"], b["neg_hid"]
        self.propagate(pos_vis, pos_hid)
        self.sample_hidden(pos_hid, hid_state, uniforms)
        self.reconstruct(hid_state, neg_vis)
        self.propagate(neg_vis, neg_hid)
        if be.name == "cpu":
            neg_host = neg_vis
            diff = neg_host.astype(np.float64) - np.asarray(pos_vis_host, dtype=np.float64)
            mse = 0.5 * float(np.einsum("ij,ij->", diff, diff))
        else:  # on a device: read back one float64 per frame, not the reconstruction
            err = b["err_rows"]
            be.sq_diff_rows(neg_vis, pos_vis, err)
            mse = 0.5 * float(be.to_host(err).sum())
            neg_host = be.to_host(neg_vis) if self.rbm.vis_type == "gauss" else None
        if not math.isfinite(mse):
            raise RbmError(f"'nan' or 'inf' in the reconstruction of a minibatch of {rows} frames "
                           "(need a lower learning rate, or a Gaussian input layer with "
                           "--learn-rate 0.01?); no model is written")
        guarded = False
        if self.rbm.vis_type == "gauss":
            guarded = self._guard(pos_vis_host, neg_host)
        if not guarded:
            self.update(pos_vis, pos_hid, neg_vis, neg_hid, rows)
        return Cd1Result(mse, rows, guarded)

    def _guard(self, pos_vis_host: np.ndarray, neg_vis_host: np.ndarray) -> bool:
        pos_std = std_all(pos_vis_host)
        neg_std = std_all(neg_vis_host)
        if not pos_std * 2 < neg_std:
            return False
        scale = pos_std / neg_std
        self.be.scale(self.nnet.params, scale)  # W, hid_bias and vis_bias: the whole buffer
        self.learn_rate *= 0.9
        self.be.fill(self.nnet.velocity, 0.0)
        self.log.warning("Mismatch between pos_vis and neg_vis variances, danger of weight "
                         "explosion. a) Reducing weights with scale %g b) Lowering learning rate "
                         "to %g [pos_vis_std:%g,neg_vis_std:%g]", scale, self.learn_rate,
                         pos_std, neg_std)
        return True

    def update(self, pos_vis, pos_hid, neg_vis, neg_hid, rows: int) -> None:
        """Rbm::RbmUpdate: the increments keep momentum, L2 goes into the increment."""
        be = self.be
        p, v = self.rbm.params, self.rbm.velocity
        lr, mmt = self.learn_rate, self.momentum
        lr_n = lr / float(rows)
        be.gemm(neg_hid, neg_vis, v["W"], trans_a=True, alpha=-lr_n, beta=mmt)
        be.gemm(pos_hid, pos_vis, v["W"], trans_a=True, alpha=lr_n, beta=1.0)
        if self.l2_penalty != 0.0:
            be.axpy(-lr * self.l2_penalty, p["W"], v["W"])
        be.axpy(1.0, v["W"], p["W"])
        be.sum_rows(neg_vis, v["vis_bias"], alpha=-lr_n, beta=mmt)
        be.sum_rows(pos_vis, v["vis_bias"], alpha=lr_n, beta=1.0)
        be.axpy(1.0, v["vis_bias"], p["vis_bias"])
        be.sum_rows(neg_hid, v["hid_bias"], alpha=-lr_n, beta=mmt)
        be.sum_rows(pos_hid, v["hid_bias"], alpha=lr_n, beta=1.0)
        be.axpy(1.0, v["hid_bias"], p["hid_bias"])
