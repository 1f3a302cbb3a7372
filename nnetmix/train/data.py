"""Training utterances from Kaldi tables: (key, features, targets) triples.

nnet-train-frmshuff reads the features sequentially and looks the targets up by key
(RandomAccessPosteriorReader). :func:`read_utterances` does the same and yields
``(key, feats, targets)`` with ``targets`` None when the key has no targets (the trainer warns
``<utt>, missing targets`` and counts it, as Kaldi does). An MPI rank gives the trainer its own
shard: any iterable of such triples will do (``keys=`` restricts the table to a rank's
utterances, which nnetmix.parallel's partition picks).

Targets are pdf posteriors as ali-to-post writes them (``kind='post'``): every frame must be one
``(pdf, 1.0)`` pair and becomes an int32 per frame (the one-hot fast path; soft or weighted
posteriors are refused with a message). ``kind='ali'`` reads pdf alignments (int32 vectors,
ali-to-pdf's output) directly, which skips the per-frame posterior parsing.
"""
from __future__ import annotations

from typing import Iterator, Optional, Sequence

import numpy as np

from nnetmix.feat.pipeline import open_features
from nnetmix.kaldi import RandomAccessReader
from nnetmix.train.options import TrainError

__all__ = ["Utterance", "read_utterances", "posterior_to_targets", "TARGET_KINDS"]

#: (key: str, feats: (T, D) float32 array, targets: (T,) int32 array, or None when missing)
Utterance = tuple

TARGET_KINDS = ("post", "ali")


def posterior_to_targets(post: Sequence[Sequence[tuple[int, float]]], key: str,
                         where: str = "") -> np.ndarray:
    """One-hot posteriors (one (id, 1.0) pair per frame) -> int32 per frame."""
    n = len(post)
    out = np.empty(n, dtype=np.int32)
    for t, frame in enumerate(post):
        if len(frame) != 1 or frame[0][1] != 1.0:
            raise TrainError(f"{where}: utterance {key}, frame {t}: soft or weighted targets "
                             f"{list(frame)[:4]} are not supported (expected one (pdf, 1.0) pair "
                             "per frame, as ali-to-post writes; or use --targets-kind=ali)")
        out[t] = frame[0][0]
    return out


def read_utterances(feature_rspecifier: str, targets_rspecifier: str, kind: str = "post",
                    keys: Optional[set[str]] = None) -> Iterator[Utterance]:
    """Yield (key, feats, targets-or-None) in the order of the feature table.

    ``keys``: only these utterances (a shard); others are skipped without a word.
    """
    if kind not in TARGET_KINDS:
        raise TrainError(f"targets kind '{kind}': expected one of {', '.join(TARGET_KINDS)}")
    with RandomAccessReader(targets_rspecifier, "post" if kind == "post" else "ivec") as tgt, \
            open_features(feature_rspecifier) as feats:
        for key, mat in feats:
            if keys is not None and key not in keys:
                continue
            if key not in tgt:
                yield key, mat, None
                continue
            value = tgt[key]
            if kind == "post":
                targets = posterior_to_targets(value, key, targets_rspecifier)
            else:
                targets = np.asarray(value, dtype=np.int32)
            yield key, mat, targets
