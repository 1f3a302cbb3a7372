"""The table loop of gmm-latgen-faster / latgen-faster-mapped and of the best-path tools
gmm-decode-faster / decode-faster-mapped: decode every utterance of a table, write lattices,
words and alignments, and log Kaldi's per-utterance and summary lines
(src/gmmbin/gmm-latgen-faster.cc, src/bin/latgen-faster-mapped.cc, src/gmmbin/gmm-decode-faster.cc,
src/bin/decode-faster-mapped.cc)."""
from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

from nnetmix.decode.decoder import DecodeError, LatticeDecoder
from nnetmix.decode.latio import CompactLatticeWriter
from nnetmix.errors import FormatError
from nnetmix.feat.pipeline import open_features
from nnetmix.hmm.gmm_likelihood import StackedGmms, pdf_loglikes
from nnetmix.kaldi import TableWriter

__all__ = ["LatgenSummary", "latgen", "decode_faster", "gmm_loglikes_table",
           "read_word_symbols"]

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


def gmm_loglikes_table(am, model_rxfilename: str, features_rspecifier: str):
    """(key, (T, num_pdfs) float32 log-likelihoods) of every utterance of a feature table under
    a GMM acoustic model: all Gaussians in one GEMM per utterance."""
    stacked = StackedGmms.from_gmms(list(am))
    with open_features(features_rspecifier) as reader:
        for key, feats in reader:
            if feats.shape[1] != am.dim:
                raise DecodeError(f"{features_rspecifier}: features for {key} have dimension "
                                  f"{feats.shape[1]}, the model {model_rxfilename} expects "
                                  f"{am.dim} (deltas or splicing missing?)")
            yield key, pdf_loglikes(stacked, feats, dtype=np.float32)


def latgen(decoder: LatticeDecoder, items: Iterable[tuple[str, np.ndarray]],
           lattice_wspecifier: str, words_wspecifier: str = "", ali_wspecifier: str = "",
           word_syms: Optional[dict[int, str]] = None, log_stream=None) -> LatgenSummary:
    """Decode each (key, loglikes) item into a lattice. ``word_syms`` prints ``key word1 word2
    ...`` to ``log_stream`` (stderr), as Kaldi's --word-symbol-table does."""
    return _decode_table(decoder, items, lattice_wspecifier, words_wspecifier, ali_wspecifier,
                         word_syms, log_stream, best_path=False)


def decode_faster(decoder: LatticeDecoder, items: Iterable[tuple[str, np.ndarray]],
                  words_wspecifier: str, ali_wspecifier: str = "", lattice_wspecifier: str = "",
                  word_syms: Optional[dict[int, str]] = None, log_stream=None) -> LatgenSummary:
    """gmm-decode-faster / decode-faster-mapped: the best path of each item (words, optional
    alignments, optional linear lattices); failures are logged as Kaldi's "Did not
    successfully decode utterance" and counted."""
    return _decode_table(decoder, items, lattice_wspecifier, words_wspecifier, ali_wspecifier,
                         word_syms, log_stream, best_path=True)


def _decode_table(decoder, items, lattice_wspecifier, words_wspecifier, ali_wspecifier,
                  word_syms, log_stream, best_path: bool) -> LatgenSummary:
    import sys
    stream = log_stream if log_stream is not None else sys.stderr
    summ = LatgenSummary()
    start = time.time()
    with ExitStack() as stack:
        lat_w = stack.enter_context(CompactLatticeWriter(lattice_wspecifier)) \
            if lattice_wspecifier else None
        words_w = stack.enter_context(TableWriter(words_wspecifier, "ivec")) \
            if words_wspecifier else None
        ali_w = stack.enter_context(TableWriter(ali_wspecifier, "ivec")) \
            if ali_wspecifier else None
        for key, loglikes in items:
            try:
                res = decoder.decode(loglikes, key, lattice=not best_path)
            except DecodeError as e:
                logger.warning("%s", e)
                if best_path:
                    logger.warning("Did not successfully decode utterance %s, len = %d", key,
                                   len(loglikes))
                summ.num_fail += 1
                continue
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
    summ.elapsed = time.time() - start
    logger.info("Time taken %s%gs: real-time factor assuming 100 frames/sec is %g",
                "[excluding initialization] " if best_path else "", summ.elapsed, summ.rtf)
    logger.info("Done %d utterances, failed for %d", summ.num_done, summ.num_fail)
    logger.info("Overall log-likelihood per frame is %g over %d frames.",
                summ.tot_like / max(summ.frames, 1), summ.frames)
    return summ
