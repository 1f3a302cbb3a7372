"""The nnet1 feature transform: splice, then global CMVN as <AddShift> + <Rescale>.

Kaldi's steps/nnet/train.sh builds ``final.feature_transform`` in three steps: ``nnet-initialize``
of a ``<Splice> <BuildVector> -5:5 </BuildVector>`` prototype, ``nnet-forward`` of (up to) 10k
training utterances through it piped into ``compute-cmvn-stats``, and ``cmvn-to-nnet`` of those
stats concatenated behind the splice. :func:`build_feature_transform` does the same in one call
(the same bytes), bin/make-feature-transform.py runs it for train.sh and pretrain_dbn.sh;
:func:`cmvn_to_nnet` is cmvn-to-nnet (src/nnetbin/cmvn-to-nnet.cc).
"""
from __future__ import annotations

import logging
from typing import Iterable

import numpy as np

from nnetmix.feat.cmvn import acc_cmvn_stats
from nnetmix.feat.pipeline import first_keys, open_features
from nnetmix.nnet.components import AddShift, Rescale, Splice
from nnetmix.nnet.hostops import splice_index
from nnetmix.nnet.network import Nnet
from nnetmix.nnet.options import NnetError

__all__ = ["cmvn_to_nnet", "splice_nnet", "build_feature_transform",
           "feature_transform_from_table"]

logger = logging.getLogger(__name__)


def cmvn_to_nnet(stats: np.ndarray, std_dev: float = 1.0, var_floor: float = 1e-10,
                 learn_rate_coef: float = 0.0, name: str = "cmvn stats") -> Nnet:
    """<AddShift> shift = -mean and <Rescale> scale = std_dev / sqrt(var) from 2 x (D+1) stats.

    Arithmetic as cmvn-to-nnet.cc: mean and variance rounded to float from the double stats
    (``mean * mean`` in float), the variance floored at ``var_floor`` with a warning, then
    ``std_dev / sqrt(var)`` in double, rounded to float once. In float throughout, about one
    <Rescale> value in six differed from Kaldi's in the 7th digit.
    """
    s = np.asarray(stats, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != 2 or s.shape[1] < 2:
        raise NnetError(f"{name}: expected CMVN stats of shape 2 x (dim+1), got {s.shape}")
    dim = s.shape[1] - 1
    count = s[0, dim]
    if not count > 0:
        raise NnetError(f"{name}: frame count {count} in the stats, expected > 0")
    mean = (s[0, :dim] / count).astype(np.float32)
    var = (s[1, :dim] / count - (mean * mean).astype(np.float64)).astype(np.float32)
    low = var <= np.float32(var_floor)
    for d in np.flatnonzero(low):
        logger.warning("Very small variance %s flooring to %s (dim %d)", var[d], var_floor, d)
    var[low] = np.float32(var_floor)
    scale = (np.float64(np.float32(std_dev)) / np.sqrt(var.astype(np.float64))
             ).astype(np.float32)
    return Nnet([AddShift(dim, dim, -mean, learn_rate_coef),
                 Rescale(dim, dim, scale, learn_rate_coef)])


def splice_nnet(feat_dim: int, splice: int = 5) -> Nnet:
    """``<Splice> <InputDim> D <OutputDim> (2s+1)D <BuildVector> -s:s </BuildVector>``."""
    offsets = np.arange(-splice, splice + 1, dtype=np.int32)
    return Nnet([Splice(feat_dim, feat_dim * offsets.size, offsets)])


def build_feature_transform(feats: Iterable[np.ndarray], splice: int = 5, std_dev: float = 1.0,
                            var_floor: float = 1e-10, max_utts: int = 10000,
                            source: str = "build_feature_transform") -> Nnet:
    """Splice +/-``splice`` then global CMVN estimated on the spliced frames of up to
    ``max_utts`` utterances (train.sh's train.scp.10k), as one network."""
    stats = None
    offsets = None
    dim = None
    n = 0
    for mat in feats:
        if n >= max_utts:
            break
        x = np.asarray(mat, dtype=np.float32)
        if x.ndim != 2 or x.shape[0] == 0:
            continue
        if dim is None:
            dim = x.shape[1]
            offsets = np.arange(-splice, splice + 1)
        elif x.shape[1] != dim:
            raise NnetError(f"build_feature_transform: utterance {n + 1} has dim {x.shape[1]}, "
                            f"the first had {dim}")
        spliced = x[splice_index(x.shape[0], offsets)].reshape(x.shape[0], -1)
        stats = acc_cmvn_stats(spliced, stats)
        n += 1
    if stats is None:
        raise NnetError(f"{source}: no features to estimate the CMVN from")
    logger.info("Global CMVN of the spliced features from %d utterances, %d frames", n,
                int(stats[0, -1]))
    return splice_nnet(dim, splice).concat(cmvn_to_nnet(stats, std_dev, var_floor))


def feature_transform_from_table(rspecifier: str, splice: int = 5, std_dev: float = 1.0,
                                 var_floor: float = 1e-10, max_utts: int = 10000) -> Nnet:
    """:func:`build_feature_transform` over the first ``max_utts`` utterances of a feature
    table (any rspecifier or ``pipeline:<file.json>``): of its utterance list when the keys are
    known, as train.sh's ``head -n 10000`` list was, so the others are never read."""
    with open_features(rspecifier, first_keys(rspecifier, max_utts)) as reader:
        return build_feature_transform((m for _, m in reader), splice, std_dev, var_floor,
                                       max_utts, rspecifier)
