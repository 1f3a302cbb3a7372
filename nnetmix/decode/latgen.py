"""The table loop of gmm-latgen-faster / latgen-faster-mapped and of the best-path tools
gmm-decode-faster / decode-faster-mapped: decode every utterance of a table, write lattices,
words and alignments, and log Kaldi's per-utterance and summary lines
(src/gmmbin/gmm-latgen-faster.cc, src/bin/latgen-faster-mapped.cc, src/gmmbin/gmm-decode-faster.cc,
src/bin/decode-faster-mapped.cc). With a TaskSequencerConfig, the -parallel tools' loop
(gmm-latgen-faster-parallel.cc, latgen-faster-mapped-parallel.cc): utterances decoded in
--num-threads threads (:mod:`nnetmix.decode.sequencer`), each thread with its own decoder over the
shared graph, outputs written in input order, and their "Decoded with N threads" lines."""
from __future__ import annotations

import logging
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

from nnetmix.decode.decoder import DecodeError, LatticeDecoder, read_decoding_graph
from nnetmix.decode.gmmframes import GmmFrames, GmmLikelihoodOptions, OnDemandGmm
from nnetmix.decode.latio import CompactLatticeWriter
from nnetmix.decode.sequencer import TaskSequencerConfig, run_in_order
from nnetmix.errors import FormatError
from nnetmix.feat.pipeline import open_features
from nnetmix.kaldi import (SequentialReader, TableWriter, read_gmm_model,
                           read_transition_model)

__all__ = ["LatgenSummary", "latgen", "decode_faster", "gmm_loglikes_table",
           "read_word_symbols", "read_graph_and_words", "gmm_latgen_files",
           "mapped_latgen_files"]

logger = logging.getLogger(__name__)


@dataclass
class LatgenSummary:
    num_done: int = 0
    num_fail: int = 0
    frames: int = 0
    tot_like: float = 0.0
    elapsed: float = 0.0

    @property
    def rtf(self) -> float:
        """Real-time factor assuming 100 frames per second."""
        return self.elapsed * 100.0 / max(self.frames, 1)


def read_graph_and_words(fst: str, tm, word_symbol_table: str):
    """(HCLG, word symbols or None): the graph checked against the transition model and, with a
    word symbol table, its output labels against the table's ids, so that a graph from another
    lang directory stops before decoding with one line naming both files."""
    syms = read_word_symbols(word_symbol_table) if word_symbol_table else None
    if syms:
        top = max(syms)
        hclg = read_decoding_graph(fst, tm.num_transition_ids, top, (
            f"input labels are the model's transition-ids, output labels the word ids of "
            f"{word_symbol_table}; a graph of another lang directory?"))
    else:
        hclg = read_decoding_graph(fst, tm.num_transition_ids)
    return hclg, syms


def read_word_symbols(path: str) -> dict[int, str]:
    table: dict[int, str] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                p = line.split()
                if not p:
                    continue
                if len(p) != 2:
                    raise FormatError(f"{path}:{n}: expected 'symbol id', got '{line.strip()}'")
                table[int(p[1])] = p[0]
    except OSError as e:
        raise FormatError(f"Could not read symbol table from file {path}: {e.strerror}") from None
    return table


def gmm_loglikes_table(am, model_rxfilename: str, features_rspecifier: str,
                       options: Optional[GmmLikelihoodOptions] = None):
    """(key, :class:`GmmFrames`) of every utterance of a feature table under a GMM acoustic
    model: the decoder computes the pdfs its search reaches (``options``: when the model has at
    least --gmm-on-demand-pdfs pdfs and the search is the compiled one) or all pdfs in one GEMM
    per utterance, in the thread that decodes the utterance."""
    options = options or GmmLikelihoodOptions()
    gmm = OnDemandGmm(am)
    on_demand = options.on_demand(gmm.num_pdfs)
    with open_features(features_rspecifier) as reader:
        for key, feats in reader:
            if feats.shape[1] != am.dim:
                raise DecodeError(f"{features_rspecifier}: features for {key} have dimension "
                                  f"{feats.shape[1]}, the model {model_rxfilename} expects "
                                  f"{am.dim} (deltas or splicing missing?)")
            yield key, GmmFrames(gmm, feats, on_demand)


def latgen(decoder: LatticeDecoder, items: Iterable[tuple[str, object]],
           lattice_wspecifier: str, words_wspecifier: str = "", ali_wspecifier: str = "",
           word_syms: Optional[dict[int, str]] = None, log_stream=None,
           sequencer: Optional[TaskSequencerConfig] = None) -> LatgenSummary:
    """Decode each (key, loglikes or GmmFrames) item into a lattice. ``word_syms`` prints
    ``key word1 word2 ...`` to ``log_stream`` (stderr), as Kaldi's --word-symbol-table does.
    ``sequencer``: decode in its --num-threads threads, writing in input order
    (gmm-latgen-faster-parallel, latgen-faster-mapped-parallel and their log lines)."""
    return _decode_table(decoder, items, lattice_wspecifier, words_wspecifier, ali_wspecifier,
                         word_syms, log_stream, best_path=False, sequencer=sequencer)


def decode_faster(decoder: LatticeDecoder, items: Iterable[tuple[str, object]],
                  words_wspecifier: str, ali_wspecifier: str = "", lattice_wspecifier: str = "",
                  word_syms: Optional[dict[int, str]] = None, log_stream=None) -> LatgenSummary:
    """gmm-decode-faster / decode-faster-mapped: the best path of each item (words, optional
    alignments, optional linear lattices); failures are logged as Kaldi's "Did not
    successfully decode utterance" and counted."""
    return _decode_table(decoder, items, lattice_wspecifier, words_wspecifier, ali_wspecifier,
                         word_syms, log_stream, best_path=True)


def _num_frames(x) -> int:
    return x.num_frames if isinstance(x, GmmFrames) else len(x)


def _decode_table(decoder, items, lattice_wspecifier, words_wspecifier, ali_wspecifier,
                  word_syms, log_stream, best_path: bool,
                  sequencer: Optional[TaskSequencerConfig] = None) -> LatgenSummary:
    import sys
    stream = log_stream if log_stream is not None else sys.stderr
    seq = sequencer or TaskSequencerConfig()
    summ = LatgenSummary()
    start = time.time()
    local = threading.local()

    def work(item):
        """One utterance in a worker thread: its result, or the DecodeError it raised."""
        key, x = item
        if seq.num_threads == 1:
            dec = decoder
        else:
            dec = getattr(local, "decoder", None)
            if dec is None:
                dec = local.decoder = decoder.for_thread()
        try:
            return dec.decode(x, key, lattice=not best_path)
        except DecodeError as e:
            return e

    with ExitStack() as stack:
        lat_w = stack.enter_context(CompactLatticeWriter(lattice_wspecifier)) \
            if lattice_wspecifier else None
        words_w = stack.enter_context(TableWriter(words_wspecifier, "ivec")) \
            if words_wspecifier else None
        ali_w = stack.enter_context(TableWriter(ali_wspecifier, "ivec")) \
            if ali_wspecifier else None

        def emit(item, res):
            """Write one utterance's outputs and log lines (in input order, this thread)."""
            key, x = item
            if isinstance(res, DecodeError):
                logger.warning("%s", res)
                if best_path:
                    logger.warning("Did not successfully decode utterance %s, len = %d", key,
                                   _num_frames(x))
                summ.num_fail += 1
                return
            if lat_w is not None:
                lat_w.write(key, res.path_lattice if best_path else res.lattice)
            if words_w is not None:
                words_w.write(key, np.array(res.words, dtype=np.int32))
            if ali_w is not None:
                ali_w.write(key, np.array(res.alignment, dtype=np.int32))
            if word_syms is not None:
                missing = [w for w in res.words if w not in word_syms]
                if missing:
                    raise FormatError(f"word-symbol-table: no symbol for word id {missing[0]}")
                stream.write(key + " " + "".join(word_syms[w] + " " for w in res.words) + "\n")
                stream.flush()
            logger.info("Log-like per frame for utterance %s is %g over %d frames.", key,
                        res.likelihood / res.num_frames, res.num_frames)
            summ.num_done += 1
            summ.frames += res.num_frames
            summ.tot_like += res.likelihood

        run_in_order(items, work, emit, seq)
    summ.elapsed = time.time() - start
    if sequencer is not None:
        logger.info("Decoded with %d threads.", seq.num_threads)
        logger.info("Time taken %gs: real-time factor per thread assuming 100 frames/sec is %g",
                    summ.elapsed, seq.num_threads * summ.rtf)
    else:
        logger.info("Time taken %s%gs: real-time factor assuming 100 frames/sec is %g",
                    "[excluding initialization] " if best_path else "", summ.elapsed, summ.rtf)
    logger.info("Done %d utterances, failed for %d", summ.num_done, summ.num_fail)
    logger.info("Overall log-likelihood per frame is %g over %d frames.",
                summ.tot_like / max(summ.frames, 1), summ.frames)
    return summ


def gmm_latgen_files(model: str, fst: str, features_rspecifier: str, lattice_wspecifier: str,
                     words_wspecifier: str, ali_wspecifier: str, config, word_symbol_table: str,
                     gmm_options: Optional[GmmLikelihoodOptions] = None,
                     sequencer: Optional[TaskSequencerConfig] = None) -> LatgenSummary:
    """gmm-latgen-faster[-parallel]: read the model and graph, decode the feature table."""
    tm, am = read_gmm_model(model)
    hclg, syms = read_graph_and_words(fst, tm, word_symbol_table)
    decoder = LatticeDecoder(hclg, tm, config)
    return latgen(decoder, gmm_loglikes_table(am, model, features_rspecifier, gmm_options),
                  lattice_wspecifier, words_wspecifier, ali_wspecifier, syms,
                  sequencer=sequencer)


def mapped_latgen_files(trans_model: str, fst: str, loglikes_rspecifier: str,
                        lattice_wspecifier: str, words_wspecifier: str, ali_wspecifier: str,
                        config, word_symbol_table: str,
                        sequencer: Optional[TaskSequencerConfig] = None) -> LatgenSummary:
    """latgen-faster-mapped[-parallel]: read the transition model and graph, decode the table
    of log-likelihood matrices."""
    tm = read_transition_model(trans_model)
    hclg, syms = read_graph_and_words(fst, tm, word_symbol_table)
    decoder = LatticeDecoder(hclg, tm, config)

    def items():
        with SequentialReader(loglikes_rspecifier, "mat") as reader:
            yield from reader

    return latgen(decoder, items(), lattice_wspecifier, words_wspecifier, ali_wspecifier, syms,
                  sequencer=sequencer)
