"""align-equal-compiled, gmm-align-compiled and align-compiled-mapped over Kaldi tables (src/bin,
src/gmmbin); align-compiled-mapped reads the acoustics as log-likelihood matrices (a DNN's).

Graphs come from compile-train-graphs (:mod:`nnetmix.hmm.graphs`: no transition probabilities
in them); features from any rspecifier, read with random access by the graph's key as Kaldi
does; alignments go out as int-vector tables. The per-utterance work is
:func:`nnetmix.hmm.gmm_align.align_utterance` (FasterDecoder through kaldi-hmm-gmm's
AlignUtteranceWrapper), with the current model's transition log-probabilities scaled as
gmm-align-compiled's AddTransitionProbs (--transition-scale, --self-loop-scale) and the
acoustics scaled once by --acoustic-scale.

A failed utterance (no final state reached even with --retry-beam, or too short for its
transcript) is warned about by key, counted, and left out of the alignment archive, as Kaldi
does; ``Done N, errors on M`` is the line scripts read.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.feat.pipeline import PIPELINE_PREFIX, FeaturePipeline, is_pipeline
from nnetmix.hmm.fst_labels import compact_input_labels
from nnetmix.hmm.gmm_align import (AlignOptions, align_utterance, equal_align_graph,
                                   scaled_transition_log_probs)
from nnetmix.hmm.gmm_likelihood import StackedGmms, gauss_loglikes
from nnetmix.hmm.gmm_tools import check_feat_dim, read_model
from nnetmix.hmm.graphs import iter_graphs
from nnetmix.kaldi.specifier import parse_rspecifier
from nnetmix.kaldi.table import RandomAccessReader, SequentialReader
from nnetmix.kaldi.transition_model import read_transition_model
from nnetmix.kaldi.writer import TableWriter
from nnetmix.log import vlog

__all__ = ["AlignCounts", "SortedLookup", "open_lookup", "pdf_loglikes_np",
           "align_equal_compiled", "align_compiled", "align_compiled_mapped"]

logger = logging.getLogger(__name__)

#: models with more transition-ids than this align on per-utterance relabelled graphs
_COMPACT_TIDS = 2000


def pdf_loglikes_np(model: StackedGmms, feats: np.ndarray,
                    pdfs: Optional[np.ndarray] = None) -> np.ndarray:
    """(T, P') float32 log-likelihood of every pdf (or of the listed ``pdfs``, in that order):
    gmm_likelihood.pdf_loglikes in plain numpy.

    Same numbers (log-sum-exp per pdf over its Gaussians); numpy's reduceat instead of the numba
    kernel, because an alignment job is a short process and loading numba (~0.9 s) costs more
    than the whole log-sum-exp of 1000 utterances takes either way."""
    ll, offsets = gauss_loglikes(model, feats, pdfs, np.float32)
    starts = offsets[:-1]
    m = np.maximum.reduceat(ll, starts, axis=1)
    m = np.where(np.isfinite(m), m, np.float32(0.0))
    e = np.exp(ll - np.repeat(m, np.diff(offsets), axis=1))
    with np.errstate(divide="ignore"):
        return m + np.log(np.add.reduceat(e, starts, axis=1))


class SortedLookup:
    """Random access into a SORTED archive asked for in sorted order (``ark,s,cs:``), reading
    it forward as Kaldi's RandomAccessTableReaderSortedArchiveImpl does: values stream from the
    feature pipeline while earlier utterances are aligned, instead of the whole archive being
    read (and the pipeline waited for) before the first one. Keys compare as C-locale strings."""

    def __init__(self, rspecifier: str, kind: str = "mat"):
        self.rspecifier = rspecifier
        self._reader = SequentialReader(rspecifier, kind)
        self._it = iter(self._reader)
        self._cur = None
        self._started = False  # the pipeline starts now; its first value is read on demand

    def get(self, key: str):
        if not self._started:
            self._started = True
            self._cur = next(self._it, None)
        want = key.encode("utf-8", errors="surrogateescape")
        while self._cur is not None:
            have = self._cur[0].encode("utf-8", errors="surrogateescape")
            if have == want:
                return self._cur[1]
            if have > want:
                return None
            self._cur = next(self._it, None)
        return None

    def close(self) -> None:
        for _ in self._it:  # drain, so the writer of a pipe finishes cleanly
            pass
        self._reader.close()

    def __enter__(self) -> "SortedLookup":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class PipelineLookup:
    """Random access into a ``pipeline:`` feature table (:mod:`nnetmix.feat.pipeline`): asked
    in the order of its utterance list (the aligners ask in the graphs' order, the sorted order
    of a split data directory), it streams the chain forward as :class:`SortedLookup` does; a
    key asked out of order is computed on its own."""

    def __init__(self, rspecifier: str):
        self.pipeline = FeaturePipeline.read(rspecifier[len(PIPELINE_PREFIX):])
        self._pos = {k: i for i, k in enumerate(self.pipeline.keys())}
        self._reader = self.pipeline.open()
        self._it = iter(self._reader)
        self._next = 0  # list position of the next utterance the stream yields

    def get(self, key: str):
        i = self._pos.get(key)
        if i is None:
            return None
        if i < self._next:  # behind the stream: compute it alone
            with self.pipeline.open([key]) as reader:
                return next((m for _, m in reader), None)
        for k, m in self._it:  # an utterance the chain drops (a warning) is simply not found
            self._next = self._pos[k] + 1
            if k == key:
                return m
            if self._pos[k] > i:
                return None
        self._next = len(self._pos)
        return None

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> "PipelineLookup":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_lookup(rspecifier: str, kind: str = "mat"):
    """PipelineLookup for ``pipeline:`` features, SortedLookup for ``ark,s,cs:`` archives,
    RandomAccessReader otherwise."""
    if kind == "mat" and is_pipeline(rspecifier):
        return PipelineLookup(rspecifier)
    spec = parse_rspecifier(rspecifier)
    if spec.type == "ark" and spec.sorted and spec.called_sorted:
        return SortedLookup(rspecifier, kind)
    return RandomAccessReader(rspecifier, kind)


@dataclass
class AlignCounts:
    """What the aligners count: done, no features, other errors, retried; likelihood, frames."""

    done: int = 0
    no_feats: int = 0
    errors: int = 0
    retried: int = 0
    tot_like: float = 0.0
    frames: int = 0

    @property
    def failed(self) -> int:
        return self.no_feats + self.errors


def _graphs_with_feats(graphs_rspecifier: str, feats, counts: "AlignCounts"):
    """(key, graph, features) for each training graph whose utterance has non-empty features;
    the others are warned about and counted, as Kaldi's aligners do."""
    for key, graph in iter_graphs(graphs_rspecifier):
        m = feats.get(key)
        if m is None:
            logger.warning("No features for utterance %s", key)
            counts.no_feats += 1
            continue
        if len(m) == 0:
            logger.warning("Zero-length utterance: %s", key)
            counts.errors += 1
            continue
        yield key, graph, m


def align_equal_compiled(graphs_rspecifier: str, feats_rspecifier: str,
                         ali_wspecifier: str) -> AlignCounts:
    """align-equal-compiled: a random path through each graph, frames spread evenly."""
    counts = AlignCounts()
    with open_lookup(feats_rspecifier, "mat") as feats, \
            TableWriter(ali_wspecifier, "ivec") as writer:
        for key, graph, m in _graphs_with_feats(graphs_rspecifier, feats, counts):
            if graph.start < 0:
                logger.warning("Empty decoding graph for %s", key)
                counts.errors += 1
                continue
            res = equal_align_graph(graph, len(m), key)
            if res is None:
                logger.warning("AlignEqual: did not align utterence %s (%d frames; too short "
                               "for its transcript?)", key, len(m))
                counts.errors += 1
                continue
            writer.write(key, res[0])
            counts.done += 1
            counts.frames += len(m)
    if counts.done and not counts.failed:
        logger.info("Success: done %d utterances.", counts.done)
    else:
        logger.warning("Computed %d alignments; %d lacked features, %d had other errors.",
                       counts.done, counts.no_feats, counts.errors)
    return counts


def align_compiled(model_rx: str, graphs_rspecifier: str, feats_rspecifier: str,
                   ali_wspecifier: str, scores_wspecifier: str = "",
                   opts: AlignOptions = AlignOptions()) -> AlignCounts:
    """gmm-align-compiled: Viterbi alignment of each utterance against its training graph."""
    feats = open_lookup(feats_rspecifier, "mat")  # first: the feature pipeline starts now
    model = read_model(model_rx)
    tm = model.tm
    tid2pdf = tm.tid2pdf.astype(np.int64)
    trans = scaled_transition_log_probs(tm.log_probs, tm.tid2state, tm.tid_is_selfloop,
                                        opts.transition_scale, opts.self_loop_scale)
    stacked = model.stacked
    # A triphone model has thousands of transition-ids and an utterance's graph a few hundred:
    # relabel each graph to its own and compute only its pdfs (fst_labels' docstring). A
    # monophone's few hundred transition-ids are cheaper to take whole.
    compact = len(tid2pdf) > _COMPACT_TIDS
    counts = AlignCounts()
    scores = TableWriter(scores_wspecifier, "vec") if scores_wspecifier else None
    try:
        with feats, TableWriter(ali_wspecifier, "ivec") as writer:
            for key, graph, m in _graphs_with_feats(graphs_rspecifier, feats, counts):
                check_feat_dim(m, model, key, feats_rspecifier)
                vlog(logger, 1, "%s", key)
                if compact:
                    graph, labels = compact_input_labels(graph)
                    pdfs = np.unique(tid2pdf[labels])
                    ll = pdf_loglikes_np(stacked, m, pdfs)
                    res = align_utterance(graph, ll, tid2pdf, opts, trans, pdfs, key=key,
                                          labels=labels)
                else:  # all pdfs: for monophones (tens of pdfs) one GEMM beats listing a graph's
                    ll = pdf_loglikes_np(stacked, m)
                    res = align_utterance(graph, ll, tid2pdf, opts, trans, None, key=key)
                _record(res, key, len(m), writer, scores, counts)
    finally:
        if scores is not None:
            scores.close()
    _log_viterbi_summary(counts)
    return counts



def _record(res, key: str, frames: int, writer: TableWriter, scores: Optional[TableWriter],
            counts: AlignCounts) -> None:
    """Write one utterance's alignment (and score) and count it, or count its failure."""
    counts.retried += res.retried
    if not res.ok:
        counts.errors += 1
        return
    writer.write(key, res.alignment)
    if scores is not None:
        scores.write(key, np.array([res.like], dtype=np.float32))
    counts.done += 1
    counts.tot_like += res.like
    counts.frames += frames


def _log_viterbi_summary(counts: AlignCounts) -> None:
    """The last lines of Kaldi's gmm-align-compiled and align-compiled-mapped."""
    logger.info("Overall log-likelihood per frame is %g over %d frames.",
                counts.tot_like / max(counts.frames, 1), counts.frames)
    logger.info("Retried %d out of %d utterances.", counts.retried, counts.done + counts.failed)
    logger.info("Done %d, errors on %d", counts.done, counts.failed)


def align_compiled_mapped(trans_model_rx: str, graphs_rspecifier: str, loglikes_rspecifier: str,
                          ali_wspecifier: str, scores_wspecifier: str = "",
                          opts: AlignOptions = AlignOptions()) -> AlignCounts:
    """align-compiled-mapped: gmm-align-compiled's Viterbi alignment with the acoustics read as
    a (frames, pdfs) log-likelihood matrix per utterance (nnet-forward's output less the log
    priors); only the model's transition model is used. A matrix with another number of
    columns than the transition model has pdfs is one error naming the key (Kaldi's
    DecodableMatrixScaledMapped stops there too)."""
    tm = read_transition_model(trans_model_rx)
    tid2pdf = tm.tid2pdf.astype(np.int64)
    trans = scaled_transition_log_probs(tm.log_probs, tm.tid2state, tm.tid_is_selfloop,
                                        opts.transition_scale, opts.self_loop_scale)
    counts = AlignCounts()
    scores = TableWriter(scores_wspecifier, "vec") if scores_wspecifier else None
    try:
        with open_lookup(loglikes_rspecifier, "mat") as loglikes, \
                TableWriter(ali_wspecifier, "ivec") as writer:
            for key, graph, ll in _graphs_with_feats(graphs_rspecifier, loglikes, counts):
                if ll.shape[1] != tm.num_pdfs:
                    raise FormatError(f"{loglikes_rspecifier}: utterance {key}: the "
                                      f"log-likelihood matrix has {ll.shape[1]} columns, the "
                                      f"transition model of {trans_model_rx} {tm.num_pdfs} "
                                      "pdfs (log-likelihoods of another model?)")
                res = align_utterance(graph, np.asarray(ll, np.float32), tid2pdf, opts, trans,
                                      None, key=key)
                _record(res, key, len(ll), writer, scores, counts)
    finally:
        if scores is not None:
            scores.close()
    _log_viterbi_summary(counts)
    return counts
