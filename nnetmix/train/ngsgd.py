"""Online natural-gradient SGD (NG-SGD) for <AffineTransform> layers.

The algorithm of Povey, Zhang, Khudanpur, "Parallel training of DNNs with natural gradient and
parameter averaging" (2014, arXiv 1410.7455; §4 and appendix C), as Kaldi's nnet2
``OnlinePreconditioner`` / nnet3 ``OnlineNaturalGradient`` run it, written from the paper and
the description in those files (no code copied). Seed 001 §4 and Table 6: NG-SGD is what makes
parameter averaging across workers work.

For one affine layer with input rows x_i (with a 1 appended for the bias) and output
derivatives g_i, the nnet1 gradient is Σ_i g_i^T x_i. NG-SGD multiplies it by the inverses of two
Fisher matrices, F_in (of the x_i) and F_out (of the g_i), by preconditioning every ROW of both
sides before the product: x̂_i = x_i F_in^-1, ĝ_i = g_i F_out^-1, gradient Σ_i ĝ_i^T x̂_i. Each
Fisher matrix is approximated as a rank-R part plus a scaled identity::

    F_t = R_t^T D_t R_t + rho_t I        (R_t: R x dim, orthonormal rows; D_t diagonal)

smoothed towards the identity (alpha · trace/dim added to the diagonal), so with
beta = rho (1 + alpha) + alpha · tr(D)/dim and e_j = d_j / (d_j + beta), Woodbury gives::

    X F^-1  ∝  X̂ = X - (X R^T) diag(e) R            O(N · dim · R), two GEMMs

and X̂ is rescaled by gamma = |X|_F / |X̂|_F so only the direction changes. The minibatch is
preconditioned with F_t from BEFORE it (the gradient must not be correlated with its own
preconditioner). Every ``update_period`` minibatches (and each of the first 10), F is updated
online with the minibatch's scatter S = X^T X / N and the forgetting factor
eta = 1 - exp(-N / num_samples_history), by one step of subspace (power) iteration::

    Y   = R_t F_{t+1} = (eta/N) (X R^T)^T X + (1 - eta) (D_t + rho_t I) R_t     (R x dim)
    Z   = Y Y^T = U C U^T                           (R x R, eigendecomposed on the host)
    R_{t+1} = C^-1/2 U^T Y ;  D_{t+1} = C^1/2 - rho_{t+1}
    rho_{t+1} = (tr F_{t+1} - tr C^1/2) / (dim - R)          (the trace is kept)

with Kaldi's floors (epsilon 1e-10, delta 5e-4 · max eigenvalue). The first minibatch
initialises the subspace from a seeded random orthonormal start by 3 such iterations, as
Kaldi's Init does. The max-change-per-sample limit is nnet2's: the layer's update is scaled
down when lr · Σ_i |x̂_i| |ĝ_i| exceeds max_change_per_sample · N.

Use::

    ng = setup_optimizer(nnet, OptimizerOptions(optimizer="ngsgd"), state_in="nnet.ngsgd.npz")
    train_epoch(nnet, ...)          # Nnet.backpropagate/update call the hook
    ng.save("nnet.iter1.ngsgd.npz")
"""
from __future__ import annotations

import json
import math
import os
from typing import Optional

import numpy as np

from nnetmix.nnet import AffineTransform, Nnet, NnetTrainOptions
from nnetmix.kernels.ngsgd_cpu import ngsgd_ops
from nnetmix.train.options import OptimizerOptions, TrainError
from nnetmix.utils.state import Array, check_arrays, parse_json, read_npz, write_npz

__all__ = ["OnlineNaturalGradient", "NaturalGradient", "NgsgdError", "setup_optimizer",
           "state_path", "STATE_SUFFIX"]

STATE_SUFFIX = ".ngsgd.npz"
_STATE_VERSION = 1
_EPSILON = 1e-10   # Kaldi's epsilon_: floor of rho and of the eigenvalues
_DELTA = 5e-4      # Kaldi's delta_: floor relative to the largest eigenvalue
_INIT_ITERS = 3    # Kaldi's Init: iterations on the first minibatch
_EAGER_UPDATES = 10  # update the subspace on every one of the first minibatches
#: the arrays of one side of one layer in a state file (R has 0 rows before the first update)
_LAYER_SPEC = {"R": Array("f", (None, None)), "d": Array("f", (None,)), "rho": Array("f"),
               "t": Array("iu")}
_FIX = "remove it to start with a fresh Fisher estimate"


class NgsgdError(TrainError):
    """An NG-SGD state that does not fit the network or the options."""


class OnlineNaturalGradient:
    """The low-rank-plus-identity Fisher estimate of one side of one layer (rows of dim values).

    ``precondition(be, ops, X, rows)`` replaces X (N x dim, C-contiguous, on backend ``be``) in
    place by X̂ ∝ X F^-1, fills ``rows`` (host float64, N) with the squared row norms of X̂ and
    returns gamma = |X|/|X̂|: gamma · X̂ has X's Frobenius norm.
    """

    def __init__(self, dim: int, rank: int, update_period: int = 4,
                 num_samples_history: float = 2000.0, alpha: float = 4.0, seed: int = 777):
        self.dim = int(dim)
        self.rank = max(0, min(int(rank), self.dim - 1))  # rho needs dim - rank > 0
        self.update_period = int(update_period)
        self.num_samples_history = float(num_samples_history)
        self.alpha = float(alpha)
        self.seed = int(seed)
        self.R = None                      # backend array (rank, dim); None before the first call
        self.d = np.zeros(self.rank)       # host float64
        self.rho = 0.0
        self.t = 0                         # minibatches seen
        self._be = None
        self._scratch: dict = {}
        self._e_version = 0          # bumped whenever d or rho change (the device copy of e)
        self._e_dev_version = -1

    # -- storage ------------------------------------------------------------------------------
    def _buf(self, name: str, shape: tuple, dtype):
        key = (name, np.dtype(dtype))
        buf = self._scratch.get(key)
        if buf is None or tuple(buf.shape) != tuple(shape):
            buf = self._be.empty(shape, dtype=dtype)
            self._scratch[key] = buf
        return buf

    def _bind(self, be, dtype) -> None:
        """Keep R on ``be`` in ``dtype`` (moved through the host if the network moved)."""
        dtype = np.dtype(dtype)
        if self._be is be and (self.R is None or np.dtype(self.R.dtype) == dtype):
            return
        host = self._host_R()
        self._be, self._scratch = be, {}
        if host is not None:
            self.R = be.asarray(host, dtype=dtype)

    def _host_R(self) -> Optional[np.ndarray]:
        if self.R is None:
            return None
        return np.array(self.R) if self._be is None else self._be.to_host(self.R)

    def state(self, prefix: str) -> dict[str, np.ndarray]:
        R = self._host_R()
        if R is None:
            R = np.zeros((0, self.dim), np.float32)
        return {f"{prefix}.R": R, f"{prefix}.d": np.asarray(self.d, np.float64),
                f"{prefix}.rho": np.float64(self.rho), f"{prefix}.t": np.int64(self.t)}

    def load_state(self, arrays, prefix: str, where: str) -> None:
        """Restore from ``state``'s arrays; R is uploaded to the backend on the next call."""
        R = np.asarray(arrays[f"{prefix}.R"])
        self._be, self._scratch = None, {}
        if R.shape[0] == 0:
            self.R, self.t, self.rho, self.d = None, 0, 0.0, np.zeros(self.rank)
            return
        d = np.array(arrays[f"{prefix}.d"], dtype=np.float64)
        if R.shape != (self.rank, self.dim) or d.shape != (self.rank,):
            raise NgsgdError(f"{where}: NG-SGD state {prefix} has a subspace of shape {R.shape}, "
                             f"the network and options need ({self.rank}, {self.dim}) (other "
                             "--ngsgd-rank-in/--ngsgd-rank-out? delete the file to start afresh)")
        self.R, self.d = R.copy(), d
        self.rho = float(arrays[f"{prefix}.rho"])
        self.t = int(arrays[f"{prefix}.t"])
        self._e_version += 1

    # -- the algorithm ------------------------------------------------------------------------
    def eta(self, n: int) -> float:
        return 1.0 - math.exp(-n / self.num_samples_history)

    def updating(self) -> bool:
        return self.t < _EAGER_UPDATES or self.t % self.update_period == 0

    def stays_on_device(self, ops) -> bool:
        """True when this minibatch can be preconditioned without reading anything back: a
        device backend, and no update of the Fisher estimate due (or rank 0)."""
        return bool(getattr(ops, "device", False)) and (
            self.rank == 0 or (self.R is not None and not self.updating()))

    def before_replay(self, be, dtype) -> None:
        """Bring the device copy of e up to date (after an update), outside any capture."""
        if self.rank > 0 and self.R is not None:
            self._e_on_device(be, dtype)

    def after_replay(self) -> None:
        """What precondition_on_device does on the host, for a replayed step: count it."""
        if self.rank > 0 and self.R is not None:
            self.t += 1

    def _e_on_device(self, be, dtype):
        """e = d / (d + beta) as a device array, uploaded again only after d or rho changed."""
        buf = self._buf("e", (self.rank,), dtype)
        if self._e_dev_version != self._e_version:
            beta = self.rho * (1.0 + self.alpha) + self.alpha * float(self.d.sum()) / self.dim
            be.copy(buf, np.asarray(self.d / (self.d + beta), dtype=dtype))
            self._e_dev_version = self._e_version
        return buf

    def precondition_on_device(self, be, ops, X):
        """precondition() for a minibatch where stays_on_device(): the same X̂ in place, with
        gamma and the rows' squared norms left on the device; returns (gamma, rows), a float64
        array of one element and one of N."""
        n = int(X.shape[0])
        if int(X.shape[1]) != self.dim:
            raise NgsgdError(f"ngsgd: rows of dim {X.shape[1]} given to a preconditioner of dim "
                             f"{self.dim}")
        self._bind(be, X.dtype)
        before = self._buf("rows", (n,), np.float64)
        gamma = self._buf("gamma", (1,), np.float64)
        ops.row_sqnorms(X, before)
        if self.rank == 0:
            ops.gamma(before, before, gamma)  # sqrt(xx / xx) = 1, or 1 for xx = 0
            return gamma, before
        H = self._buf("H", (n, self.rank), X.dtype)
        be.gemm(X, self.R, H, trans_b=True)                       # H = X R^T
        ops.scale_cols(H, self._e_on_device(be, X.dtype))         # H E
        be.gemm(H, self.R, X, alpha=-1.0, beta=1.0)               # X̂ = X - H E R
        self.t += 1  # the host path skips an all-zero minibatch here; X̂ = X = 0 is the same
        after = self._buf("rows_after", (n,), np.float64)
        ops.row_sqnorms(X, after)
        ops.gamma(before, after, gamma)
        return gamma, after

    def precondition(self, be, ops, X, rows: np.ndarray) -> float:
        n, dim = int(X.shape[0]), int(X.shape[1])
        if dim != self.dim:
            raise NgsgdError(f"ngsgd: rows of dim {dim} given to a preconditioner of dim {self.dim}")
        self._bind(be, X.dtype)
        rbuf = self._buf("rows", (n,), np.float64)
        ops.row_sqnorms(X, rbuf)
        xx = float(ops.host(rbuf).sum())
        if self.rank == 0 or n == 0 or not xx > 0.0 or not math.isfinite(xx):
            rows[:n] = ops.host(rbuf)
            return 1.0
        if self.R is None:
            self._init(be, ops, X, xx)
        H = self._buf("H", (n, self.rank), X.dtype)
        be.gemm(X, self.R, H, trans_b=True)                       # H = X R^T
        upd = self.updating()
        if upd:
            Y = self._update_start(be, ops, X, H, xx)
        beta = self.rho * (1.0 + self.alpha) + self.alpha * float(self.d.sum()) / dim
        e = self.d / (self.d + beta)
        ops.scale_cols(H, be.asarray(e, dtype=X.dtype))           # H E
        be.gemm(H, self.R, X, alpha=-1.0, beta=1.0)               # X̂ = X - H E R
        if upd:
            self._update_finish(be, Y, n, xx)
        self.t += 1
        ops.row_sqnorms(X, rbuf)
        rows[:n] = ops.host(rbuf)
        xh = float(rows[:n].sum())
        return math.sqrt(xx / xh) if xh > 0.0 and math.isfinite(xh) else 1.0

    def _init(self, be, ops, X, xx: float) -> None:
        """Kaldi's Init: random orthonormal start, rho = d = epsilon, then a few subspace
        iterations on the first minibatch (one when it has no more rows than the rank)."""
        rng = np.random.default_rng(self.seed)
        q, _ = np.linalg.qr(rng.standard_normal((self.dim, self.rank)))
        self.R = be.asarray(np.ascontiguousarray(q.T), dtype=X.dtype)
        self.d = np.full(self.rank, _EPSILON)
        self.rho = _EPSILON
        self._e_version += 1
        n = int(X.shape[0])
        H = self._buf("H", (n, self.rank), X.dtype)
        for _ in range(1 if n <= self.rank else _INIT_ITERS):
            be.gemm(X, self.R, H, trans_b=True)
            self._update_finish(be, self._update_start(be, ops, X, H, xx), n, xx)

    def _update_start(self, be, ops, X, H, xx: float):
        """Y = R_t F_{t+1} (uses H = X R^T before it is scaled, and X before it changes)."""
        n = int(X.shape[0])
        eta = self.eta(n)
        Y = self._buf("Y", (self.rank, self.dim), X.dtype)
        ops.scale_rows(self.R, be.asarray((1.0 - eta) * (self.d + self.rho), dtype=X.dtype), Y)
        be.gemm(H, X, Y, trans_a=True, alpha=eta / n, beta=1.0)
        return Y

    def _update_finish(self, be, Y, n: int, xx: float) -> None:
        """R, D, rho of F_{t+1} from Y = R_t F_{t+1} (xx = |X|_F^2 of the minibatch)."""
        eta = self.eta(n)
        dt = Y.dtype
        r, dim = self.rank, self.dim
        Z = self._buf("Z", (r, r), dt)
        be.gemm(Y, Y, Z, trans_b=True)
        Zh = np.asarray(be.to_host(Z), dtype=np.float64)
        c, U = np.linalg.eigh(0.5 * (Zh + Zh.T))
        c, U = c[::-1], U[:, ::-1]
        if not (np.all(np.isfinite(c)) and c[0] > 0.0):
            return  # a degenerate minibatch (all rows parallel to nothing): keep the old estimate
        c = np.maximum(c, max(_EPSILON * _EPSILON, c[0] * 1e-12))
        sqrt_c = np.sqrt(c)
        trace = eta / n * xx + (1.0 - eta) * (dim * self.rho + float(self.d.sum()))
        rho = (trace - float(sqrt_c.sum())) / (dim - r)
        floor = max(_EPSILON, _DELTA * float(sqrt_c[0]))
        rho = max(rho, floor)
        d = np.maximum(sqrt_c - rho, floor)
        M = np.ascontiguousarray((U / sqrt_c[None, :]).T)          # C^-1/2 U^T
        Rn = self._buf("Rnew", (r, dim), dt)
        be.gemm(be.asarray(M, dtype=dt), Y, Rn)
        self._reorthogonalize(be, Rn)
        be.copy(self.R, Rn)  # in place: a recorded step (CUDA graph) holds R's address
        self.rho, self.d = float(rho), d
        self._e_version += 1

    def _reorthogonalize(self, be, Rn) -> None:
        """Rows of R drift from orthonormal in float32 when C is badly conditioned; restore
        them (R <- L^-1 R, L L^T = R R^T) when off by more than 1e-3, as Kaldi does."""
        r = self.rank
        G = self._buf("G", (r, r), Rn.dtype)
        be.gemm(Rn, Rn, G, trans_b=True)
        Gh = np.asarray(be.to_host(G), dtype=np.float64)
        if np.max(np.abs(Gh - np.eye(r))) <= 1e-3:
            return
        try:
            L = np.linalg.cholesky(0.5 * (Gh + Gh.T))
            Li = np.linalg.inv(L)
        except np.linalg.LinAlgError:  # rank-deficient: rebuild through an eigendecomposition
            w, V = np.linalg.eigh(0.5 * (Gh + Gh.T))
            Li = (V / np.sqrt(np.maximum(w, 1e-12))[None, :]).T
        tmp = self._buf("Rtmp", (r, self.dim), Rn.dtype)
        be.copy(tmp, Rn)
        be.gemm(be.asarray(np.ascontiguousarray(Li), dtype=Rn.dtype), tmp, Rn)


class _Layer:
    """The two preconditioners of one affine layer and its last change norm."""

    def __init__(self, inp: OnlineNaturalGradient, out: OnlineNaturalGradient):
        self.inp, self.out = inp, out
        self.change_norm = 0.0
        #: device scalars (float64, one element each) of a minibatch kept on the device:
        #: change norm, max-change factor, and how many updates were limited
        self.dev: Optional[dict] = None
        self.on_device = False

    def device_scalars(self, be) -> dict:
        if self.dev is None or self.dev["be"] is not be:
            self.dev = {"be": be, "change": be.zeros(1, dtype=np.float64),
                        "factor": be.zeros(1, dtype=np.float64),
                        "limited": be.zeros(1, dtype=np.float64)}
        return self.dev


class NaturalGradient:
    """NG-SGD for every <AffineTransform> of a network: the hook Nnet.backpropagate and
    Nnet.update call (``accumulate_gradient`` and ``before_update``), and its checkpoint."""

    def __init__(self, nnet: Nnet, opts: OptimizerOptions, seed: int = 777):
        opts.check()
        self.opts = opts
        #: the MPI ranks of the run, recorded in the saved state (None: one worker, not recorded;
        #: nnetmix.parallel.elastic reads it back)
        self.num_ranks: Optional[int] = None
        self.layers: dict[int, _Layer] = {}
        self.dims: dict[int, tuple[int, int]] = {}
        for i, c in enumerate(nnet.components):
            if isinstance(c, AffineTransform):
                self.dims[i] = (c.input_dim, c.output_dim)
                kw = dict(update_period=opts.ngsgd_update_period,
                          num_samples_history=opts.ngsgd_num_samples_history,
                          alpha=opts.ngsgd_alpha)
                self.layers[i] = _Layer(
                    OnlineNaturalGradient(c.input_dim + 1, opts.ngsgd_rank_in, seed=seed + 2 * i, **kw),
                    OnlineNaturalGradient(c.output_dim, opts.ngsgd_rank_out, seed=seed + 2 * i + 1, **kw))
        self._limited_host = 0      # updates scaled down by max-change-per-sample, host path
        self._one_dev = None
        self._flat: dict = {}
        self._ops = None
        self._ops_be = None

    def attach(self, nnet: Nnet) -> "NaturalGradient":
        nnet.preconditioner = self
        return self

    @staticmethod
    def detach(nnet: Nnet) -> None:
        nnet.preconditioner = None

    # -- the hook -----------------------------------------------------------------------------
    def _scratch(self, be, name: str, rows: int, cols: int, dtype):
        """A (rows, cols) C-contiguous view of one flat buffer shared by every layer."""
        key = (name, np.dtype(dtype))
        buf = self._flat.get(key)
        if buf is None or buf.size < rows * cols:
            buf = be.empty((max(1, rows * cols),), dtype=dtype)
            self._flat[key] = buf
        return buf[: rows * cols].reshape(rows, cols)

    def accumulate_gradient(self, be, index: int, comp, x, dy) -> bool:
        """Write the preconditioned gradient of layer ``index`` into ``comp.grads``; False when
        the layer is not preconditioned (the caller then does the plain nnet1 gradient)."""
        layer = self.layers.get(index)
        if layer is None:
            return False
        if self._ops_be is not be:
            self._flat, self._ops, self._ops_be = {}, ngsgd_ops(be), be
        ops = self._ops
        n, din = int(x.shape[0]), int(x.shape[1])
        dout = int(dy.shape[1])
        xa = self._scratch(be, "in", n, din + 1, x.dtype)
        g = self._scratch(be, "out", n, dout, x.dtype)
        ops.append_ones(x, xa)
        be.copy(g, dy)
        layer.on_device = layer.inp.stays_on_device(ops) and layer.out.stays_on_device(ops)
        if layer.on_device:
            gin, rin_d = layer.inp.precondition_on_device(be, ops, xa)
            gout, rout_d = layer.out.precondition_on_device(be, ops, g)
            ops.scale_by(g, gin, gout)
            be.gemm(g, ops.cols(xa, 0, din), comp.grads["W"], trans_a=True)
            be.gemm(g, ops.cols(xa, din, din + 1), comp.grads["b"].reshape(dout, 1), trans_a=True)
            if self.opts.max_change_per_sample > 0.0:
                ops.change_norm(gin, gout, rin_d, rout_d, layer.device_scalars(be)["change"])
            return True
        rin, rout = np.empty(n), np.empty(n)
        gamma = layer.inp.precondition(be, ops, xa, rin) * layer.out.precondition(be, ops, g, rout)
        if gamma != 1.0:
            be.scale(g, gamma)
        be.gemm(g, ops.cols(xa, 0, din), comp.grads["W"], trans_a=True)
        be.gemm(g, ops.cols(xa, din, din + 1), comp.grads["b"].reshape(dout, 1), trans_a=True)
        if self.opts.max_change_per_sample > 0.0:
            layer.change_norm = gamma * float(np.sqrt(rin * rout).sum())
        return True

    def before_update(self, be, index: int, comp, opts: NnetTrainOptions, num_frames: int) -> None:
        """nnet2's max-change-per-sample: scale the layer's gradient down when
        lr · Σ_i |x̂_i| |ĝ_i| > max_change_per_sample · N."""
        layer = self.layers.get(index)
        limit = self.opts.max_change_per_sample
        if layer is None or limit <= 0.0:
            return
        if layer.on_device:
            dev = layer.device_scalars(be)
            self._ops.max_change(dev["change"], opts.learn_rate * float(comp.learn_rate_coef),
                                 limit * num_frames, dev["factor"], dev["limited"])
            self._ops.scale_by(comp.grads["W"], dev["factor"], self._one(be))
            self._ops.scale_by(comp.grads["b"], dev["factor"], self._one(be))
            return
        change = opts.learn_rate * float(comp.learn_rate_coef) * layer.change_norm
        allowed = limit * num_frames
        if change > allowed:
            f = allowed / change
            be.scale(comp.grads["W"], f)
            be.scale(comp.grads["b"], f)
            self._limited_host += 1

    # -- recorded steps (CUDA graphs, see Backend.capture) ---------------------------------------
    def capturable(self, be) -> bool:
        """True when the coming minibatch updates no Fisher estimate on any layer, so its
        whole NG-SGD step stays on the device and can be recorded or replayed."""
        if self._ops_be is not be:
            return False  # not run on this backend yet: the first step runs eagerly
        return all(l.inp.stays_on_device(self._ops) and l.out.stays_on_device(self._ops)
                   for l in self.layers.values())

    def before_replay(self, be, dtype) -> None:
        for l in self.layers.values():
            l.inp.before_replay(be, dtype)
            l.out.before_replay(be, dtype)

    def after_replay(self) -> None:
        for l in self.layers.values():
            l.inp.after_replay()
            l.out.after_replay()

    def _one(self, be):
        """A device 1.0 (float64), the second factor of scale_by."""
        if self._one_dev is None or self._one_dev[0] is not be:
            one = be.empty(1, dtype=np.float64)
            be.fill(one, 1.0)
            self._one_dev = (be, one)
        return self._one_dev[1]

    @property
    def num_limited(self) -> int:
        """Updates scaled down by max-change-per-sample (device counts read back here)."""
        dev = sum(int(round(float(l.dev["be"].to_host(l.dev["limited"])[0])))
                  for l in self.layers.values() if l.dev is not None)
        return self._limited_host + dev

    # -- checkpoint ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        meta = {"version": _STATE_VERSION, "dims": {str(i): d for i, d in self.dims.items()},
                "ranks": {str(i): [l.inp.rank, l.out.rank] for i, l in self.layers.items()},
                "options": {k: getattr(self.opts, k) for k in (
                    "ngsgd_rank_in", "ngsgd_rank_out", "ngsgd_update_period",
                    "ngsgd_num_samples_history", "ngsgd_alpha", "max_change_per_sample")}}
        if self.num_ranks is not None:
            meta["num_ranks"] = int(self.num_ranks)
        out = {"meta": np.array(json.dumps(meta, sort_keys=True))}
        for i, l in self.layers.items():
            out.update(l.inp.state(f"c{i}.in"))
            out.update(l.out.state(f"c{i}.out"))
        return out

    def load_state_dict(self, arrays, where: str = "NG-SGD state") -> None:
        """Restore from arrays read by :func:`nnetmix.utils.state.read_npz` (checked here
        against this network: its layers from the metadata, then each array's kind)."""
        meta = parse_json(str(arrays["meta"]), {"version": int, "dims": dict}, where,
                          "NG-SGD state metadata", _FIX)
        try:
            dims = {int(k): tuple(int(x) for x in v) for k, v in meta["dims"].items()}
        except (TypeError, ValueError):
            raise NgsgdError(f"{where}: NG-SGD state metadata: field 'dims' is "
                             f"{json.dumps(meta['dims'])}, expected {{component: [in, out]}} "
                             f"({_FIX})") from None
        if dims != self.dims:
            raise NgsgdError(f"{where}: NG-SGD state is for affine layers {dims} (component: "
                             f"(in, out)), the network has {self.dims} (a state of another model?)")
        check_arrays(arrays, {f"c{i}.{side}.{name}": spec for i in self.layers
                              for side in ("in", "out") for name, spec in _LAYER_SPEC.items()},
                     where, "NG-SGD state", _FIX)
        for i, l in self.layers.items():
            l.inp.load_state(arrays, f"c{i}.in", where)
            l.out.load_state(arrays, f"c{i}.out", where)

    def save(self, path: str) -> None:
        """Write the state atomically (temporary file renamed into place)."""
        write_npz(path, self.state_dict())

    def load(self, path: str) -> None:
        self.load_state_dict(read_npz(path, "NG-SGD state", {"meta": Array("U")}, _FIX),
                             where=path)


def state_path(model_path: str) -> str:
    """Where the NG-SGD state of a model file lives: next to it, ``<model>.ngsgd.npz``."""
    return model_path + STATE_SUFFIX


def setup_optimizer(nnet: Nnet, opts: OptimizerOptions, state_in: str = "", seed: int = 777,
                    log=None) -> Optional[NaturalGradient]:
    """Attach the update rule of ``opts`` to ``nnet``: None for sgd (plain nnet1 update, the
    network's hook cleared), else a NaturalGradient, loaded from ``state_in`` when that file
    exists (a fresh estimate starts on the first minibatch otherwise)."""
    opts.check()
    if opts.optimizer == "sgd":
        NaturalGradient.detach(nnet)
        return None
    ng = NaturalGradient(nnet, opts, seed=seed)
    if state_in and os.path.isfile(state_in):
        ng.load(state_in)
        if log is not None:
            log.info("NG-SGD state read from %s", state_in)
    elif log is not None:
        log.info("NG-SGD starts a fresh Fisher estimate (no state%s)",
                 f" at {state_in}" if state_in else "")
    return ng.attach(nnet)
