"""Gaussian-level posteriors from posteriors over transition-ids, for a whole utterance at once.

Kaldi's statistics tools (gmm-acc-mllt, gmm-est-fmllr, gmm-post-to-gpost) walk every (frame,
transition-id, weight) entry and call the pdf's DiagGmm::ComponentPosteriors on the frame. Here
the entries are grouped by pdf and each pdf's component log-likelihoods come from one GEMM of the
entries' ``[x, x²]`` rows against the stacked ``[μ/σ²; -½/σ²]`` columns (nnetmix.hmm.
gmm_likelihood), so there is no per-frame Python. The result is flat: entry e's Gaussians are a
contiguous run of :attr:`EntryGaussPost.rows` equal to e, in the pdf's component order, which is
also the order Kaldi's GaussPost vectors use.

Also here: gmm-post-to-gpost (Kaldi's GaussPost tables, codec kind ``gpost``) and the reverse
flattening of a GaussPost read from a table.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterator, Optional, TextIO

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.feat.pipeline import open_features
from nnetmix.hmm.gmm_tools import GmmModel, check_feat_dim, read_model
from nnetmix.kaldi.table import RandomAccessReader
from nnetmix.kaldi.writer import TableWriter

__all__ = ["EntryGaussPost", "PostCounts", "entry_gauss_posteriors", "flatten_gpost",
           "natural_params", "post_to_gpost", "utterances_with_posts"]

logger = logging.getLogger(__name__)


@dataclass
class EntryGaussPost:
    """Per posterior entry e: ``frames[e]``, ``tids[e]``, ``weights[e]``, ``loglikes[e]`` (the
    pdf's log-likelihood of the frame). Per kept (entry, Gaussian) pair k: ``rows[k]`` (the
    entry), ``gauss[k]`` (index into the model's stacked Gaussians) and ``gamma[k]`` (the weight
    times the component posterior), grouped by pdf in increasing order."""

    frames: np.ndarray
    tids: np.ndarray
    weights: np.ndarray
    loglikes: np.ndarray
    rows: np.ndarray
    gauss: np.ndarray
    gamma: np.ndarray

    @property
    def tot_like(self) -> float:
        """Σ weight · log-likelihood: what the tools' "Average like" lines divide."""
        return float(self.weights @ self.loglikes)


def _flat_post(post: list, model: GmmModel, what: str) -> tuple[np.ndarray, ...]:
    frames = np.repeat(np.arange(len(post)), [len(p) for p in post])
    tids = np.fromiter((t for p in post for t, _ in p), np.int64, frames.size)
    weights = np.fromiter((w for p in post for _, w in p), np.float64, frames.size)
    n = model.tm.tid2pdf.shape[0]
    if tids.size and (tids.min() < 1 or tids.max() >= n):
        bad = int(tids.max() if tids.max() >= n else tids.min())
        raise FormatError(f"{what}: transition-id {bad} is not in the model {model.name} "
                          f"(1...{n - 1}): posteriors from another model?")
    return frames, tids, weights


def entry_gauss_posteriors(model: GmmModel, feats: np.ndarray, post: list,
                           what: str = "posteriors") -> EntryGaussPost:
    """Component posteriors of every (frame, transition-id, weight) entry of ``post`` (a list
    of frames of pairs), one GEMM per pdf present. ``what`` names the file and key in errors."""
    x = np.asarray(feats, dtype=np.float64)
    frames, tids, weights = _flat_post(post, model, what)
    loglikes = np.zeros(frames.size)
    if frames.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return EntryGaussPost(frames, tids, weights, loglikes, empty, empty, np.zeros(0))
    pdfs = model.tm.tid2pdf[tids].astype(np.int64)
    st = model.stacked
    rows, gauss, gamma = [], [], []
    for pdf in np.unique(pdfs):
        sel = np.flatnonzero(pdfs == pdf)
        lo, hi = int(st.offsets[pdf]), int(st.offsets[pdf + 1])
        xs = x[frames[sel]]
        ll = np.hstack([xs, xs * xs]) @ st.proj[:, lo:hi] + st.gconsts[lo:hi]
        top = ll.max(axis=1, keepdims=True)
        p = np.exp(ll - top)
        total = p.sum(axis=1, keepdims=True)
        loglikes[sel] = top[:, 0] + np.log(total[:, 0])
        rows.append(np.repeat(sel, hi - lo))
        gauss.append(np.tile(np.arange(lo, hi), sel.size))
        gamma.append((p / total * weights[sel, None]).ravel())
    return EntryGaussPost(frames, tids, weights, loglikes, np.concatenate(rows),
                          np.concatenate(gauss), np.concatenate(gamma))


def natural_params(model: GmmModel) -> tuple[np.ndarray, np.ndarray]:
    """(means_invvars, inv_vars) of all Gaussians in the stacked order, float64 copies of the
    float32 values the .mdl stores (what Kaldi's accumulators read)."""
    miv = np.concatenate([g.means_invvars.astype(np.float64) for g in model.am])
    inv = np.concatenate([g.inv_vars.astype(np.float64) for g in model.am])
    return miv, inv


def flatten_gpost(model: GmmModel, gpost: list, what: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A GaussPost (frames of (transition-id, component-posterior vector)) as (frame, stacked
    Gaussian, γ) arrays; a vector whose size is not its pdf's number of Gaussians is an
    error naming ``what``."""
    post = [[(t, 0.0) for t, _ in frame] for frame in gpost]
    frames, tids, _ = _flat_post(post, model, what)
    vecs = [np.asarray(v, dtype=np.float64) for frame in gpost for _, v in frame]
    if not vecs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    pdfs = model.tm.tid2pdf[tids].astype(np.int64)
    st = model.stacked
    sizes = np.array([v.size for v in vecs])
    want = st.offsets[pdfs + 1] - st.offsets[pdfs]
    bad = np.flatnonzero(sizes != want)
    if bad.size:
        e = int(bad[0])
        raise FormatError(f"{what}: frame {int(frames[e])}: a posterior vector of size "
                          f"{int(sizes[e])} for pdf {int(pdfs[e])}, which has {int(want[e])} "
                          "Gaussians (Gaussian posteriors from another model?)")
    starts = np.repeat(st.offsets[pdfs] - (np.cumsum(sizes) - sizes), sizes)
    gauss = starts + np.arange(int(sizes.sum()))
    return np.repeat(frames, sizes), gauss, np.concatenate(vecs)


@dataclass
class PostCounts:
    """The counts of Kaldi's "Done N files, M with no posteriors, K with other errors." line."""

    done: int = 0
    no_post: int = 0
    other: int = 0


def utterances_with_posts(model: GmmModel, feats_rspecifier: str, post_rspecifier: str,
                          counts: PostCounts, kind: str = "post", missing: str = "",
                          log: Optional[logging.Logger] = None
                          ) -> Iterator[tuple[str, np.ndarray, list]]:
    """Kaldi's statistics-tool loop: (key, features, posteriors) of each utterance of the
    feature table that has posteriors (``missing``, when given, is the warning for one that has
    none; it gets the key) of its length (else Kaldi's warning, counted as another error).
    Features of the wrong dimension for ``model`` are a one-line error naming the file and key.
    Counts ``done`` for every utterance yielded."""
    log = log or logger
    with open_features(feats_rspecifier) as reader, \
            RandomAccessReader(post_rspecifier, kind) as posts:
        for key, feats in reader:
            if key not in posts:
                if missing:
                    log.warning(missing, key)
                counts.no_post += 1
                continue
            post = posts[key]
            if len(post) != feats.shape[0]:
                log.warning("%s has wrong size %d vs. %d",
                            "GauPost" if kind == "gpost" else "Posterior vector", len(post),
                            feats.shape[0])
                counts.other += 1
                continue
            check_feat_dim(feats, model, key, feats_rspecifier)
            counts.done += 1
            yield key, feats, post


def post_to_gpost(model_in: str, feats_rspecifier: str, post_rspecifier: str,
                  gpost_wspecifier: str, stream: Optional[TextIO] = None,
                  log: Optional[logging.Logger] = None) -> int:
    """Kaldi's gmm-post-to-gpost; returns the number of utterances done. Its two summary lines
    go to ``stream`` (stderr) without a LOG prefix, as Kaldi's std::cerr lines do."""
    import sys
    log = log or logger
    stream = stream if stream is not None else sys.stderr
    model = read_model(model_in)
    counts = PostCounts()
    tot_like = tot_t = 0.0
    with TableWriter(gpost_wspecifier, "gpost") as writer:
        for key, feats, post in utterances_with_posts(model, feats_rspecifier, post_rspecifier,
                                                      counts, log=log):
            ep = entry_gauss_posteriors(model, feats, post, f"{post_rspecifier}: key {key}")
            order = np.argsort(ep.rows, kind="stable")
            pieces = np.split(ep.gamma[order].astype(np.float32),
                              np.cumsum(np.bincount(ep.rows, minlength=ep.frames.size))[:-1])
            gpost: list = [[] for _ in range(len(post))]
            for e, (t, tid) in enumerate(zip(ep.frames.tolist(), ep.tids.tolist())):
                gpost[t].append((tid, pieces[e]))
            writer.write(key, gpost)
            tot_like += ep.tot_like
            tot_t += float(ep.weights.sum())
    stream.write(f"Num frames {_g(tot_t)}, avg like per frame (Gaussian only) = "
                 f"{_g(tot_like / tot_t) if tot_t else 'nan'}\n")
    log.info("Done %d files, %d with no posteriors, %d with other errors.", counts.done,
             counts.no_post, counts.other)
    stream.write("Done converting post to gpost\n")
    return counts.done


def _g(x: float) -> str:
    return "{:.6g}".format(float(x))
