"""Kaldi's DiagGmm and AmDiagGmm (src/gmm/diag-gmm.cc, am-diag-gmm.cc), and .mdl files.

Kaldi stores a diagonal GMM in its natural parameters, float32 (BaseFloat)::

    <DiagGMM> <GCONSTS> FV K <WEIGHTS> FV K <MEANS_INVVARS> FM K D <INV_VARS> FM K D </DiagGMM>

with inv_vars = 1/var, means_invvars = mean/var and gconsts[k] = log w_k - D/2 log(2 pi)
+ 1/2 sum_d (log inv_var - means_invvars^2 / inv_var) (ComputeGconsts: the log-likelihood
of the zero vector). An AmDiagGmm is ``<DIMENSION> D <NUMPDFS> P`` then P DiagGMMs; a .mdl
file is a TransitionModel followed by an AmDiagGmm (gmm-init-mono, gmm-est write them so).

:class:`DiagGmm` keeps the stored float32 arrays, so reading and writing a model gives back the
same bytes; ``weights``, ``means`` and ``vars`` are float64 views computed from them, and
assigning ``means``/``vars``/``weights`` (or :meth:`DiagGmm.from_means_vars`) recomputes the
stored form and the gconsts (as Kaldi's ComputeGconsts does, to the bit).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi.tokens import TokenReader, TokenWriter, open_object, write_object_bytes
from nnetmix.kaldi.transition_model import TransitionModel

__all__ = ["DiagGmm", "AmDiagGmm", "read_gmm_model", "write_gmm_model", "read_am_diag_gmm",
           "copy_gmm_model"]

_LOG_2PI = float(np.log(2.0 * np.pi))


class DiagGmm:
    """One diagonal-covariance GMM in Kaldi's stored form (float32 natural parameters)."""

    def __init__(self, gconsts, weights, means_invvars, inv_vars, name: str = "DiagGmm"):
        self.gconsts = np.asarray(gconsts, dtype=np.float32)
        self._weights = np.asarray(weights, dtype=np.float32)
        self.means_invvars = np.asarray(means_invvars, dtype=np.float32)
        self.inv_vars = np.asarray(inv_vars, dtype=np.float32)
        k = self._weights.size
        if (self.means_invvars.ndim != 2 or self.means_invvars.shape != self.inv_vars.shape
                or self.means_invvars.shape[0] != k or self.gconsts.size not in (0, k)):
            raise FormatError(f"{name}: inconsistent sizes: weights {k}, gconsts "
                              f"{self.gconsts.size}, means_invvars {self.means_invvars.shape}, "
                              f"inv_vars {self.inv_vars.shape}")
        if self.gconsts.size == 0:  # <GCONSTS> is optional in Kaldi's reader
            self.compute_gconsts()

    # -- float64 views and the conversion back --------------------------------------------------
    @classmethod
    def from_means_vars(cls, weights, means, vars) -> "DiagGmm":
        """Build from weights (K,), means (K, D) and variances (K, D)."""
        vars64 = np.asarray(vars, dtype=np.float64)
        if np.any(vars64 <= 0):
            raise ValueError("DiagGmm: variances must be > 0")
        inv = 1.0 / vars64
        g = cls(np.zeros(0), np.asarray(weights, dtype=np.float64),
                np.asarray(means, dtype=np.float64) * inv, inv)
        return g

    @property
    def num_gauss(self) -> int:
        return int(self._weights.size)

    @property
    def dim(self) -> int:
        return int(self.means_invvars.shape[1])

    @property
    def weights(self) -> np.ndarray:
        return self._weights.astype(np.float64)

    @weights.setter
    def weights(self, w) -> None:
        self._weights = np.asarray(w, dtype=np.float32).reshape(self.num_gauss)
        self.compute_gconsts()

    @property
    def vars(self) -> np.ndarray:
        return 1.0 / self.inv_vars.astype(np.float64)

    @vars.setter
    def vars(self, v) -> None:
        means = self.means
        inv = 1.0 / np.asarray(v, dtype=np.float64)
        self.inv_vars = inv.astype(np.float32)
        self.means_invvars = (means * inv).astype(np.float32)
        self.compute_gconsts()

    @property
    def means(self) -> np.ndarray:
        return self.means_invvars.astype(np.float64) / self.inv_vars.astype(np.float64)

    @means.setter
    def means(self, m) -> None:
        self.means_invvars = (np.asarray(m, dtype=np.float64)
                              * self.inv_vars.astype(np.float64)).astype(np.float32)
        self.compute_gconsts()

    def compute_gconsts(self) -> int:
        """ComputeGconsts, in Kaldi's own precision so the float32 results match its bit for
        bit (checked on every gconst of the yesno models): a float32 accumulator starting at
        logf(w) + (float)(-D/2 log 2 pi), each dimension adding the double
        0.5*logf(inv_var) - 0.5*mi*mi/inv_var and rounding back to float. Returns the number of
        -inf gconsts, as Kaldi does."""
        iv = self.inv_vars.astype(np.float64)
        mi = self.means_invvars.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            gc = (np.log(self._weights.astype(np.float64)).astype(np.float32)
                  + np.float32(-0.5 * _LOG_2PI * self.dim))
            half_log_iv = 0.5 * np.log(iv).astype(np.float32).astype(np.float64)
            for d in range(self.dim):
                gc = (gc.astype(np.float64) + (half_log_iv[:, d]
                                               - 0.5 * mi[:, d] * mi[:, d] / iv[:, d])
                      ).astype(np.float32)
        if np.any(np.isnan(gc)):
            raise FormatError(f"DiagGmm: not a number in gconst of component "
                              f"{int(np.flatnonzero(np.isnan(gc))[0])}")
        gc = np.where(np.isinf(gc), np.float32(-np.inf), gc).astype(np.float32)
        self.gconsts = gc
        return int(np.isinf(gc).sum())

    def component_log_likelihoods(self, frames: np.ndarray) -> np.ndarray:
        """log w_k N(x; mu_k, var_k) for frames (T, D) -> (T, K), float64."""
        x = np.atleast_2d(np.asarray(frames, dtype=np.float64))
        iv = self.inv_vars.astype(np.float64)
        return (self.gconsts.astype(np.float64) + x @ self.means_invvars.astype(np.float64).T
                - 0.5 * (x * x) @ iv.T)

    def log_likelihood(self, frames: np.ndarray) -> np.ndarray:
        """log sum_k w_k N(x; mu_k, var_k) for each frame, float64."""
        ll = self.component_log_likelihoods(frames)
        m = ll.max(axis=1, keepdims=True)
        return (m + np.log(np.exp(ll - m).sum(axis=1, keepdims=True)))[:, 0]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DiagGmm) and all(
            np.array_equal(a, b) for a, b in
            ((self.gconsts, other.gconsts), (self._weights, other._weights),
             (self.means_invvars, other.means_invvars), (self.inv_vars, other.inv_vars)))

    # -- I/O -----------------------------------------------------------------------------------
    @classmethod
    def read(cls, r: TokenReader) -> "DiagGmm":
        """DiagGmm::Read. Kaldi recomputes the gconsts on every read; we do so for text models and
        keep the stored ones of a binary model (the same values: compute_gconsts matches Kaldi's
        bit for bit), so a binary copy is byte-identical whatever the platform's logf."""
        pos = r.src.pos
        tok = r.token("<DiagGMM>")
        if tok not in ("<DiagGMM>", "<DiagGMMBegin>"):
            raise r.fail(f"expected token <DiagGMM>, got {tok[:40]!r}", pos=pos)
        pos = r.src.pos
        tok = r.token("<GCONSTS> or <WEIGHTS>")
        gconsts = np.zeros(0, dtype=np.float32)
        if tok == "<GCONSTS>":
            gconsts = r.vector("<GCONSTS>")
            r.expect("<WEIGHTS>")
        elif tok != "<WEIGHTS>":
            raise r.fail(f"expected <GCONSTS> or <WEIGHTS>, got {tok[:40]!r}", pos=pos)
        weights = r.vector("<WEIGHTS>")
        r.expect("<MEANS_INVVARS>")
        means_invvars = r.matrix("<MEANS_INVVARS>")
        r.expect("<INV_VARS>")
        inv_vars = r.matrix("<INV_VARS>")
        pos = r.src.pos
        tok = r.token("</DiagGMM>")
        if tok not in ("</DiagGMM>", "<DiagGMMEnd>"):
            raise r.fail(f"expected token </DiagGMM>, got {tok[:40]!r}", pos=pos)
        g = cls(gconsts, weights, means_invvars, inv_vars, name=f"{r.name}: byte {pos}")
        if not r.binary:  # 7-digit text gconsts: recompute them, as Kaldi does on every read
            g.compute_gconsts()
        return g

    def write(self, w: TokenWriter) -> None:
        """DiagGmm::Write, byte for byte."""
        w.token("<DiagGMM>")
        w.newline()
        w.token("<GCONSTS>")
        w.vector(self.gconsts)
        w.token("<WEIGHTS>")
        w.vector(self._weights)
        w.token("<MEANS_INVVARS>")
        w.matrix(self.means_invvars)
        w.token("<INV_VARS>")
        w.matrix(self.inv_vars)
        w.token("</DiagGMM>")
        w.newline()


class AmDiagGmm:
    """Kaldi's AmDiagGmm: one DiagGmm per pdf-id."""

    def __init__(self, pdfs: Optional[Sequence[DiagGmm]] = None):
        self.pdfs: list[DiagGmm] = list(pdfs or [])

    def __len__(self) -> int:
        return len(self.pdfs)

    def __getitem__(self, i: int) -> DiagGmm:
        return self.pdfs[i]

    def __iter__(self):
        return iter(self.pdfs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AmDiagGmm) and self.pdfs == other.pdfs

    @property
    def num_pdfs(self) -> int:
        return len(self.pdfs)

    @property
    def dim(self) -> int:
        return self.pdfs[0].dim if self.pdfs else 0

    @property
    def num_gauss(self) -> int:
        return sum(g.num_gauss for g in self.pdfs)

    def log_likelihoods(self, frames: np.ndarray) -> np.ndarray:
        """(T, num_pdfs) float64 log-likelihoods of each frame under each pdf."""
        x = np.atleast_2d(np.asarray(frames, dtype=np.float64))
        return np.stack([g.log_likelihood(x) for g in self.pdfs], axis=1)

    @classmethod
    def read(cls, r: TokenReader) -> "AmDiagGmm":
        r.expect("<DIMENSION>")
        dim = r.int32("<DIMENSION>")
        r.expect("<NUMPDFS>")
        num_pdfs = r.int32("<NUMPDFS>")
        if num_pdfs <= 0:
            raise r.fail(f"bad <NUMPDFS> {num_pdfs}")
        pdfs = []
        for i in range(num_pdfs):
            pos = r.src.pos
            g = DiagGmm.read(r)
            if g.dim != dim:
                raise r.fail(f"pdf {i} has dimension {g.dim}, <DIMENSION> says {dim}", pos=pos)
            pdfs.append(g)
        return cls(pdfs)

    def write(self, w: TokenWriter) -> None:
        """AmDiagGmm::Write, byte for byte."""
        w.token("<DIMENSION>")
        w.int32(self.dim)
        w.token("<NUMPDFS>")
        w.int32(len(self.pdfs))
        for g in self.pdfs:
            g.write(w)


def read_am_diag_gmm(r: TokenReader) -> AmDiagGmm:
    return AmDiagGmm.read(r)


def read_gmm_model(rxfilename: str) -> tuple[TransitionModel, AmDiagGmm]:
    """Read a Kaldi GMM .mdl (binary or text): the TransitionModel, then the AmDiagGmm."""
    r = open_object(rxfilename)
    try:
        tm = TransitionModel.read(r)
        am = AmDiagGmm.read(r)
    finally:
        r.src.close(check=False)
    if am.num_pdfs != tm.num_pdfs:
        raise FormatError(f"{rxfilename}: the transition model has {tm.num_pdfs} pdfs, the "
                          f"acoustic model {am.num_pdfs}")
    return tm, am


def write_gmm_model(wxfilename: str, tm: Optional[TransitionModel], am: Optional[AmDiagGmm],
                    binary: bool = True) -> None:
    """Write a .mdl as gmm-copy does (either part may be left out, as --copy-tm/--copy-am=false),
    under a temporary name renamed into place."""
    w = TokenWriter(binary)
    if tm is not None:
        tm.write(w)
    if am is not None:
        am.write(w)
    write_object_bytes(wxfilename, w.getvalue(), binary)


def copy_gmm_model(rxfilename: str, wxfilename: str, binary: bool = True, copy_tm: bool = True,
                   copy_am: bool = True) -> None:
    """gmm-copy: read the parts asked for (in file order) and write them in the chosen format."""
    r = open_object(rxfilename)
    try:
        tm = TransitionModel.read(r) if copy_tm else None
        am = AmDiagGmm.read(r) if copy_am else None
    finally:
        r.src.close(check=False)
    write_gmm_model(wxfilename, tm, am, binary)
