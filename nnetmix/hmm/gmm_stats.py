"""Sufficient statistics for ML re-estimation of diagonal GMMs and transitions from alignments.

What Kaldi's gmm-acc-stats-ali gathers (src/gmmbin/gmm-acc-stats-ali.cc): for each frame with
transition-id ``tid``, pdf ``p = tid2pdf[tid]``, the posteriors ``g`` of p's Gaussians
(``DiagGmm::ComponentPosteriors``) are added to the occupancies, ``g x`` to the first-order and
``g x^2`` to the second-order stats of those Gaussians, and 1 to the count of ``tid``.

Here the frames of a batch of utterances are sorted by pdf once, and each pdf's frames take one
GEMM ``post^T [x, x^2]``: the Python loop is over pdfs, never over frames.

:class:`GmmAccs` sums across jobs with ``+=`` and lives on disk as a NumPy ``.npz`` written under
a temporary name and renamed into place (Kaldi writes ``AccumAmDiagGmm`` in its own format; these
stats only pass between our own jobs). The file holds::

    format    'nnetmix-gmm-accs-v1'
    offsets   int64 (P+1,)   Gaussians of pdf p are offsets[p]:offsets[p+1] (the model's order)
    occ       float64 (G,)   occupancy per Gaussian
    mean_acc  float64 (G, D) sum of posterior * x
    var_acc   float64 (G, D) sum of posterior * x^2
    trans     float64 (T+1,) count per transition-id (index 0 unused, as Kaldi's Vector)
    tot_like  float64 ()     total log-likelihood of the aligned frames
    tot_t     float64 ()     number of frames
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.hmm.gmm_likelihood import StackedGmms

__all__ = ["GmmAccs", "acc_stats_ali", "acc_transitions", "ACCS_FORMAT"]

ACCS_FORMAT = "nnetmix-gmm-accs-v1"


@dataclass
class GmmAccs:
    """Per-Gaussian occupancy, first and second order stats, and transition-id counts."""

    offsets: np.ndarray
    occ: np.ndarray
    mean_acc: np.ndarray
    var_acc: np.ndarray
    trans: np.ndarray
    tot_like: float = 0.0
    tot_t: float = 0.0

    @classmethod
    def zeros(cls, offsets: np.ndarray, dim: int, num_transition_ids: int) -> "GmmAccs":
        """Empty stats for a model with Gaussians laid out by ``offsets``."""
        offsets = np.asarray(offsets, dtype=np.int64)
        g = int(offsets[-1])
        return cls(offsets.copy(), np.zeros(g), np.zeros((g, dim)), np.zeros((g, dim)),
                   np.zeros(num_transition_ids + 1))

    @classmethod
    def for_model(cls, model: StackedGmms, num_transition_ids: int) -> "GmmAccs":
        return cls.zeros(model.offsets, model.dim, num_transition_ids)

    @property
    def num_pdfs(self) -> int:
        return len(self.offsets) - 1

    def pdf_occs(self) -> np.ndarray:
        """Occupancy of each pdf (what gmm-est --write-occs writes)."""
        return np.add.reduceat(self.occ, self.offsets[:-1]) if len(self.occ) else np.zeros(0)

    def gauss_slice(self, pdf: int) -> slice:
        return slice(int(self.offsets[pdf]), int(self.offsets[pdf + 1]))

    def __iadd__(self, other: "GmmAccs") -> "GmmAccs":
        if (not np.array_equal(self.offsets, other.offsets)
                or self.mean_acc.shape != other.mean_acc.shape
                or self.trans.shape != other.trans.shape):
            raise FormatError("cannot add GMM stats of different layouts (pdfs, Gaussians, "
                              "dim or transition-ids differ): were they made with one model?")
        self.occ += other.occ
        self.mean_acc += other.mean_acc
        self.var_acc += other.var_acc
        self.trans += other.trans
        self.tot_like += other.tot_like
        self.tot_t += other.tot_t
        return self

    def save(self, path: str | os.PathLike) -> None:
        """Write atomically (temporary file in the same folder, then rename)."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, format=np.array(ACCS_FORMAT), offsets=self.offsets, occ=self.occ,
                         mean_acc=self.mean_acc, var_acc=self.var_acc, trans=self.trans,
                         tot_like=np.float64(self.tot_like), tot_t=np.float64(self.tot_t))
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path: str | os.PathLike) -> "GmmAccs":
        try:
            with np.load(path, allow_pickle=False) as z:
                if str(z["format"]) != ACCS_FORMAT:
                    raise FormatError(f"{path}: format {z['format']}, expected {ACCS_FORMAT}")
                return cls(z["offsets"], z["occ"], z["mean_acc"], z["var_acc"], z["trans"],
                           float(z["tot_like"]), float(z["tot_t"]))
        except (OSError, KeyError, ValueError) as e:
            raise FormatError(f"{path}: not a GMM stats file ({ACCS_FORMAT}): {e}") from e

    @classmethod
    def sum_files(cls, paths: Sequence[str | os.PathLike]) -> "GmmAccs":
        """gmm-sum-accs: load and add up the stats of several jobs."""
        if not paths:
            raise FormatError("no GMM stats files to sum")
        total = cls.load(paths[0])
        for p in paths[1:]:
            total += cls.load(p)
        return total


def acc_transitions(tids: np.ndarray, accs: GmmAccs) -> None:
    """Add one count per frame to its transition-id (TransitionModel::Accumulate)."""
    tids = np.asarray(tids, dtype=np.int64)
    if len(tids) and (tids.min() < 1 or tids.max() >= len(accs.trans)):
        raise FormatError(f"transition-id out of range 1..{len(accs.trans) - 1} in alignment "
                          f"(saw {tids.min()}..{tids.max()}): alignment and model do not match")
    accs.trans += np.bincount(tids, minlength=len(accs.trans))


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
                  weights: Optional[np.ndarray] = None) -> float:
    """Accumulate GMM stats for frames ``feats`` (N, D) aligned to ``pdf_ids`` (N,).

    ``feats`` may be the concatenated frames of many utterances (the more, the fewer small
    GEMMs). ``weights`` (N,) scales each frame's posteriors (default 1, as gmm-acc-stats-ali).
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
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[order]
    bounds = np.zeros(model.num_pdfs + 1, dtype=np.int64)
    np.cumsum(np.bincount(pdf_ids, minlength=model.num_pdfs), out=bounds[1:])
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
        accs.occ[g0:g1] += post.sum(0)
        st = post.T @ zp
        accs.mean_acc[g0:g1] += st[:, :d]
        accs.var_acc[g0:g1] += st[:, d:]
    accs.tot_like += tot
    accs.tot_t += float(len(x)) if w is None else float(w.sum())
    return tot
