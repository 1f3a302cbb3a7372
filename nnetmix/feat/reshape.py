"""Feature matrices cut, thinned, shifted or joined: Kaldi's select-feats, subsample-feats,
shift-feats and concat-feats (src/featbin/).

Features are read with :func:`nnetmix.feat.pipeline.open_features` (any rspecifier or
``pipeline:file.json``) and written as float32, Kaldi's BaseFloat.
"""
from __future__ import annotations

import logging
from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError, NnetmixError, UsageError
from nnetmix.feat.pipeline import open_features
from nnetmix.kaldi.copy import Counts, is_rspecifier, is_wspecifier, map_table
from nnetmix.kaldi.objects import read_object, write_object

__all__ = ["parse_selection", "select_feats", "subsample", "subsample_feats", "shift",
           "shift_feats", "concat_feats"]

logger = logging.getLogger(__name__)


def _index(text: str, what: str, spec: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"bad selection '{spec}': {what} '{text}' is not an integer") from None


def parse_selection(spec: str, dim: int) -> np.ndarray:
    """select-feats' ``0,24-22,3-12``: the columns to keep, in order (``a-b`` with a > b runs
    down). Each index must be in 0..dim-1. Kaldi reads a range's start from the first
    len - p - 1 characters (p: the dash), which cuts ``10-2`` to 1; here it is 10."""
    cols: list[int] = []
    for token in spec.split(","):
        if not token:
            continue
        start, dash, end = token.partition("-")
        if dash:
            s, e = _index(start, "range start", spec), _index(end, "range end", spec)
            for value, what in ((s, "range start"), (e, "range end")):
                if not 0 <= value < dim:
                    raise UsageError(f"Invalid {what}: {value} (the features have dimension "
                                     f"{dim})")
            cols += range(s, e + 1) if s <= e else range(s, e - 1, -1)
        else:
            i = _index(token, "index", spec)
            if not 0 <= i < dim:
                raise UsageError(f"Invalid selection index: {i} (the features have dimension "
                                 f"{dim})")
            cols.append(i)
    if not cols:
        raise UsageError("No ranges or indices in selection string!")
    return np.asarray(cols, dtype=np.intp)


class _Peeked:
    """A feature reader whose first entry was already taken (select-feats reads the first
    matrix's dimension before it parses the selection)."""

    def __init__(self, reader, entries, first):
        self.reader, self.entries, self.first = reader, entries, first

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.reader.close()

    def __iter__(self):
        yield self.first
        yield from self.entries


def select_feats(selection: str, rspecifier: str, wspecifier: str) -> Optional[Counts]:
    """Kaldi's select-feats: keep the selected columns of every matrix. An empty input is a
    warning (and success, as in Kaldi); None then."""
    reader = open_features(rspecifier)
    try:
        entries = iter(reader)
        first = next(entries, None)
        if first is not None:
            cols = parse_selection(selection, first[1].shape[1])
    except BaseException:
        reader.close()
        raise
    if first is None:
        reader.close()
        logger.warning("Empty archive provided.")
        return None

    def one(key: str, feats: np.ndarray) -> np.ndarray:
        if feats.shape[1] <= cols.max():
            raise FormatError(f"{rspecifier}: key {key}: the features have dimension "
                              f"{feats.shape[1]}, the selection '{selection}' needs "
                              f"{cols.max() + 1}")
        return np.asarray(feats[:, cols], np.float32)

    return map_table(rspecifier, wspecifier, one, reader=_Peeked(reader, entries, first))


def subsample(feats: np.ndarray, n: int, offset: int = 0) -> np.ndarray:
    """Every n-th frame from ``offset`` (n > 0), or each frame repeated -n times (n < 0)."""
    feats = np.asarray(feats, np.float32)
    if n > 0:
        return feats[offset::n]
    return np.repeat(feats, -n, axis=0)


def subsample_feats(rspecifier: str, wspecifier: str, n: int = 1, offset: int = 0) -> Counts:
    """Kaldi's subsample-feats; an utterance left with no frames is warned about and skipped."""
    if n == 0:
        raise UsageError("--n=0: expected a positive n (take every n'th frame) or a negative "
                         "one (repeat each frame -n times)")
    if n < 0 and offset != 0:
        raise UsageError("--offset option cannot be used with negative n.")
    if offset < 0:
        raise UsageError(f"--offset={offset}: expected 0 or more")
    frames = [0, 0]

    def one(key: str, feats: np.ndarray) -> Optional[np.ndarray]:
        out = subsample(feats, n, offset)
        frames[0] += feats.shape[0]
        frames[1] += out.shape[0]
        if out.shape[0] == 0:
            logger.warning("For utterance %s, output would have no rows, producing no output.",
                           key)
            return None
        return out

    def summary(counts: Counts) -> None:
        logger.info("Processed %d feature matrices; %d with errors.", counts.done, counts.err)
        logger.info("Processed %d input frames and %d output frames.", frames[0], frames[1])

    return map_table(rspecifier, wspecifier, one, summary=summary,
                     reader=open_features(rspecifier))


def shift(feats: np.ndarray, frames: int) -> np.ndarray:
    """Kaldi's ShiftFeatureMatrix: row r of the output is row r - frames of the input, the
    first or last row repeated where that falls outside."""
    feats = np.asarray(feats, np.float32)
    rows = np.clip(np.arange(feats.shape[0]) - frames, 0, feats.shape[0] - 1)
    return feats[rows]


def shift_feats(src: str, dst: str, frames: int = 0, binary: bool = True) -> Counts:
    """Kaldi's shift-feats: a table (empty matrices warned about and skipped) or one matrix
    (an empty one is an error)."""
    if not is_rspecifier(src):
        if is_wspecifier(dst):
            raise UsageError(f"cannot mix archives with regular files ('{src}' -> '{dst}')")
        mat = read_object(src, "mat")
        if mat.shape[0] == 0:
            raise FormatError(f"{src}: Empty input matrix")
        write_object(dst, shift(mat, frames), "mat", binary)
        return Counts(done=1)

    def one(key: str, feats: np.ndarray) -> Optional[np.ndarray]:
        if feats.shape[0] == 0:
            logger.warning("Empty matrix for key %s", key)
            return None
        return shift(feats, frames)

    return map_table(src, dst, one, reader=open_features(src),
                     summary=f"Shifted {{done}} features by {frames} frames; {{err}} with "
                             "errors.")


def concat_feats(rxfilenames: Sequence[str], wxfilename: str, binary: bool = True) -> np.ndarray:
    """Kaldi's concat-feats: single matrices one after the other (the frames of all), which
    must have one dimension; an error names the first file that differs."""
    mats = []
    for rx in rxfilenames:
        if is_rspecifier(rx):
            raise UsageError(f"'{rx}': concat-feats reads single matrices (rxfilenames such as "
                             "foo.ark:123), not tables")
        mats.append(np.asarray(read_object(rx, "mat"), np.float32))
        if mats[-1].shape[1] != mats[0].shape[1]:
            raise NnetmixError(f"{rx}: dimension {mats[-1].shape[1]}, but {rxfilenames[0]} has "
                               f"{mats[0].shape[1]} (concat-feats joins frames of one dimension)")
    out = np.concatenate(mats, axis=0)
    write_object(wxfilename, out, "mat", binary)
    return out
