"""Posterior tables made, scaled, summed and weighted: Kaldi's prob-to-post, logprob-to-post,
post-to-weights, post-to-tacc, post-to-pdf-post, scale-post, sum-post and weight-post
(src/bin/, hmm/posterior.cc).

A posterior is a list of frames, each a list of (id, weight) pairs (nnetmix.kaldi.codec);
weights are float32 (BaseFloat) and the arithmetic is done in float32 as Kaldi's. Each function
is one binary's loop: a key it cannot do is warned about and counted, and it returns the
:class:`~nnetmix.kaldi.copy.Counts` whose ``ok`` is the binary's exit status (some key done).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

import numpy as np

from nnetmix.errors import FormatError, UsageError
from nnetmix.kaldi.copy import Counts, is_rspecifier, map_table
from nnetmix.kaldi.objects import write_object
from nnetmix.kaldi.table import RandomAccessReader, SequentialReader
from nnetmix.kaldi.transition_model import read_transition_model
from nnetmix.kaldi.vector_ops import scale_posterior
from nnetmix.options import option

__all__ = ["PostPruneOptions", "prob_to_post", "post_to_tacc", "post_to_pdf_post", "post_to_weights", "scale_post", "merge_posteriors", "sum_post",
           "weight_post"]

logger = logging.getLogger(__name__)


@dataclass
class PostPruneOptions:
    """prob-to-post's and logprob-to-post's options (Kaldi's names, defaults and help)."""

    min_post: float = option(0.01, "Minimum posterior we will output (smaller ones are "
                             "pruned).  Also see --random-prune")
    random_prune: bool = option(True, "If true, prune posteriors with a randomized method that "
                                "preserves expectations.")


def prob_to_post(rspecifier: str, wspecifier: str, min_post: float = 0.01,
                 random_prune: bool = True, seed: int = 0, log: bool = False) -> Counts:
    """Kaldi's prob-to-post (``log``: logprob-to-post, the entries exponentiated in float32
    first, as its Exp(BaseFloat)): each row's entries of at least ``min_post``; with
    ``random_prune`` a smaller p is kept as ``min_post`` with probability p / min_post (which
    keeps expectations). The draws come from numpy's generator seeded with ``seed``, one per
    smaller entry in row order, where Kaldi's come from the C library's rand(): the same
    distribution, not the same draws."""
    rng = np.random.default_rng(seed)
    floor = np.float32(min_post)

    def one(key: str, probs: np.ndarray) -> list:
        probs = np.asarray(probs, np.float32)
        if log:
            probs = np.exp(probs)
        keep = probs >= floor
        value = probs.copy()
        if random_prune:
            small = np.flatnonzero(~keep)
            draws = rng.random(small.size)
            lucky = small[(probs.flat[small] / floor).astype(np.float64) >= draws]
            keep.flat[lucky] = True
            value.flat[lucky] = floor
        return [[(int(j), float(value[i, j])) for j in np.flatnonzero(keep[i])]
                for i in range(probs.shape[0])]

    return map_table(rspecifier, wspecifier, one, "mat", "post",
                     summary="Converted {done} log-prob matrices to posteriors.")


def post_to_weights(rspecifier: str, wspecifier: str) -> Counts:
    """Kaldi's post-to-weights: each frame's weight is the sum of its posteriors."""
    def one(key: str, post: list) -> np.ndarray:
        out = np.zeros(len(post), np.float32)
        for i, frame in enumerate(post):
            total = np.float32(0.0)
            for _, w in frame:
                total = np.float32(total + np.float32(w))
            out[i] = total
        return out

    return map_table(rspecifier, wspecifier, one, "post", "vec",
                     summary="Done converting {done} posteriors to weights.")


def scale_post(rspecifier: str, scale: str, wspecifier: str) -> Counts:
    """Kaldi's scale-post: one scale for all (a number), or per key from a table of floats
    (an rspecifier); a key without a scale is counted and not written."""
    scales: Optional[RandomAccessReader] = None
    if is_rspecifier(scale):
        scales = RandomAccessReader(scale, "float")
    else:
        try:
            factor = float(scale)
        except ValueError:
            raise UsageError(f"Bad second argument {scale} (expected scale or scale "
                             "rspecifier)") from None
    try:
        def one(key: str, post: list) -> Optional[list]:
            if scales is None:
                return scale_posterior(post, factor)
            if key not in scales:
                logger.warning("No scale for utterance %s in %s", key, scale)
                return None
            return scale_posterior(post, scales[key])

        return map_table(rspecifier, wspecifier, one, "post",
                         summary="Done {done} posteriors;  {err} had no scales.")
    finally:
        if scales is not None:
            scales.close()


def _merge_frame(entries: list) -> list:
    """MergePairVectorSumming (util/stl-utils.h): sorted by id, weights of one id summed in
    float32, zero sums dropped."""
    out: list = []
    for i, w in sorted(entries, key=lambda e: e[0]):
        if out and out[-1][0] == i:
            out[-1][1] = np.float32(out[-1][1] + np.float32(w))
        else:
            if out and out[-1][1] == 0:
                out.pop()
            out.append([i, np.float32(w)])
    if out and out[-1][1] == 0:
        out.pop()
    return [(i, float(w)) for i, w in out]


def merge_posteriors(post1: list, post2: list, merge: bool = True, drop_frames: bool = False
                     ) -> tuple[list, int]:
    """Kaldi's MergePosteriors (hmm/posterior.cc): each frame's entries of both, merged by id
    (``merge``) or just sorted; a frame whose two sets share no id is disjoint, and emptied
    with ``drop_frames``. Returns the merged posterior and the number of disjoint frames."""
    out, disjoint = [], 0
    for f1, f2 in zip(post1, post2):
        both = list(f1) + list(f2)
        frame = _merge_frame(both) if merge else sorted(both)
        if not {i for i, _ in f1} & {i for i, _ in f2}:
            disjoint += 1
            if drop_frames:
                frame = []
        out.append(frame)
    return out, disjoint


def sum_post(rspecifier1: str, rspecifier2: str, wspecifier: str, scale1: float = 1.0,
             scale2: float = 1.0, merge: bool = True, drop_frames: bool = False) -> Counts:
    """Kaldi's sum-post: per key of the first table, scale1 * its posterior plus scale2 * the
    second table's; a key the second lacks, or with another number of frames, is skipped."""
    frames = [0, 0]
    with RandomAccessReader(rspecifier2, "post") as second:
        def one(key: str, post1: list) -> Optional[list]:
            if key not in second:
                logger.warning("Second set of posteriors has nothing for key %s, producing no "
                               "output.", key)
                return None
            post2 = second[key]
            if len(post2) != len(post1):
                logger.warning("Posteriors have mismatched sizes %d vs. %d for key %s",
                               len(post1), len(post2), key)
                return None
            out, disjoint = merge_posteriors(scale_posterior(post1, scale1),
                                             scale_posterior(post2, scale2), merge, drop_frames)
            frames[0] += len(post1)
            frames[1] += disjoint
            return out

        def summary(counts: Counts) -> None:
            share = frames[1] * 100.0 / frames[0] if frames[0] else float("nan")
            logger.info("Processed %d frames; for %d frames there was no overlap, i.e. %g%% "
                        "(e.g. numerator path not in denominator lattice)", frames[0], frames[1],
                        share)
            logger.info("Done adding %d posteriors;  %d with errors.", counts.done, counts.err)

        return map_table(rspecifier1, wspecifier, one, "post", summary=summary)


def weight_post(post_rspecifier: str, weights_rspecifier: str, wspecifier: str,
                length_tolerance: int = 2) -> Counts:
    """Kaldi's weight-post: each frame's posteriors times that frame's weight (a frame of
    weight 0 becomes empty); weights up to ``length_tolerance`` frames short or long are
    tolerated, frames past the weights' end weighted 0 (Kaldi reads past its vector's end)."""
    with RandomAccessReader(weights_rspecifier, "vec") as weights_table:
        def one(key: str, post: list) -> Optional[list]:
            if key not in weights_table:
                logger.warning("No weights for utterance %s", key)
                return None
            weights = np.asarray(weights_table[key], np.float32)
            if abs(weights.size - len(post)) > length_tolerance:
                logger.warning("Weights for utterance %s have wrong size, %d vs. %d", key,
                               weights.size, len(post))
                return None
            out = []
            for i, frame in enumerate(post):
                w = weights[i] if i < weights.size else np.float32(0.0)
                out.append([] if w == 0 else
                           [(j, float(np.float32(p) * w)) for j, p in frame])
            return out

        return map_table(post_rspecifier, wspecifier, one, "post",
                         summary="Scaled {done} posteriors; errors on {err}")


def post_to_tacc(model_rx: str, rspecifier: str, wxfilename: str, binary: bool = True,
                 per_pdf: bool = False) -> int:
    """Kaldi's post-to-tacc: the posteriors' weights summed (in double) per transition-id,
    index 0 unused, or per pdf with ``per_pdf``; written as one float vector. A transition-id
    outside the model is one error naming the key. ``per_pdf`` sums every transition-id, where
    Kaldi's loop stops one short and leaves the last one's count out. Returns how many
    posteriors were read (nothing is written when none was)."""
    tm = read_transition_model(model_rx)
    n = tm.num_transition_ids
    accs = np.zeros(n + 1)
    done = 0
    with SequentialReader(rspecifier, "post") as reader:
        for key, post in reader:
            for frame in post:
                for tid, weight in frame:
                    if not 0 < tid <= n:
                        raise FormatError(f"{rspecifier}: Invalid transition-id {tid} "
                                          f"encountered for utterance {key} (the model "
                                          f"{model_rx} has {n})")
                    accs[tid] += weight
            done += 1
    if not done:
        raise FormatError(f"{rspecifier}: no posteriors, so {wxfilename} is not written")
    if per_pdf:
        logger.info("accumulate counts per pdf-id")
        pdf_accs = np.zeros(tm.num_pdfs)
        np.add.at(pdf_accs, tm.tid2pdf[1:].astype(np.int64), accs[1:])
        accs = pdf_accs
    write_object(wxfilename, accs.astype(np.float32), "vec", binary)
    logger.info("Done computing transition stats over %d utterances; wrote stats to %s", done,
                wxfilename)
    return done


def post_to_pdf_post(model_rx: str, rspecifier: str, wspecifier: str) -> Counts:
    """Kaldi's post-to-pdf-post (ConvertPosteriorToPdfs): per frame, the weights of the
    transition-ids of each pdf summed in float32 in the frame's order, the pdfs in increasing
    order (Kaldi's std::map), pdfs whose sum is exactly 0 left out. A transition-id outside
    the model is one error naming the key (Kaldi asserts)."""
    tm = read_transition_model(model_rx)
    tid2pdf = tm.tid2pdf.tolist()
    n = tm.num_transition_ids

    def one(key: str, post: list) -> list:
        out = []
        for frame in post:
            sums: dict[int, np.float32] = {}
            for tid, weight in frame:
                if not 0 < tid <= n:
                    raise FormatError(f"{rspecifier}: utterance {key}: transition-id {tid} is "
                                      f"not in the model {model_rx} (1...{n})")
                pdf = tid2pdf[tid]
                sums[pdf] = np.float32(sums.get(pdf, np.float32(0.0)) + np.float32(weight))
            out.append([(pdf, float(w)) for pdf, w in sorted(sums.items()) if w != 0.0])
        return out

    return map_table(rspecifier, wspecifier, one, "post", "post",
                     summary="Done converting posteriors to pdf-level posteriors for {done} "
                             "utterances.")
