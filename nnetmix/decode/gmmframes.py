"""GMM log-likelihoods for the compiled search, computed only for the pdfs it asks for.

Kaldi's gmm-latgen-faster never makes a (frames x pdfs) matrix: its DecodableAmDiagGmmScaled
computes a pdf's log-likelihood when the decoder first asks for it on a frame and caches it for
that frame (src/gmm/decodable-am-diag-gmm.cc). A triphone model has thousands of pdfs of which a
few hundred are reached per frame, so computing all of them (one GEMM, then a log-sum-exp over
every Gaussian) costs more than the search. Here :func:`pdf_loglike_scaled` is that per-pdf
computation as a numba kernel the search (:mod:`nnetmix.decode.faster`) calls with a per-frame
cache; :class:`GmmFrames` is one utterance's features with the model, which
``LatticeDecoder.decode`` takes in place of a matrix.

Numbers: a Gaussian's ``gconst + [x, x^2] . proj`` is summed in float64 in a fixed order (four
interleaved partial sums over the 2D terms), then a log-sum-exp over the pdf's Gaussians, then
``float32(acoustic_scale * float32(loglike))``. :func:`scaled_loglikes_matrix` fills a whole
matrix with the same kernel, so a search on it gives byte-identical lattices (tested); the GEMM
path (:func:`nnetmix.hmm.gmm_likelihood.pdf_loglikes`, float32 BLAS) differs from it in the last
float32 bits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from nnetmix.hmm.gmm_likelihood import StackedGmms, pdf_loglikes
from nnetmix.options import option

__all__ = ["GmmLikelihoodOptions", "OnDemandGmm", "GmmFrames", "pdf_loglike_scaled",
           "scaled_loglikes_matrix", "ON_DEMAND_MIN_PDFS"]

#: the default --gmm-on-demand-pdfs: models with at least this many pdfs get on-demand
#: likelihoods (bench/decode_speed.py --gmm-modes dense,on-demand measures the crossover)
ON_DEMAND_MIN_PDFS = 400


@dataclass
class GmmLikelihoodOptions:
    """How gmm-latgen-faster / gmm-decode-faster compute GMM log-likelihoods."""

    gmm_on_demand_pdfs: int = option(ON_DEMAND_MIN_PDFS, "With --decoder=faster, compute GMM "
                                     "log-likelihoods only for the pdfs the search reaches (cached "
                                     "per frame, as Kaldi's DecodableAmDiagGmmScaled) when the "
                                     "model has at least this many pdfs; below it, all pdfs of all "
                                     "frames in one GEMM. 0: always on demand; -1: never")

    def on_demand(self, num_pdfs: int) -> bool:
        return 0 <= self.gmm_on_demand_pdfs <= num_pdfs


@njit(cache=True, nogil=True)
def pdf_loglike_scaled(x2, t, proj_t, gconst, offsets, pdf, acoustic_scale):
    """float32(acoustic_scale * log p(x_t | pdf)): ``x2`` (T, 2D) rows [x, x^2], ``proj_t``
    (G, 2D) rows [mean/var, -0.5/var] per Gaussian, ``gconst`` (G,), ``offsets`` the pdfs'
    Gaussian ranges."""
    a = offsets[pdf]
    b = offsets[pdf + 1]
    n = x2.shape[1]
    m = -np.inf
    s = 0.0
    for g in range(a, b):
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        k = 0
        while k + 4 <= n:
            s0 += np.float64(x2[t, k]) * np.float64(proj_t[g, k])
            s1 += np.float64(x2[t, k + 1]) * np.float64(proj_t[g, k + 1])
            s2 += np.float64(x2[t, k + 2]) * np.float64(proj_t[g, k + 2])
            s3 += np.float64(x2[t, k + 3]) * np.float64(proj_t[g, k + 3])
            k += 4
        while k < n:
            s0 += np.float64(x2[t, k]) * np.float64(proj_t[g, k])
            k += 1
        ll = np.float64(gconst[g]) + ((s0 + s1) + (s2 + s3))
        # online log-sum-exp: one exp per Gaussian
        if ll > m:
            if m != -np.inf:
                s = s * math.exp(m - ll)
            s += 1.0
            m = ll
        elif ll != -np.inf:
            s += math.exp(ll - m)
    if m == -np.inf:
        return np.float32(-np.inf)
    return np.float32(np.float32(acoustic_scale) * np.float32(m + math.log(s)))


@njit(cache=True, nogil=True)
def _fill_matrix(x2, proj_t, gconst, offsets, acoustic_scale, out):
    for t in range(x2.shape[0]):
        for p in range(out.shape[1]):
            out[t, p] = pdf_loglike_scaled(x2, t, proj_t, gconst, offsets, p, acoustic_scale)


class OnDemandGmm:
    """A model's Gaussians laid out for :func:`pdf_loglike_scaled` (made once per model and
    shared by all utterances and threads; read-only)."""

    def __init__(self, am):
        self.stacked = StackedGmms.from_gmms(list(am))
        self.dim = self.stacked.dim
        self.num_pdfs = self.stacked.num_pdfs
        self.proj_t = np.ascontiguousarray(self.stacked.proj.T)          # (G, 2D) float64
        self.gconst = np.ascontiguousarray(self.stacked.gconsts)
        self.offsets = np.ascontiguousarray(self.stacked.offsets, dtype=np.int64)

    def design(self, feats: np.ndarray) -> np.ndarray:
        """(T, 2D) float32 rows [x, x^2]: the features as the kernel reads them."""
        x = np.asarray(feats, dtype=np.float32)
        return np.ascontiguousarray(np.concatenate([x, x * x], axis=1))


@dataclass
class GmmFrames:
    """One utterance's features and the model that scores them: what the GMM tools hand to
    ``LatticeDecoder.decode``. ``on_demand``: the compiled search computes the pdfs it reaches
    (:func:`pdf_loglike_scaled`); otherwise (and for --decoder=simple) :meth:`loglikes` gives
    the whole matrix by the GEMM path."""

    gmm: OnDemandGmm
    feats: np.ndarray
    on_demand: bool

    @property
    def num_frames(self) -> int:
        return int(self.feats.shape[0])

    def loglikes(self) -> np.ndarray:
        """(T, num_pdfs) float32 by one GEMM over all Gaussians (the dense path)."""
        return pdf_loglikes(self.gmm.stacked, self.feats, dtype=np.float32)


def scaled_loglikes_matrix(gmm: OnDemandGmm, feats: np.ndarray,
                           acoustic_scale: float) -> np.ndarray:
    """(T, num_pdfs) float32: every pdf of every frame by the on-demand kernel, scaled: the
    matrix that gives the dense search exactly the on-demand search's numbers."""
    x2 = gmm.design(feats)
    out = np.empty((x2.shape[0], gmm.num_pdfs), np.float32)
    _fill_matrix(x2, gmm.proj_t, gmm.gconst, gmm.offsets, float(acoustic_scale), out)
    return out
