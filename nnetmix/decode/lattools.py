"""Table loops of Kaldi's lattice tools on CompactLattice archives: lattice-scale,
lattice-add-penalty, lattice-best-path, lattice-copy (src/latbin/)."""
from __future__ import annotations

import contextlib
import logging
from typing import Optional

import numpy as np

from nnetmix.decode.latio import CompactLatticeWriter, iter_compact_lattices
from nnetmix.decode.lattice import best_path
from nnetmix.errors import UsageError
from nnetmix.kaldi import TableWriter

__all__ = ["lattice_scale", "lattice_add_penalty", "lattice_best_path", "lattice_copy"]

logger = logging.getLogger(__name__)


def lattice_scale(rspecifier: str, wspecifier: str, acoustic_scale: float = 1.0,
                  inv_acoustic_scale: float = 1.0, lm_scale: float = 1.0,
                  acoustic2lm_scale: float = 0.0, lm2acoustic_scale: float = 0.0) -> int:
    """lattice-scale: --inv-acoustic-scale=X means --acoustic-scale=1/X (not both)."""
    if inv_acoustic_scale != 1.0:
        if acoustic_scale != 1.0:
            raise UsageError("Cannot set both --acoustic-scale and --inv-acoustic-scale")
        acoustic_scale = 1.0 / inv_acoustic_scale
    n = 0
    with CompactLatticeWriter(wspecifier) as w:
        for key, clat in iter_compact_lattices(rspecifier):
            w.write(key, clat.scale(lm_scale, acoustic_scale, acoustic2lm_scale,
                                    lm2acoustic_scale))
            n += 1
    logger.info("Done %d lattices.", n)
    return n


def lattice_add_penalty(rspecifier: str, wspecifier: str, word_ins_penalty: float) -> int:
    n = 0
    with CompactLatticeWriter(wspecifier) as w:
        for key, clat in iter_compact_lattices(rspecifier):
            w.write(key, clat.add_word_ins_penalty(word_ins_penalty))
            n += 1
    logger.info("Done adding word insertion penalty to %d lattices.", n)
    return n


def lattice_copy(rspecifier: str, wspecifier: str) -> int:
    n = 0
    with CompactLatticeWriter(wspecifier) as w:
        for key, clat in iter_compact_lattices(rspecifier):
            w.write(key, clat)
            n += 1
    logger.info("Done copying %d lattices.", n)
    return n


def lattice_best_path(rspecifier: str, trans_wspecifier: str = "", ali_wspecifier: str = "",
                      acoustic_scale: float = 1.0, lm_scale: float = 1.0,
                      word_syms: Optional[dict[int, str]] = None, log_stream=None) -> tuple[int, int]:
    """Write each lattice's best word sequence and alignment; returns (done, failed)."""
    import sys
    stream = log_stream if log_stream is not None else sys.stderr
    done = fail = 0
    tot_cost, tot_frames = 0.0, 0
    with contextlib.ExitStack() as outputs:  # a failed read removes both (none half-written)
        words_w = outputs.enter_context(TableWriter(trans_wspecifier, "ivec")) \
            if trans_wspecifier else None
        ali_w = outputs.enter_context(TableWriter(ali_wspecifier, "ivec")) \
            if ali_wspecifier else None
        for key, clat in iter_compact_lattices(rspecifier):
            bp = best_path(clat, lm_scale, acoustic_scale)
            if bp is None:
                logger.warning("Best-path failed for key %s", key)
                fail += 1
                continue
            words, ali, g, a = bp
            if words_w is not None:
                words_w.write(key, np.array(words, dtype=np.int32))
            if ali_w is not None:
                ali_w.write(key, np.array(ali, dtype=np.int32))
            if word_syms is not None:
                stream.write(key + " " + "".join(word_syms.get(x, str(x)) + " " for x in words)
                             + "\n")
            tot_cost += lm_scale * g + acoustic_scale * a
            tot_frames += len(ali)
            done += 1
    logger.info("Overall score per frame is %g over %d frames.", tot_cost / max(tot_frames, 1),
                tot_frames)
    logger.info("Done %d lattices, failed for %d", done, fail)
    return done, fail
