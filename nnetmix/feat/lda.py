"""LDA feature transforms as Kaldi's acc-lda / est-lda (src/transform/lda-estimate.cc), the
first half of steps/train_lda_mllt.sh.

Statistics (:class:`LdaStats`, Kaldi's LdaEstimate): per pdf-class the weight and the weighted
sum of the (spliced) features, and ONE weighted scatter of all frames, in float64. Kaldi's
file (``<LDAACCS>``) stores floats and, instead of the total scatter, the within-class scatter
(total minus each class's n·mean·meanᵀ), which keeps its precision in float; reading adds the
class terms back from the float counts and sums, as Kaldi does, and several files add up.

Estimation (:meth:`LdaStats.estimate`): with total covariance T, between-class covariance B
(classes weighted by their counts) and within-class covariance W = T - B, Kaldi takes the
Cholesky factor W = L Lᵀ (adding 1e-3 · trace/dim to the diagonal if that fails), the SVD of the
symmetric L⁻¹ B L⁻ᵀ = U diag(s) Uᵀ with s sorted down, and the transform rows Uᵀ L⁻¹: in the
projected space the within-class covariance is the identity and the between-class one is
diag(s). These rows are the generalized eigenvectors of B v = s W v (tests/feat check that
against scipy). The first ``dim`` rows are the transform; ``--remove-offset`` appends the
column -M·mean (an affine transform), ``--within-class-factor`` f ≠ 1 scales row i by
sqrt((f + s_i)/(1 + s_i)).

Written here in numpy (float64 linear algebra); the pinned kaldi-hmm-gmm binds no LDA.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.feat.pipeline import open_features
from nnetmix.kaldi import RandomAccessReader, write_object
from nnetmix.kaldi.tokens import TokenReader, TokenWriter, add_objects, write_object_bytes
from nnetmix.kaldi.transition_model import read_transition_model
from nnetmix.log import log_vector

__all__ = ["LdaStats", "LdaError", "LdaOptions", "rand_prune", "read_lda_stats",
           "write_lda_stats", "pdf_posteriors", "acc_lda", "est_lda"]

logger = logging.getLogger(__name__)


class LdaError(NnetmixError):
    """LDA statistics that cannot give a transform (too few classes, no data, bad files)."""


@dataclass
class LdaOptions:
    """Kaldi's LdaEstimateOptions, with its defaults."""

    dim: int = 40
    allow_large_dim: bool = False
    remove_offset: bool = False
    within_class_factor: float = 1.0


def rand_prune(weights: np.ndarray, threshold: float, rng: np.random.Generator) -> np.ndarray:
    """Kaldi's RandPrune on each weight: kept when >= threshold, else ``threshold`` with
    probability weight/threshold and 0 otherwise (unbiased; threshold 0 keeps everything)."""
    w = np.asarray(weights, dtype=np.float64)
    if threshold <= 0.0:
        return w
    small = np.abs(w) < threshold
    if not small.any():
        return w
    out = w.copy()
    keep = rng.random(int(small.sum())) <= np.abs(w[small]) / threshold
    out[small] = np.where(keep, np.copysign(threshold, w[small]), 0.0)
    return out


class LdaStats:
    """Kaldi's LdaEstimate: class counts, class sums and the total scatter, in float64."""

    def __init__(self, num_classes: int = 0, dim: int = 0):
        self.zero = np.zeros(num_classes)
        self.first = np.zeros((num_classes, dim))
        self.second = np.zeros((dim, dim))

    @property
    def num_classes(self) -> int:
        return int(self.zero.shape[0])

    @property
    def dim(self) -> int:
        return int(self.second.shape[0])

    def accumulate(self, feats: np.ndarray, frames: np.ndarray, classes: np.ndarray,
                   weights: np.ndarray) -> None:
        """Add frame ``frames[k]`` of ``feats`` to class ``classes[k]`` with ``weights[k]``
        (one GEMM for the scatter, no per-frame Python)."""
        x = np.asarray(feats, dtype=np.float64)
        frames = np.asarray(frames, dtype=np.int64)
        classes = np.asarray(classes, dtype=np.int64)
        w = np.asarray(weights, dtype=np.float64)
        if classes.size and (classes.min() < 0 or classes.max() >= self.num_classes):
            bad = int(classes.max() if classes.max() >= self.num_classes else classes.min())
            raise LdaError(f"class {bad} is outside the {self.num_classes} classes of the stats")
        np.add.at(self.zero, classes, w)
        np.add.at(self.first, classes, w[:, None] * x[frames])
        per_frame = np.bincount(frames, weights=w, minlength=x.shape[0])
        self.second += (x * per_frame[:, None]).T @ x

    # -- files --------------------------------------------------------------------------------
    def write(self, w: TokenWriter) -> None:
        """LdaEstimate::Write: counts and sums as float, the within-class scatter packed."""
        w.token("<LDAACCS>")
        w.token("<VECSIZE>")
        w.int32(self.dim)
        w.token("<NUMCLASSES>")
        w.int32(self.num_classes)
        w.token("<ZERO_ACCS>")
        w.vector(self.zero)
        w.token("<FIRST_ACCS>")
        w.matrix(self.first)
        w.token("<SECOND_ACCS>")
        within = self.second.copy()
        for c in np.flatnonzero(self.zero != 0):
            within -= np.outer(self.first[c], self.first[c]) / self.zero[c]
        w.sp_matrix(within)
        w.token("</LDAACCS>")

    def add_from(self, r: TokenReader) -> None:
        """LdaEstimate::Read with add: the file's stats added to these (sizes must match)."""
        r.expect("<LDAACCS>")
        r.expect("<VECSIZE>")
        dim = r.int32("the feature dimension")
        r.expect("<NUMCLASSES>")
        num_classes = r.int32("the number of classes")
        if dim < 0 or num_classes < 0:
            raise r.fail("bad LDA statistics", f"dimension {dim}, {num_classes} classes")
        if self.dim == 0 and self.num_classes == 0:
            self.__init__(num_classes, dim)
        elif (num_classes, dim) != (self.num_classes, self.dim):
            raise LdaError(f"{r.name}: LDA statistics of {num_classes} classes and dimension "
                           f"{dim}, the others have {self.num_classes} and {self.dim}")
        zero = first = None
        while True:
            tok = r.token("an LDA statistics token")
            if tok == "</LDAACCS>":
                return
            if tok == "<ZERO_ACCS>":
                zero = r.vector("<ZERO_ACCS>").astype(np.float64)
                self.zero += self._sized(r, zero, (num_classes,), tok)
            elif tok == "<FIRST_ACCS>":
                first = r.matrix("<FIRST_ACCS>").astype(np.float64)
                self.first += self._sized(r, first, (num_classes, dim), tok)
            elif tok == "<SECOND_ACCS>":
                second = self._sized(r, r.sp_matrix("<SECOND_ACCS>"), (dim, dim), tok)
                if zero is None or first is None:
                    raise r.fail("bad LDA statistics", "<SECOND_ACCS> before the counts and sums")
                for c in np.flatnonzero(zero != 0):
                    second += np.outer(first[c], first[c]) / zero[c]
                self.second += second
            else:
                raise r.fail("bad LDA statistics", f"unexpected token {tok[:40]!r}")

    @staticmethod
    def _sized(r: TokenReader, a: np.ndarray, shape: tuple, what: str) -> np.ndarray:
        if tuple(a.shape) != shape:
            raise r.fail(f"bad {what}", f"shape {tuple(a.shape)}, the header says {shape}")
        return a

    # -- estimation ---------------------------------------------------------------------------
    def covariances(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(total covariance, between-class covariance, total mean, count): GetStats."""
        count = float(self.zero.sum())
        if not count > 0.0:
            raise LdaError("the LDA statistics hold no data (zero total count)")
        mean = self.first.sum(axis=0) / count
        total = self.second / count - np.outer(mean, mean)
        between = -np.outer(mean, mean)
        for c in np.flatnonzero(self.zero != 0):
            m = self.first[c] / self.zero[c]
            between += (self.zero[c] / count) * np.outer(m, m)
        return total, between, mean, count

    def estimate(self, opts: LdaOptions, log: Optional[logging.Logger] = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the transform, the full dim x dim transform, the singular values): Estimate."""
        log = log or logger
        dim, target = self.dim, int(opts.dim)
        if not 0 < target <= dim:
            raise LdaError(f"--dim={target}: must be between 1 and the feature dimension {dim}")
        if not (target < self.num_classes or opts.allow_large_dim):
            raise LdaError(f"--dim={target} needs more than {target} classes, the statistics "
                           f"have {self.num_classes} (the between-class covariance has rank at "
                           "most classes - 1; --allow-large-dim=true to go on)")
        total, between, mean, count = self.covariances()
        within = total - between
        try:
            chol = np.linalg.cholesky(within)
        except np.linalg.LinAlgError:
            smooth = 1.0e-3 * np.trace(within) / dim
            log.info("Cholesky failed (possibly not +ve definite), so adding %g to diagonal "
                     "and trying again.", smooth)
            try:
                chol = np.linalg.cholesky(within + smooth * np.eye(dim))
            except np.linalg.LinAlgError:
                raise LdaError("the within-class covariance is not positive definite even "
                               "after smoothing (constant feature dimensions?)") from None
        inv_chol = np.linalg.inv(chol)
        mid = inv_chol @ between @ inv_chol.T
        u, s, _ = np.linalg.svd(0.5 * (mid + mid.T))
        order = np.argsort(-s, kind="stable")
        s, u = s[order], u[:, order]
        log.info("Data count is %s", _g(count))
        log.info("LDA singular values are %s", log_vector(s))
        log.info("Sum of all singular values is %s", _g(s.sum()))
        log.info("Sum of selected singular values is %s", _g(s[:target].sum()))
        full = u.T @ inv_chol
        if opts.within_class_factor != 1.0:
            scale = np.sqrt((opts.within_class_factor + s) / (1.0 + s))
            full = full * scale[:, None]
        m = full[:target].astype(np.float32)
        mfull = full.astype(np.float32)
        if opts.remove_offset:
            m, mfull = _add_mean_offset(mean, m), _add_mean_offset(mean, mfull)
        return m, mfull, s


def _add_mean_offset(mean: np.ndarray, m: np.ndarray) -> np.ndarray:
    """AddMeanOffset: the column -M mean appended (in float, as Kaldi computes it)."""
    neg = -(m @ mean.astype(np.float32))
    return np.hstack([m, neg[:, None].astype(np.float32)])


def read_lda_stats(paths: list) -> LdaStats:
    """Sum the statistics files (rxfilenames) into one LdaStats, as est-lda reads them."""
    stats = LdaStats()
    add_objects(paths, stats)
    return stats


def write_lda_stats(wxfilename: str, stats: LdaStats, binary: bool = True) -> None:
    w = TokenWriter(binary, wxfilename)
    stats.write(w)
    write_object_bytes(wxfilename, w.getvalue(), binary)


def pdf_posteriors(tid2pdf: np.ndarray, post: list, what: str
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ConvertPosteriorToPdfs, flattened: (frame, pdf, weight) with the weights of the
    transition-ids of one pdf in a frame summed, ordered by frame then pdf."""
    frames = np.repeat(np.arange(len(post)), [len(p) for p in post])
    pairs = [pair for p in post for pair in p]
    if not pairs:
        return frames, frames.copy(), np.zeros(0)
    tids = np.fromiter((t for t, _ in pairs), dtype=np.int64, count=len(pairs))
    weights = np.fromiter((w for _, w in pairs), dtype=np.float64, count=len(pairs))
    if tids.min() < 1 or tids.max() >= tid2pdf.shape[0]:
        bad = int(tids.max() if tids.max() >= tid2pdf.shape[0] else tids.min())
        raise LdaError(f"{what}: transition-id {bad} is not in the model (1..."
                       f"{tid2pdf.shape[0] - 1}): posteriors from another model?")
    pdfs = tid2pdf[tids].astype(np.int64)
    num_pdfs = int(tid2pdf.max()) + 1
    keys, inverse = np.unique(frames * num_pdfs + pdfs, return_inverse=True)
    return keys // num_pdfs, keys % num_pdfs, np.bincount(inverse, weights=weights)


def acc_lda(model: str, feats_rspecifier: str, post_rspecifier: str, acc_out: str,
            rand_prune_threshold: float = 0.0, binary: bool = True, seed: int = 0,
            log: Optional[logging.Logger] = None) -> int:
    """Kaldi's acc-lda: LDA statistics of the features by pdf (posteriors over transition-ids
    converted to pdf posteriors), small weights randomly pruned (``--rand-prune``; seeded, so
    a rerun gives the same file). Returns the number of utterances done."""
    log = log or logger
    tm = read_transition_model(model)
    num_pdfs = int(tm.tid2pdf.max()) + 1
    rng = np.random.default_rng(seed)
    stats: Optional[LdaStats] = None
    done = failed = 0
    with open_features(feats_rspecifier) as reader, \
            RandomAccessReader(post_rspecifier, "post") as posts:
        for key, feats in reader:
            if key not in posts:
                log.warning("No posteriors for utterance %s", key)
                failed += 1
                continue
            post = posts[key]
            if stats is None:
                stats = LdaStats(num_pdfs, feats.shape[1])
            if feats.shape[0] != len(post):
                log.warning("Posterior vs. feats size mismatch %d vs. %d", feats.shape[0],
                            len(post))
                failed += 1
                continue
            if feats.shape[1] != stats.dim:
                log.warning("Feature dimension mismatch %d vs. %d", stats.dim, feats.shape[1])
                failed += 1
                continue
            frames, pdfs, weights = pdf_posteriors(tm.tid2pdf, post,
                                                   f"{post_rspecifier}: key {key}")
            weights = rand_prune(weights, rand_prune_threshold, rng)
            nz = weights != 0.0
            stats.accumulate(feats, frames[nz], pdfs[nz], weights[nz])
            done += 1
            if done % 100 == 0:
                log.info("Done %d utterances.", done)
    log.info("Done %d files, failed for %d", done, failed)
    if stats is None or done == 0:
        raise LdaError(f"no utterance of {feats_rspecifier} had posteriors in "
                       f"{post_rspecifier}: no statistics written")
    write_lda_stats(acc_out, stats, binary)
    log.info("Written statistics.")
    return done


def est_lda(lda_out: str, acc_files: list, opts: LdaOptions, binary: bool = True,
            full_out: str = "", log: Optional[logging.Logger] = None) -> np.ndarray:
    """Kaldi's est-lda: sum the statistics files, estimate, write the transform (and with
    ``full_out`` the full square one). Returns the transform."""
    stats = read_lda_stats(acc_files)
    m, mfull, _ = stats.estimate(opts, log)
    write_object(lda_out, m, "mat", binary)
    if full_out:
        write_object(full_out, mfull, "mat", binary)
    return m


def _g(x: float) -> str:
    return "{:.6g}".format(float(x))
