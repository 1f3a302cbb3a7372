"""Sufficient statistics for ML re-estimation of diagonal GMMs and transitions from alignments.

What Kaldi's gmm-acc-stats-ali gathers (src/gmmbin/gmm-acc-stats-ali.cc): for each frame with
transition-id ``tid``, pdf ``p = tid2pdf[tid]``, the posteriors ``g`` of p's Gaussians
(``DiagGmm::ComponentPosteriors``) are added to the occupancies, ``g x`` to the first-order and
``g x^2`` to the second-order stats of those Gaussians, and 1 to the count of ``tid``.

Here the frames of a batch of utterances are sorted by pdf once, and each pdf's frames take one
GEMM ``post^T [x, x^2]``: the Python loop is over pdfs, never over frames.

:class:`GmmAccs` keeps the Gaussian statistics as an exact sum (:mod:`nnetmix.exact_sum`):
each call of :func:`acc_stats_ali` is one term, so the totals do not depend on how the
utterances were divided among jobs (gmm-acc-stats-ali makes one term per run of a speaker's
utterances, and data is split by speaker), and ``--nj 1`` and ``--nj 8`` give the same model
bit for bit. The stats live on disk as a NumPy ``.npz`` written under a temporary name and
renamed into place (Kaldi writes ``AccumAmDiagGmm`` in its own format; these stats only pass
between our own jobs). The file holds::

    format    'nnetmix-gmm-accs-v2'
    offsets   int64 (P+1,)   Gaussians of pdf p are offsets[p]:offsets[p+1] (the model's order)
    dim       int64 ()       feature dimension D
    bins      float64 (K, L) the exact sum's bins of [occ (G), mean_acc (G*D), var_acc (G*D),
                             tot_like, tot_t]: occupancy, sums of posterior * x and * x^2 per
                             Gaussian, total log-likelihood and number of frames
    terms     int64 ()       terms in the exact sum
    trans     float64 (T+1,) count per transition-id (index 0 unused, as Kaldi's Vector)
"""
from __future__ import annotations

import io
import os
from typing import IO, Optional, Sequence

import numpy as np

from nnetmix.data.io import atomic_open
from nnetmix.errors import FormatError
from nnetmix.exact_sum import ExactSum, ExactSumError
from nnetmix.hmm.gmm_likelihood import StackedGmms
from nnetmix.utils.state import Array, check_arrays, read_npz

__all__ = ["GmmAccs", "acc_stats_ali", "acc_transitions", "ACCS_FORMAT"]

ACCS_FORMAT = "nnetmix-gmm-accs-v2"
#: what a stats file holds (nnetmix.utils.state checks it)
_SPEC = {"format": Array("U"), "offsets": Array("iu", (None,)), "dim": Array("iu"),
         "bins": Array("f", (None, None)), "terms": Array("iu"), "trans": Array("f", (None,))}


class GmmAccs:
    """Per-Gaussian occupancy, first and second order stats (an exact sum) and transition-id
    counts; ``occ``, ``mean_acc``, ``var_acc``, ``tot_like`` and ``tot_t`` read the sum."""

    def __init__(self, offsets: np.ndarray, dim: int, trans: np.ndarray,
                 stats: Optional[ExactSum] = None):
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.dim = int(dim)
        self.trans = trans
        g = int(self.offsets[-1])
        self.stats = ExactSum((g + 2 * g * self.dim + 2,)) if stats is None else stats
        self._value: Optional[np.ndarray] = None

    @classmethod
    def zeros(cls, offsets: np.ndarray, dim: int, num_transition_ids: int) -> "GmmAccs":
        """Empty stats for a model with Gaussians laid out by ``offsets``."""
        return cls(offsets, dim, np.zeros(num_transition_ids + 1))

    @classmethod
    def for_model(cls, model: StackedGmms, num_transition_ids: int) -> "GmmAccs":
        return cls.zeros(model.offsets, model.dim, num_transition_ids)

    @property
    def num_gauss(self) -> int:
        return int(self.offsets[-1])

    @property
    def num_pdfs(self) -> int:
        return len(self.offsets) - 1

    def _sum(self) -> np.ndarray:
        if self._value is None:
            self._value = self.stats.value()
        return self._value

    @property
    def occ(self) -> np.ndarray:
        return self._sum()[:self.num_gauss]

    @property
    def mean_acc(self) -> np.ndarray:
        g, d = self.num_gauss, self.dim
        return self._sum()[g:g + g * d].reshape(g, d)

    @property
    def var_acc(self) -> np.ndarray:
        g, d = self.num_gauss, self.dim
        return self._sum()[g + g * d:g + 2 * g * d].reshape(g, d)

    @property
    def tot_like(self) -> float:
        return float(self._sum()[-2])

    @property
    def tot_t(self) -> float:
        return float(self._sum()[-1])

    def add(self, occ: np.ndarray, mean_acc: np.ndarray, var_acc: np.ndarray, tot_like: float,
            tot_t: float) -> None:
        """Add one term (the stats of one batch of utterances) to the exact sum."""
        g, d = self.num_gauss, self.dim
        term = np.empty(g + 2 * g * d + 2)
        term[:g] = occ
        term[g:g + g * d] = mean_acc.ravel()
        term[g + g * d:-2] = var_acc.ravel()
        term[-2:] = tot_like, tot_t
        try:
            self.stats.add(term)
        except ExactSumError as e:
            raise FormatError(f"GMM stats: {e}") from None
        self._value = None

    def pdf_occs(self) -> np.ndarray:
        """Occupancy of each pdf (what gmm-est --write-occs writes)."""
        return np.add.reduceat(self.occ, self.offsets[:-1]) if self.num_gauss else np.zeros(0)

    def gauss_slice(self, pdf: int) -> slice:
        return slice(int(self.offsets[pdf]), int(self.offsets[pdf + 1]))

    def __iadd__(self, other: "GmmAccs") -> "GmmAccs":
        if (not np.array_equal(self.offsets, other.offsets) or self.dim != other.dim
                or self.trans.shape != other.trans.shape):
            raise FormatError("cannot add GMM stats of different layouts (pdfs, Gaussians, "
                              "dim or transition-ids differ): were they made with one model?")
        try:
            self.stats += other.stats
        except ExactSumError as e:
            raise FormatError(f"GMM stats: {e}") from None
        self.trans += other.trans
        self._value = None
        return self

    def write_to(self, f: IO[bytes]) -> None:
        """The ``.npz`` bytes (see the module docstring) to an open binary file."""
        np.savez(f, format=np.array(ACCS_FORMAT), offsets=self.offsets,
                 dim=np.int64(self.dim), bins=self.stats.bins,
                 terms=np.int64(self.stats.terms), trans=self.trans)

    def save(self, path: str | os.PathLike) -> None:
        """Write atomically (temporary file in the same folder, then rename)."""
        with atomic_open(path, "wb") as f:
            self.write_to(f)

    @classmethod
    def load(cls, path: str | os.PathLike | io.BytesIO, name: str = "") -> "GmmAccs":
        """Stats from an ``.npz`` file (or its bytes, read from a pipe named ``name``); any
        damage is one :class:`~nnetmix.utils.state.StateError` naming the file."""
        where = name or path
        fix = "accumulate them again"
        z = read_npz(path, "GMM stats", {"format": Array("U")}, fix, str(where))
        if str(z["format"]) != ACCS_FORMAT:
            raise FormatError(f"{where}: format {z['format']}, expected {ACCS_FORMAT} "
                              f"(stats from another nnetmix version: accumulate again)")
        z = check_arrays(z, _SPEC, where, "GMM stats", fix)
        offsets, dim, bins = z["offsets"].astype(np.int64), int(z["dim"]), z["bins"]
        g = int(offsets[-1]) if len(offsets) else -1
        if bins.shape[1] != g + 2 * g * dim + 2:
            raise FormatError(f"{where}: stats of shape {bins.shape} do not match "
                              f"{g} Gaussians of dimension {dim}")
        stats = ExactSum((bins.shape[1],), np.array(bins, dtype=np.float64), int(z["terms"]))
        return cls(offsets, dim, np.array(z["trans"], dtype=np.float64), stats)

    @classmethod
    def sum_files(cls, paths: Sequence[str | os.PathLike]) -> "GmmAccs":
        """gmm-sum-accs: load and add up the stats of several jobs."""
        if not paths:
            raise FormatError("no GMM stats files to sum")
        total = cls.load(paths[0])
        for p in paths[1:]:
            total += cls.load(p)
        return total


def acc_transitions(tids: np.ndarray, accs: GmmAccs,
                    weights: Optional[np.ndarray] = None) -> None:
    """Add one count per frame (or its posterior ``weights``) to its transition-id
    (TransitionModel::Accumulate)."""
    tids = np.asarray(tids, dtype=np.int64)
    if len(tids) and (tids.min() < 1 or tids.max() >= len(accs.trans)):
        raise FormatError(f"transition-id out of range 1..{len(accs.trans) - 1} in alignment "
                          f"(saw {tids.min()}..{tids.max()}): alignment and model do not match")
    accs.trans += np.bincount(tids, weights=weights, minlength=len(accs.trans))


def _softmax_rows(ll: np.ndarray) -> np.ndarray:
    """In place: each row of ll (one pdf's Gaussians) becomes posteriors; returns (N, 1) LSE.

    The numba segment kernel's semantics (a row with no finite entry gets equal posteriors and
    LSE -inf) in plain numpy: for ONE segment it is as fast, and a gmm-acc-stats-ali job then
    never loads numba (~0.9 s of a job that does ~0.3 s of arithmetic)."""
    m = ll.max(axis=1, keepdims=True)
    dead = ~np.isfinite(m[:, 0])
    if dead.any():
        m[dead] = 0.0
    np.subtract(ll, m, out=ll)
    np.exp(ll, out=ll)
    s = ll.sum(axis=1, keepdims=True)
    if dead.any():
        ll[dead] = 1.0 / ll.shape[1]
        s[dead] = 1.0
    ll /= s
    with np.errstate(divide="ignore"):
        lse = m + np.log(s)
    lse[dead] = -np.inf
    return lse


def acc_stats_ali(model: StackedGmms, feats: np.ndarray, pdf_ids: np.ndarray, accs: GmmAccs,
                  weights: Optional[np.ndarray] = None,
                  stats_feats: Optional[np.ndarray] = None) -> float:
    """Accumulate GMM stats for frames ``feats`` (N, D) aligned to ``pdf_ids`` (N,).

    ``feats`` may be the concatenated frames of many utterances (the more, the fewer small
    GEMMs); they are one term of the exact sum, so the same frames must make the same call
    whichever job has them. ``weights`` (N,) scales each frame's posteriors (default 1, as gmm-acc-stats-ali).
    ``stats_feats`` (N, D): accumulate the statistics of these frames with the posteriors
    computed on ``feats`` (gmm-acc-stats-twofeats: SAT's speaker-independent alignment model).
    Returns the total log-likelihood added (also added to ``accs.tot_like``).
    """
    x = np.asarray(feats, dtype=np.float64)
    pdf_ids = np.asarray(pdf_ids, dtype=np.int64)
    if x.ndim != 2 or len(x) != len(pdf_ids):
        raise FormatError(f"{len(pdf_ids)} alignment frames but features of shape {x.shape}")
    if len(pdf_ids) == 0:
        return 0.0
    if not np.array_equal(accs.offsets, model.offsets):
        raise FormatError("GMM stats were made for another model (Gaussian layout differs)")
    if pdf_ids.min() < 0 or pdf_ids.max() >= model.num_pdfs:
        raise FormatError(f"pdf-id out of range 0..{model.num_pdfs - 1} in alignment")
    d = x.shape[1]
    order = np.argsort(pdf_ids, kind="stable")
    z = np.empty((len(x), 2 * d))
    np.take(x, order, axis=0, out=z[:, :d])
    np.multiply(z[:, :d], z[:, :d], out=z[:, d:])
    z2 = z
    if stats_feats is not None:
        x2 = np.asarray(stats_feats, dtype=np.float64)
        if x2.shape != x.shape:
            raise FormatError(f"second features of shape {x2.shape}, first {x.shape}")
        z2 = np.empty_like(z)
        np.take(x2, order, axis=0, out=z2[:, :d])
        np.multiply(z2[:, :d], z2[:, :d], out=z2[:, d:])
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[order]
    bounds = np.zeros(model.num_pdfs + 1, dtype=np.int64)
    np.cumsum(np.bincount(pdf_ids, minlength=model.num_pdfs), out=bounds[1:])
    occ = np.zeros(accs.num_gauss)
    st = np.zeros((accs.num_gauss, 2 * d))
    tot = 0.0
    for p in np.flatnonzero(bounds[1:] > bounds[:-1]):
        a, b = bounds[p], bounds[p + 1]
        g0, g1 = model.offsets[p], model.offsets[p + 1]
        zp = z[a:b]
        ll = zp @ model.proj[:, g0:g1]
        ll += model.gconsts[g0:g1]
        lse = _softmax_rows(ll)
        post = ll
        if w is not None:
            post *= w[a:b, None]
            tot += float(w[a:b] @ lse[:, 0])
        else:
            tot += float(lse.sum())
        occ[g0:g1] = post.sum(0)
        st[g0:g1] = post.T @ (zp if z2 is z else z2[a:b])
    accs.add(occ, st[:, :d], st[:, d:], tot, float(len(x)) if w is None else float(w.sum()))
    return tot
