"""How alike two feature tables are: Kaldi's compare-feats (src/featbin/compare-feats.cc).

Per dimension d, over the utterances of the first table found in the second, the similarity
is ``2 <x_d, y_d> / (<x_d, x_d> + <y_d, y_d>)`` (1.0 for identical features, smaller the more
they differ; products in float64 as Kaldi's), and the overall similarity their mean. A key
missing from the second table or of another dimension is a warning and counted as an error, as
in Kaldi; two matrices of one key with different numbers of frames, where Kaldi stops on an
assertion, are one error naming the key and both lengths; so is a run that compared nothing
(Kaldi exits 1 there, as for features that differ, with no error).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.feat.pipeline import open_features
from nnetmix.kaldi import RandomAccessReader
from nnetmix.log import log_vector
from nnetmix.options import option

__all__ = ["CompareOptions", "FeatureSimilarity", "compare_feats"]

logger = logging.getLogger(__name__)


@dataclass
class CompareOptions:
    """compare-feats' option (Kaldi's name and default)."""

    threshold: float = option(0.99, "Similarity threshold, affects return status")


@dataclass
class FeatureSimilarity:
    """What compare-feats found: per-dimension and overall similarity, and the counts."""

    per_dim: np.ndarray
    overall: float
    done: int
    err: int
    similar: bool


def compare_feats(rspecifier1: str, rspecifier2: str,
                  opts: CompareOptions | None = None) -> FeatureSimilarity:
    """Compare the utterances of ``rspecifier1`` with the same keys of ``rspecifier2``, logging
    Kaldi's lines; ``similar`` when the overall similarity reaches the threshold (Kaldi's exit
    status 0)."""
    opts = opts or CompareOptions()
    done = err = 0
    prod1 = prod2 = cross = np.zeros(0)
    with open_features(rspecifier1) as first, RandomAccessReader(rspecifier2) as second:
        for key, a in first:
            if key not in second:
                logger.warning("Second table has no feature for utterance %s", key)
                err += 1
                continue
            b = second[key]
            if a.shape[1] != b.shape[1]:
                logger.warning("Feature dimensions differ for utterance %s, %d vs. %d, skipping "
                               " utterance.%s", key, a.shape[1], b.shape[1], key)
                err += 1
                continue
            if a.shape[0] != b.shape[0]:
                raise FormatError(f"{rspecifier1} and {rspecifier2}: utterance {key} has "
                                  f"{a.shape[0]} frames in the first and {b.shape[0]} in the "
                                  "second (compare-feats compares frame by frame)")
            if done == 0:
                prod1, prod2, cross = (np.zeros(a.shape[1]) for _ in range(3))
            x, y = np.asarray(a, np.float64), np.asarray(b, np.float64)
            prod1 += np.einsum("td,td->d", x, x)
            prod2 += np.einsum("td,td->d", y, y)
            cross += np.einsum("td,td->d", x, y)
            done += 1
    logger.info("self-product of 1st features for each column dimension: %s",
                log_vector(prod1))
    logger.info("self-product of 2nd features for each column dimension: %s",
                log_vector(prod2))
    logger.info("cross-product for each column dimension: %s", log_vector(cross))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_dim = 2.0 * cross / (prod1 + prod2)
        overall = float(per_dim.sum() / len(per_dim)) if len(per_dim) else float("nan")
    logger.info("Similarity metric for each dimension %s (1.0 means identical, the smaller the "
                "more different)", log_vector(per_dim))
    logger.info("Overall similarity for the two feats is:%g (1.0 means identical, the smaller "
                "the more different)", overall)
    logger.info("Processed %d feature files, %d had errors.", done, err)
    if not done:
        raise FormatError(f"{rspecifier1}: none of its utterances is in {rspecifier2} with the "
                          "same dimension (see the warnings), so nothing was compared")
    similar = overall >= opts.threshold
    if similar:
        logger.info("Features are considered similar since %g >= %g", overall, opts.threshold)
    else:
        logger.info("Features are considered dissimilar since %g < %g", overall,
                    opts.threshold)
    return FeatureSimilarity(per_dim, overall, done, err, similar)
