"""nnet-forward: the network's output per utterance, optionally as log-likelihoods for decoding.

Kaldi's nnet-forward (src/nnetbin/nnet-forward.cc) with PdfPrior (src/nnet/nnet-pdf-prior.cc):

* ``--no-softmax``: drop a final <Softmax> (pre-softmax activations; decoding them gives the
  same lattices as log-posteriors); ``--apply-log``: log(y + 1e-20) (a warning when the output
  does not look like probabilities); the two together are refused.
* ``--class-frame-counts`` (ali_train_pdf.counts): subtract ``prior_scale * log(c / sum c)``.
  Counts below ``prior_cutoff`` are raised to it and their classes get a log-prior of about
  FLT_MAX/2 (so their log-likelihood is about -1.7e38: never chosen, no NaN), as Kaldi does.
* NaN or Inf in the features, the transformed features or the output is an error naming the
  utterance (:class:`~nnetmix.nnet.NnetError`).
* A recurrent network (<LstmProjected>, <BlstmProjected>) runs each utterance as one stream from
  a reset state, or in context-sensitive chunks with :class:`ChunkOptions` (``--chunk-size``
  ...; :mod:`nnetmix.nnet.chunked`); the feature transform still sees the whole utterance.

Inference lives beside the network code; training (nnetmix.train) shares the network, not this.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from typing import Optional

import numpy as np

from nnetmix.feat.pipeline import open_features
from nnetmix.kaldi import TableWriter, read_object
from nnetmix.kernels import get_backend
from nnetmix.nnet.chunked import ChunkOptions, is_recurrent, recurrent_forward
from nnetmix.nnet.components import Softmax
from nnetmix.nnet.network import Nnet, read_nnet
from nnetmix.nnet.options import NnetError
from nnetmix.options import option

__all__ = ["ForwardOptions", "ChunkOptions", "PdfPrior", "nnet_forward", "forward_table"]

logger = logging.getLogger(__name__)

_FLT_MAX_HALF = np.float32(np.finfo(np.float32).max / 2)


@dataclasses.dataclass
class ForwardOptions:
    feature_transform: str = option("", "Feature transform in front of main network (in "
                                    "nnet format)")
    no_softmax: bool = option(False, "Removes the last component with Softmax, if found. The "
                              "pre-softmax activations are the output of the network. Decoding "
                              "them leads to the same lattices as if we had used 'log-posteriors'.")
    apply_log: bool = option(False, "Transform NN output by log()")
    class_frame_counts: str = option("", "Vector with frame-counts of pdfs to compute log-priors. "
                                     "(priors are typically subtracted from log-posteriors or "
                                     "pre-softmax activations)")
    prior_scale: float = option(1.0, "Scaling factor to be applied on pdf-log-priors")
    prior_cutoff: float = option(1e-10, "Classes with priors lower than cutoff will have "
                                 "0 likelihood")


class PdfPrior:
    """log priors from class frame counts; ``subtract(loglikes)`` in place."""

    def __init__(self, counts: np.ndarray, prior_scale: float = 1.0, prior_cutoff: float = 1e-10,
                 name: str = "class frame counts"):
        c = np.array(counts, dtype=np.float64).ravel()
        if c.size == 0:
            raise NnetError(f"{name}: empty counts vector")
        low = c < prior_cutoff
        if low.any():
            logger.warning("%d out of %d classes have counts lower than %g", int(low.sum()),
                           c.size, prior_cutoff)
        c[low] = prior_cutoff
        logp = np.log(c / c.sum())
        mask = np.where(low, _FLT_MAX_HALF, np.float32(0))
        self.log_priors = (logp.astype(np.float32) + mask).astype(np.float32)
        self.prior_scale = float(prior_scale)

    @classmethod
    def read(cls, rxfilename: str, prior_scale: float = 1.0,
             prior_cutoff: float = 1e-10) -> "PdfPrior":
        logger.info("Computing pdf-priors from : %s", rxfilename)
        return cls(read_object(rxfilename, "vec"), prior_scale, prior_cutoff, rxfilename)

    def subtract(self, loglikes: np.ndarray, key: str = "") -> None:
        if loglikes.shape[1] != self.log_priors.size:
            raise NnetError(f"utterance {key}: the network has {loglikes.shape[1]} outputs, the "
                             f"class frame counts have {self.log_priors.size} entries")
        loglikes += np.float32(-self.prior_scale) * self.log_priors[None, :]


def _finite(a: np.ndarray, what: str, key: str) -> None:
    if not np.isfinite(a).all():
        raise NnetError(f"NaN or inf found in {what} for {key}")


def nnet_forward(nnet: Nnet, feats: np.ndarray, opts: ForwardOptions,
                 transform: Optional[Nnet] = None, prior: Optional[PdfPrior] = None,
                 key: str = "", chunk: Optional[ChunkOptions] = None) -> np.ndarray:
    """The output matrix (host float32) for one utterance's features; ``chunk`` applies to
    recurrent networks only (None: each utterance whole)."""
    if opts.apply_log and opts.no_softmax:
        raise NnetError("Cannot use both --apply-log=true --no-softmax=true, use only one of "
                         "the two!")
    x = np.asarray(feats, dtype=np.float32)
    _finite(x, "features", key)
    if transform is not None:
        if x.shape[1] != transform.input_dim:
            raise NnetError(f"utterance {key}: feature dim {x.shape[1]}, the feature "
                             f"transform's input dim is {transform.input_dim}")
        tb = transform._be()
        x = tb.to_host(transform.propagate(tb.asarray(x, dtype=np.float32)))
        _finite(x, "transformed-features", key)
    if x.shape[1] != nnet.input_dim:
        raise NnetError(f"utterance {key}: feature dim {x.shape[1]}, the network's input dim "
                         f"is {nnet.input_dim}")
    be = nnet._be()
    soft = isinstance(nnet.components[-1], Softmax) if nnet.components else False
    through = not (opts.no_softmax and soft)
    if is_recurrent(nnet):
        y = recurrent_forward(nnet, x, chunk or ChunkOptions(), through_softmax=through)
    else:
        y = np.asarray(be.to_host(nnet.propagate(be.asarray(x, dtype=nnet.dtype),
                                                 through_softmax=through)), dtype=np.float32)
    _finite(y, "nn-output", key)
    if opts.apply_log:
        if not (y.min() >= 0.0 and y.max() <= 1.0):
            logger.warning("Applying 'log()' to data which don't seem to be probabilities,%s", key)
        y = np.log(y + np.float32(1e-20)).astype(np.float32)
    if prior is not None:
        prior.subtract(y, key)
    _finite(y, "final output nn-output", key)
    return y


def forward_table(model: str, feature_rspecifier: str, feature_wspecifier: str,
                  opts: ForwardOptions, backend: str = "cpu",
                  chunk: Optional[ChunkOptions] = None) -> int:
    """nnet-forward over a table; returns the number of utterances written."""
    if opts.apply_log and opts.no_softmax:
        raise NnetError("Cannot use both --apply-log=true --no-softmax=true, use only one of "
                         "the two!")
    if chunk is not None:
        chunk.check()
    nnet = read_nnet(model).to_backend(get_backend(backend))
    if chunk is not None and chunk.chunk_size > 0:
        if is_recurrent(nnet):
            logger.info("Forwarding in chunks of %d frames, context %d left %d right, overlap %d",
                        chunk.chunk_size, chunk.chunk_left_context, chunk.chunk_right_context,
                        chunk.chunk_overlap)
        else:
            logger.info("--chunk-size=%d ignored: %s has no recurrent component", chunk.chunk_size,
                        model)
    if opts.no_softmax:
        if nnet.components and isinstance(nnet.components[-1], Softmax):
            logger.info("Removing <Softmax> from the nnet %s", model)
        else:
            last = nnet.components[-1].marker if nnet.components else "nothing"
            logger.warning("Last component 'NOT-REMOVED' by --no-softmax=true, the component "
                           "was %s", last)
    transform = None
    if opts.feature_transform:
        transform = read_nnet(opts.feature_transform).to_backend(get_backend("cpu"))
    prior = None
    if opts.class_frame_counts:
        prior = PdfPrior.read(opts.class_frame_counts, opts.prior_scale, opts.prior_cutoff)
    t0 = time.perf_counter()
    done = frames = 0
    with open_features(feature_rspecifier) as reader, \
            TableWriter(feature_wspecifier, "mat") as writer:
        for key, mat in reader:
            writer.write(key, nnet_forward(nnet, mat, opts, transform, prior, key, chunk))
            done += 1
            frames += int(mat.shape[0])
    el = max(time.perf_counter() - t0, 1e-9)
    logger.info("Done %d files in %gmin, (fps %g)", done, el / 60, frames / el)
    return done
