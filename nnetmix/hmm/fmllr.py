"""fMLLR (constrained MLLR, a per-speaker affine feature transform) as Kaldi's gmm-est-fmllr and
gmm-est-fmllr-gpost (src/transform/fmllr-diag-gmm.cc): the speaker-adaptive half of
steps/train_sat.sh, align_fmllr.sh and decode_fmllr.sh.

The transform W = [A b] (d x (d+1)) maps a feature x to A x + b. Statistics
(:class:`FmllrStats`, Kaldi's FmllrDiagGmmAccs / AffineXformStats), with x⁺ = [x; 1] and γ the
Gaussian-level posterior of Gaussian m at frame t::

    β += γ;   K += γ μ_m/σ²_m x⁺ᵀ;   G_i += γ/σ²_mi x⁺ x⁺ᵀ   (each dimension i)

Per utterance the per-frame sums a_t = Σ γ μ/σ², b_t = Σ γ/σ² are one sparse-by-dense product,
K one GEMM, and all G_i together one GEMM of bᵀ against the frames' flattened x⁺x⁺ᵀ.

The auxiliary function is β log|det A| + tr(W Kᵀ) - ½ Σ_i w_iᵀ G_i w_i. Updates
(``--fmllr-update-type``):

* ``full``: Gales's row-by-row update, ``--fmllr-num-iters`` (40) passes from the identity; row
  i becomes G_i⁻¹(α c_i + k_i), c_i the i-th row of A⁻ᵀ (the cofactor row up to a scale) with a
  0 appended, α the root of β/(α e1 + e2) = α e1 with the higher auxiliary function
  (e1 = c_iᵀG_i⁻¹c_i, e2 = c_iᵀG_i⁻¹k_i). Each row step maximises the function over that row,
  so it never decreases; if the total nevertheless falls (rounding), the identity is kept with
  Kaldi's warning.
* ``diag``: a scale s and offset o per dimension, the closed form (positive root of
  a s² + b s + β = 0).
* ``offset``: b only, o_i = (k_i,d - G_i[i, d]) / G_i[d, d].
* ``none``: the identity.

A speaker (or utterance) whose count β is not above ``--fmllr-min-count`` (500) keeps the
identity with a warning that names it. Log lines are Kaldi's. Written here in numpy (float64);
the pinned kaldi-hmm-gmm binds no fMLLR.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.sparse

from nnetmix.errors import NnetmixError
from nnetmix.feat.pipeline import open_features
from nnetmix.feat.textio import read_token_table
from nnetmix.hmm.gauss_post import (PostCounts, entry_gauss_posteriors, flatten_gpost,
                                    natural_params, utterances_with_posts)
from nnetmix.hmm.gmm_tools import GmmModel, check_feat_dim, read_model
from nnetmix.kaldi.table import RandomAccessReader
from nnetmix.kaldi.writer import TableWriter
from nnetmix.options import option

__all__ = ["FmllrOptions", "FmllrStats", "FmllrError", "fmllr_auxf", "fmllr_update_full",
           "fmllr_update_diag", "fmllr_update_offset", "compute_fmllr", "est_fmllr",
           "UPDATE_TYPES"]

logger = logging.getLogger(__name__)

UPDATE_TYPES = ("full", "diag", "offset", "none")
_CHUNK = 1024  #: frames per GEMM for G (bounds the frames' x⁺x⁺ᵀ block to CHUNK·(d+1)² doubles)


class FmllrError(NnetmixError):
    """fMLLR that cannot be estimated (unknown update type, singular statistics, no data)."""


@dataclass
class FmllrOptions:
    """Kaldi's FmllrOptions, under their command-line names."""

    fmllr_update_type: str = option("full", "Update type for fMLLR "
                                    "(\"full\"|\"diag\"|\"offset\"|\"none\")")
    fmllr_min_count: float = option(500.0, "Minimum count required to update fMLLR")
    fmllr_num_iters: int = option(40, "Number of iterations in fMLLR update phase.")

    def check(self) -> None:
        if self.fmllr_update_type not in UPDATE_TYPES:
            raise FmllrError(f"Unknown fMLLR update type {self.fmllr_update_type}, "
                             'fmllr-update-type must be one of "full"|"diag"|"offset"|"none"')
        if self.fmllr_num_iters < 0:
            raise FmllrError(f"--fmllr-num-iters={self.fmllr_num_iters}: expected >= 0")


class FmllrStats:
    """Kaldi's FmllrDiagGmmAccs: β, K (d x d+1) and G_i (d+1 x d+1) for each dimension i."""

    def __init__(self, dim: int):
        self.beta = 0.0
        self.K = np.zeros((dim, dim + 1))
        self.G = np.zeros((dim, dim + 1, dim + 1))

    @property
    def dim(self) -> int:
        return int(self.K.shape[0])

    def accumulate(self, feats: np.ndarray, frames: np.ndarray, gauss: np.ndarray,
                   gamma: np.ndarray, means_invvars: np.ndarray, inv_vars: np.ndarray) -> None:
        """Add γ[k] of Gaussian gauss[k] at frame frames[k] of ``feats`` (rows of the stacked
        ``means_invvars`` / ``inv_vars``)."""
        x = np.asarray(feats, dtype=np.float64)
        n = x.shape[0]
        if gamma.size == 0 or n == 0:
            return
        post = scipy.sparse.csr_matrix((gamma, (frames, gauss)),
                                       shape=(n, means_invvars.shape[0]))
        a = np.asarray(post @ means_invvars)         # (T, d): Σ γ μ/σ² per frame
        b = np.asarray(post @ inv_vars)              # (T, d): Σ γ / σ² per frame
        xp = np.hstack([x, np.ones((n, 1))])
        self.beta += float(gamma.sum())
        self.K += a.T @ xp
        d1 = self.dim + 1
        flat = self.G.reshape(self.dim, d1 * d1)
        for lo in range(0, n, _CHUNK):
            xs = xp[lo:lo + _CHUNK]
            outer = (xs[:, :, None] * xs[:, None, :]).reshape(xs.shape[0], d1 * d1)
            flat += b[lo:lo + _CHUNK].T @ outer


def fmllr_auxf(W: np.ndarray, stats: FmllrStats) -> float:
    """FmllrAuxFuncDiagGmm: β log|det A| + tr(W Kᵀ) - ½ Σ_i w_iᵀ G_i w_i."""
    W = np.asarray(W, dtype=np.float64)
    d = stats.dim
    quad = np.einsum("ia,iab,ib->", W, stats.G, W)
    return float(stats.beta * np.linalg.slogdet(W[:, :d])[1] + np.sum(W * stats.K) - 0.5 * quad)


def fmllr_update_full(W: np.ndarray, stats: FmllrStats, num_iters: int,
                      trace: Optional[list] = None, log: Optional[logging.Logger] = None
                      ) -> tuple[np.ndarray, float]:
    """ComputeFmllrMatrixDiagGmmFull from W: (new W, auxiliary-function improvement).
    ``trace``, when given, gets the auxiliary function after every pass."""
    log = log or logger
    d = stats.dim
    try:
        inv_g = np.linalg.inv(stats.G)
    except np.linalg.LinAlgError:
        raise FmllrError("an fMLLR statistics matrix G_i is singular (too little data, or a "
                         "constant feature dimension)") from None
    beta = stats.beta
    old = np.array(W, dtype=np.float64)
    new = old.copy()
    old_objf = fmllr_auxf(old, stats)
    for _ in range(num_iters):
        for i in range(d):
            cof = np.zeros(d + 1)
            cof[:d] = np.linalg.inv(new[:, :d]).T[i]
            k = stats.K[i]
            gc = inv_g[i] @ cof
            e1, e2 = float(gc @ cof), float(gc @ k)
            discr = np.sqrt(e2 * e2 + 4.0 * e1 * beta)
            roots = ((-e2 + discr) / (2 * e1), (-e2 - discr) / (2 * e1))
            auxf = [beta * np.log(abs(r * e1 + e2)) - 0.5 * r * r * e1 for r in roots]
            alpha = roots[0] if auxf[0] > auxf[1] else roots[1]
            new[i] = inv_g[i] @ (alpha * cof + k)
        if trace is not None:
            trace.append(fmllr_auxf(new, stats))
    new_objf = fmllr_auxf(new, stats)
    impr = new_objf - old_objf
    log.info("fMLLR objf improvement is %s per frame over %s frames.",
             _g(impr / (beta + 1.0e-10)), _g(beta))
    if impr < 0.0 and not np.isclose(new_objf, old_objf, rtol=1e-3, atol=0.0):
        log.warning("No applying fMLLR transform change because objective function did not "
                    "increase.")
        return old, 0.0
    return new, impr


def fmllr_update_diag(W: np.ndarray, stats: FmllrStats,
                      log: Optional[logging.Logger] = None) -> tuple[np.ndarray, float]:
    """ComputeFmllrMatrixDiagGmmDiagonal: per dimension the scale s > 0 and offset o that
    maximise the auxiliary function, in closed form (W's square part must be diagonal)."""
    log = log or logger
    d = stats.dim
    out = np.array(W, dtype=np.float64)
    if stats.beta == 0.0:
        log.warning("Computing diagonal fMLLR matrix: no stats [using original transform]")
        return out, 0.0
    if np.count_nonzero(out[:, :d] - np.diag(np.diag(out[:, :d]))):
        raise FmllrError("diagonal fMLLR needs a diagonal starting transform")
    old = fmllr_auxf(out, stats)
    idx = np.arange(d)
    g_iii, g_idd, g_idi = stats.G[idx, idx, idx], stats.G[idx, d, d], stats.G[idx, d, idx]
    k_ii, k_id = stats.K[idx, idx], stats.K[:, d]
    a = g_idi * g_idi / g_idd - g_iii
    b = k_ii - g_idi * k_id / g_idd
    s = (-b - np.sqrt(b * b - 4.0 * a * stats.beta)) / (2.0 * a)
    if not np.all(s > 0.0):
        raise FmllrError("diagonal fMLLR: a non-positive scale (degenerate statistics)")
    out[idx, idx] = s
    out[:, d] = (k_id - s * g_idi) / g_idd
    return out, fmllr_auxf(out, stats) - old


def fmllr_update_offset(W: np.ndarray, stats: FmllrStats,
                        log: Optional[logging.Logger] = None) -> tuple[np.ndarray, float]:
    """ComputeFmllrMatrixDiagGmmOffset: only b, b_i = (K[i, d] - G_i[i, d]) / G_i[d, d]
    (W's square part must be the identity)."""
    log = log or logger
    d = stats.dim
    out = np.array(W, dtype=np.float64)
    if not np.array_equal(out[:, :d], np.eye(d)):
        raise FmllrError("offset-only fMLLR needs a unit square part in the starting transform")
    idx = np.arange(d)
    g_dd, g_id, k_d = stats.G[idx, d, d], stats.G[idx, idx, d], stats.K[:, d]

    def part(b: np.ndarray) -> np.ndarray:
        return -0.5 * b * b * g_dd - b * g_id + b * k_d

    before = part(out[:, d])
    with np.errstate(divide="ignore", invalid="ignore"):
        out[:, d] = np.where(g_dd != 0.0, (k_d - g_id) / g_dd, out[:, d])
    after = part(out[:, d])
    for i in np.flatnonzero(after < before):
        log.warning("Objf decrease in offset estimation:%s < %s", _g(after[i]), _g(before[i]))
    return out, float(np.sum(after - before))


def compute_fmllr(stats: FmllrStats, opts: FmllrOptions, name: str = "",
                  trace: Optional[list] = None, log: Optional[logging.Logger] = None
                  ) -> tuple[np.ndarray, float]:
    """FmllrDiagGmmAccs::Update from the identity: (the d x d+1 transform as float32, the
    improvement). Below the minimum count the identity is kept and the warning names
    ``name`` (the speaker or utterance)."""
    log = log or logger
    opts.check()
    d = stats.dim
    W = np.hstack([np.eye(d), np.zeros((d, 1))])
    if not stats.beta > opts.fmllr_min_count:
        log.warning("Not updating fMLLR since below min-count: count is %s%s", _g(stats.beta),
                    f" (for {name})" if name else "")
        return W.astype(np.float32), 0.0
    kind = opts.fmllr_update_type
    if kind == "full":
        W, impr = fmllr_update_full(W, stats, opts.fmllr_num_iters, trace, log)
    elif kind == "diag":
        W, impr = fmllr_update_diag(W, stats, log)
    elif kind == "offset":
        W, impr = fmllr_update_offset(W, stats, log)
    else:
        impr = 0.0
    return W.astype(np.float32), impr


def _g(x: float) -> str:
    return "{:.6g}".format(float(x))


class _Estimation:
    """One gmm-est-fmllr run: accumulates an utterance into a speaker's statistics (posteriors
    over transition-ids, or Gaussian-level ones with ``gpost``), writes each transform and keeps
    the counts and totals of the summary lines."""

    def __init__(self, model: GmmModel, gpost: bool, opts: FmllrOptions, feats_rspecifier: str,
                 post_rspecifier: str, writer: TableWriter, log: logging.Logger):
        self.model, self.gpost, self.opts, self.writer, self.log = model, gpost, opts, writer, log
        self.feats_rspecifier, self.post_rspecifier = feats_rspecifier, post_rspecifier
        self.miv, self.inv = natural_params(model)
        self.counts = PostCounts()
        self.tot_impr = self.tot_t = 0.0

    def accumulate(self, stats: FmllrStats, key: str, feats: np.ndarray, post: list) -> None:
        check_feat_dim(feats, self.model, key, self.feats_rspecifier)
        what = f"{self.post_rspecifier}: key {key}"
        if self.gpost:
            frames, gauss, gamma = flatten_gpost(self.model, post, what)
        else:
            ep = entry_gauss_posteriors(self.model, feats, post, what)
            frames, gauss, gamma = ep.frames[ep.rows], ep.gauss, ep.gamma
        stats.accumulate(feats, frames, gauss, gamma, self.miv, self.inv)

    def finish(self, key: str, stats: FmllrStats, what: str) -> None:
        W, impr = compute_fmllr(stats, self.opts, f"{what} {key}", log=self.log)
        self.writer.write(key, W)
        per = _g(impr / stats.beta) if stats.beta else "nan"
        self.log.info("For %s %s, auxf-impr from fMLLR is %s, over %s frames.", what, key, per,
                      _g(stats.beta))
        self.tot_impr += impr
        self.tot_t += stats.beta

    def per_utterance(self, kind: str, noun: str) -> None:
        for key, feats, post in utterances_with_posts(
                self.model, self.feats_rspecifier, self.post_rspecifier, self.counts, kind,
                f"Did not find {noun} for utterance %s", self.log):
            stats = FmllrStats(self.model.dim)
            self.accumulate(stats, key, feats, post)
            self.finish(key, stats, "utterance")

    def per_speaker(self, spk2utt: str, kind: str) -> None:
        """Speakers are finished in spk2utt's order as soon as all their utterances have been
        read: with features in the data directory's order (grouped by speaker, as Kaldi sorts
        them) only one speaker's statistics are held at a time."""
        speakers = list(read_token_table(spk2utt))
        spk_of = {u: i for i, (_, utts) in enumerate(speakers) for u in utts}
        left = [len(set(utts)) for _, utts in speakers]
        stats: dict[int, FmllrStats] = {}
        seen: set = set()
        nxt = 0

        def flush(all_read: bool) -> None:
            nonlocal nxt
            while nxt < len(speakers) and (all_read or left[nxt] == 0):
                spk, utts = speakers[nxt]
                for utt in utts:
                    if utt not in seen:
                        self.log.warning("Did not find features for utterance %s", utt)
                        self.counts.other += 1
                self.finish(spk, stats.pop(nxt, None) or FmllrStats(self.model.dim), "speaker")
                nxt += 1

        with open_features(self.feats_rspecifier) as reader, \
                RandomAccessReader(self.post_rspecifier, kind) as posts:
            for key, feats in reader:
                i = spk_of.get(key)
                if i is None or key in seen:
                    continue
                seen.add(key)
                left[i] -= 1
                if key not in posts:
                    self.log.warning("Did not find posteriors for utterance %s", key)
                    self.counts.no_post += 1
                elif len(posts[key]) != feats.shape[0]:
                    self.log.warning("%s vector has wrong size %d vs. %d",
                                     "GauPost" if self.gpost else "Posterior", len(posts[key]),
                                     feats.shape[0])
                    self.counts.other += 1
                else:
                    if i not in stats:
                        stats[i] = FmllrStats(self.model.dim)
                    self.accumulate(stats[i], key, feats, posts[key])
                    self.counts.done += 1
                flush(False)
        flush(True)


def est_fmllr(model_in: str, feats_rspecifier: str, post_rspecifier: str,
              trans_wspecifier: str, opts: FmllrOptions = FmllrOptions(), spk2utt: str = "",
              gpost: bool = False, log: Optional[logging.Logger] = None) -> int:
    """Kaldi's gmm-est-fmllr (``gpost`` false: posteriors over transition-ids) or
    gmm-est-fmllr-gpost (true: Gaussian-level posteriors): one transform per speaker of
    ``spk2utt``, or per utterance without it, written as d x (d+1) float matrices. Returns the
    number of utterances done."""
    log = log or logger
    opts.check()
    model = read_model(model_in)
    kind, noun = ("gpost", "gposts") if gpost else ("post", "posts")
    with TableWriter(trans_wspecifier, "mat") as writer:
        run = _Estimation(model, gpost, opts, feats_rspecifier, post_rspecifier, writer, log)
        if spk2utt:
            run.per_speaker(spk2utt, kind)
        else:
            run.per_utterance(kind, noun)
    c = run.counts
    log.info("Done %d files, %d with no %s, %d with other errors.", c.done, c.no_post, noun,
             c.other)
    log.info("Overall fMLLR auxf impr per frame is %s over %s frames.",
             _g(run.tot_impr / run.tot_t) if run.tot_t else "nan", _g(run.tot_t))
    return c.done
