"""MLLT (global semi-tied covariance) as Kaldi's gmm-acc-mllt / est-mllt (src/transform/mllt.cc),
the second half of steps/train_lda_mllt.sh.

Statistics (:class:`MlltStats`, Kaldi's MlltAccs): for every Gaussian m of the aligned pdf with
posterior γ (component posterior within the pdf times the frame's weight, randomly pruned below
``--rand-prune``, default 0.25 as Kaldi's), with o = μ_m - x::

    β += γ;   G_j += γ / σ²_mj · o oᵀ   for each dimension j

computed here per utterance as one GEMM per dimension over all kept (frame, Gaussian) pairs.

Update (Gales 1999, "Semi-tied covariance matrices", eq. 22, as MlltAccs::Update does it): the
transform A (start: the identity) maximises β log|det A| - ½ Σ_j a_jᵀ G_j a_j; each of 200
passes replaces every row in turn by a_j = G_j⁻¹ c_j sqrt(β / c_jᵀ G_j⁻¹ c_j), c_j the j-th row
of the cofactor matrix (A⁻ᵀ up to a factor). Each row step cannot lower the objective; a
decrease beyond rounding is an error, as in Kaldi. The log lines are Kaldi's.

Written here in numpy (float64); the pinned kaldi-hmm-gmm binds no MLLT.
"""
from __future__ import annotations

import logging
from typing import Optional

import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.feat.lda import rand_prune
from nnetmix.hmm.gauss_post import (PostCounts, entry_gauss_posteriors, natural_params,
                                    utterances_with_posts)
from nnetmix.hmm.gmm_tools import GmmModel, read_model
from nnetmix.kaldi import write_object
from nnetmix.kaldi.tokens import TokenReader, TokenWriter, add_objects, write_object_bytes

__all__ = ["MlltStats", "MlltError", "mllt_update", "acc_mllt", "est_mllt", "read_mllt_stats",
           "mllt_objective"]

logger = logging.getLogger(__name__)

NUM_ITERS = 200  #: MlltAccs::Update's passes over the rows


class MlltError(NnetmixError):
    """MLLT statistics that cannot be used (sizes that differ, no data, a bad file)."""


class MlltStats:
    """Kaldi's MlltAccs: the count β and one D x D matrix G_j per dimension (float64)."""

    def __init__(self, dim: int = 0):
        self.beta = 0.0
        self.G = np.zeros((dim, dim, dim))

    @property
    def dim(self) -> int:
        return int(self.G.shape[0])

    def accumulate(self, model: GmmModel, feats: np.ndarray, post: list, prune: float,
                   rng: np.random.Generator) -> tuple[float, float]:
        """Add one utterance (posteriors over transition-ids); returns (Σ weight·loglike, Σ
        weight), what gmm-acc-mllt's per-file line reports."""
        x = np.asarray(feats, dtype=np.float64)
        ep = entry_gauss_posteriors(model, x, post)
        if ep.frames.size == 0:
            return 0.0, 0.0
        means, inv_vars = _means_inv_vars(model)
        gamma = rand_prune(ep.gamma, prune, rng)
        keep = gamma != 0.0
        rows, gauss, gamma = ep.frames[ep.rows[keep]], ep.gauss[keep], gamma[keep]
        off = means[gauss] - x[rows]                       # (K, D)
        for j in range(self.dim):
            w = gamma * inv_vars[gauss, j]
            self.G[j] += (off * w[:, None]).T @ off
        self.beta += float(gamma.sum())
        return ep.tot_like, float(ep.weights.sum())

    # -- files --------------------------------------------------------------------------------
    def write(self, w: TokenWriter) -> None:
        w.token("<MlltAccs>")
        w.newline()
        w.float64(self.beta)
        w.int32(self.dim)
        w.token("<G>")
        w.newline()
        for j in range(self.dim):
            w.sp_matrix(self.G[j], double=True)
        w.token("</MlltAccs>")
        w.newline()

    def add_from(self, r: TokenReader) -> None:
        r.expect("<MlltAccs>")
        beta = r.float64("the MLLT count")
        dim = r.int32("the MLLT dimension")
        if self.dim and dim != self.dim:
            raise MlltError(f"{r.name}: MLLT statistics of dimension {dim}, the others have "
                            f"{self.dim}")
        if dim < 0:
            raise r.fail("bad MLLT statistics", f"dimension {dim}")
        if not self.dim:
            self.__init__(dim)
        r.expect("<G>")
        for j in range(dim):
            g = r.sp_matrix(f"G[{j}]")
            if g.shape != (dim, dim):
                raise r.fail(f"bad G[{j}]", f"shape {g.shape}, the header says {dim}")
            self.G[j] += g
        r.expect("</MlltAccs>")
        self.beta += beta


def _means_inv_vars(model: GmmModel) -> tuple[np.ndarray, np.ndarray]:
    miv, inv = natural_params(model)
    return miv / inv, inv


def mllt_objective(A: np.ndarray, beta: float, G: np.ndarray) -> float:
    """β log|det A| - ½ Σ_j a_jᵀ G_j a_j (the auxiliary function the update raises)."""
    return beta * np.linalg.slogdet(A)[1] - 0.5 * float(np.einsum("ja,jab,jb->", A, G, A))


def mllt_update(beta: float, G: np.ndarray, A: Optional[np.ndarray] = None,
                log: Optional[logging.Logger] = None) -> tuple[np.ndarray, float]:
    """MlltAccs::Update from A (default identity): (the new A, the total improvement)."""
    log = log or logger
    dim = G.shape[0]
    if beta < 10 * dim:
        if beta > 2 * dim:
            log.warning("Mllt:Update, very small count %s", _g(beta))
        else:
            log.warning("Mllt:Update, insufficient count %s", _g(beta))
    A = np.eye(dim) if A is None else np.array(A, dtype=np.float64)
    try:
        Ginv = np.linalg.inv(G)
    except np.linalg.LinAlgError:
        raise MlltError("an MLLT statistics matrix G_j is singular (too little data, or a "
                        "constant feature dimension)") from None
    total = 0.0
    for p in range(NUM_ITERS):
        for i in range(dim):
            cof = np.linalg.inv(A).T[i]
            row = A[i]
            before = beta * np.log(abs(row @ cof)) - 0.5 * row @ G[i] @ row
            gc = Ginv[i] @ cof
            A[i] = gc * np.sqrt(beta / (cof @ gc))
            row = A[i]
            after = beta * np.log(abs(row @ cof)) - 0.5 * row @ G[i] @ row
            if after < before - abs(before) * 1e-5:
                raise MlltError("Objective decrease in MLLT update.")
            total += after - before
        if p < 10 or p % 10 == 0:
            log.info("MLLT objective improvement per frame by %d'th iteration is %s per frame "
                     "over %s frames.", p, _g(total / beta), _g(beta))
    return A, total


def _g(x: float) -> str:
    return "{:.6g}".format(float(x))


def read_mllt_stats(paths: list) -> MlltStats:
    stats = MlltStats()
    add_objects(paths, stats)
    return stats


def acc_mllt(model_in: str, feats_rspecifier: str, post_rspecifier: str, acc_out: str,
             prune: float = 0.25, binary: bool = True, seed: int = 0,
             log: Optional[logging.Logger] = None) -> int:
    """Kaldi's gmm-acc-mllt; returns the number of utterances done (0: nothing written)."""
    log = log or logger
    model = read_model(model_in)
    stats = MlltStats(model.dim)
    rng = np.random.default_rng(seed)
    counts = PostCounts()
    tot_like = tot_t = 0.0
    for key, feats, post in utterances_with_posts(model, feats_rspecifier, post_rspecifier,
                                                  counts, log=log):
        like, weight = stats.accumulate(model, feats, post, prune, rng)
        log.info("Average like for this file is %s over %s frames.",
                 _g(like / weight if weight else 0.0), _g(weight))
        tot_like += like
        tot_t += weight
        if counts.done % 10 == 0:
            log.info("Avg like per frame so far is %s", _g(tot_like / tot_t))
    done = counts.done
    log.info("Done %d files, %d with no posteriors, %d with other errors.", done,
             counts.no_post, counts.other)
    if done == 0:
        raise MlltError(f"no utterance of {feats_rspecifier} had posteriors in "
                        f"{post_rspecifier}: no statistics written")
    log.info("Overall avg like per frame (Gaussian only) = %s over %s frames.",
             _g(tot_like / tot_t), _g(tot_t))
    w = TokenWriter(binary, acc_out)
    stats.write(w)
    write_object_bytes(acc_out, w.getvalue(), binary)
    log.info("Written accs.")
    return done


def est_mllt(mat_out: str, acc_files: list, binary: bool = False,
             log: Optional[logging.Logger] = None) -> np.ndarray:
    """Kaldi's est-mllt (text output by default, as Kaldi's): the MLLT matrix from the
    identity."""
    log = log or logger
    stats = read_mllt_stats(acc_files)
    if stats.dim == 0:
        raise MlltError("no MLLT statistics were read")
    A, impr = mllt_update(stats.beta, stats.G, log=log)
    sign, logdet = np.linalg.slogdet(A.astype(np.float32).astype(np.float64))
    log.info("Updated MLLT, total objf impr is %s over %s frames, logdet is %s",
             _g(impr / stats.beta), _g(stats.beta), _g(logdet if sign != 0 else -np.inf))
    write_object(mat_out, A.astype(np.float32), "mat", binary)
    return A
