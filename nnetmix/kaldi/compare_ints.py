"""Two tables of integer vectors compared position by position: Kaldi's compare-int-vector
(src/bin/compare-int-vector.cc), e.g. phone alignments of two systems from ali-to-phones.

Per key of the first table found in the second: ``<key> <frames> <frames-that-differ>`` on
stdout, over the shorter of the two (a WARNING when the lengths differ). Optional outputs, as
Kaldi's: the count of each value in the first table (``--write-tot-counts``, float vector), 0.5
to each of the two values wherever they differ (``--write-diff-counts``), and the confusion
matrix [value1][value2] in double (``--write-confusion-matrix``); a negative value with one of
them asked for is an error. Kaldi's log line counts each compared utterance twice (its loop
increments the count once more); the counts here are what was compared. No key compared at all
is one error, where Kaldi exits 1.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi.objects import write_object
from nnetmix.kaldi.table import RandomAccessReader, SequentialReader
from nnetmix.options import option

__all__ = ["CompareIntOptions", "compare_int_vectors"]

logger = logging.getLogger(__name__)


@dataclass
class CompareIntOptions:
    """compare-int-vector's options (Kaldi's names, defaults and help)."""

    binary: bool = option(True, "If true, write in binary mode (only applies if "
                          "--write-tot-counts or --write-diff-counts options are supplied).")
    write_tot_counts: str = option("", "Filename to write vector of total counts.  These may be "
                                   "summed with 'vector-sum'.")
    write_diff_counts: str = option("", "Filename to write vector of counts of phones (or "
                                    "whatever is in the inputs) that differ from one vector to "
                                    "the other.  Each time a pair differs, 0.5 will be added to "
                                    "each one's location.")
    write_confusion_matrix: str = option("", "Filename to write confusion matrix, indexed by "
                                         "[phone1][phone2].These may be summed by "
                                         "'matrix-sum'.")


def _grown(counts: np.ndarray, size: int) -> np.ndarray:
    return counts if len(counts) >= size else np.concatenate([counts, np.zeros(size - len(counts))])


def compare_int_vectors(rspecifier1: str, rspecifier2: str, out: TextIO,
                        opts: CompareIntOptions | None = None) -> tuple[int, int]:
    """Write the per-key lines to ``out`` and the optional counts; return (frames, differing)."""
    opts = opts or CompareIntOptions()
    done = not_found = mismatched = frames = differ = 0
    tot, diff, confusion = np.zeros(0), np.zeros(0), np.zeros((0, 0))
    with SequentialReader(rspecifier1, "ivec") as first, \
            RandomAccessReader(rspecifier2, "ivec") as second:
        for key, a in first:
            if key not in second:
                logger.warning("No key %s found in second input.", key)
                not_found += 1
                continue
            b = second[key]
            if len(a) != len(b):
                logger.warning("For utterance %s, lengths differ %d vs. %d", key, len(a), len(b))
                mismatched += 1
            n = min(len(a), len(b))
            a, b = np.asarray(a[:n], np.int64), np.asarray(b[:n], np.int64)
            bad = a != b
            counted = [a] if opts.write_tot_counts else []  # the values Kaldi adds up
            counted += [a[bad], b[bad]] if opts.write_diff_counts else []
            counted += [a, b] if opts.write_confusion_matrix else []
            if any(len(c) and c.min() < 0 for c in counted):
                raise FormatError(f"{rspecifier1}, {rspecifier2}: utterance {key}: contents of "
                                  "vectors cannot be negative if --write-tot-counts, "
                                  "--write-diff-counts or --write-confusion-matrix is given")
            if opts.write_diff_counts and bad.any():
                diff = _grown(diff, int(max(a[bad].max(), b[bad].max())) + 1)
                np.add.at(diff, a[bad], 0.5)
                np.add.at(diff, b[bad], 0.5)
            if opts.write_tot_counts and n:
                tot = _grown(tot, int(a.max()) + 1)
                np.add.at(tot, a, 1.0)
            if opts.write_confusion_matrix and n:
                size = max(len(confusion), int(max(a.max(), b.max())) + 1)
                if size > len(confusion):
                    grown = np.zeros((size, size))
                    grown[:len(confusion), :len(confusion)] = confusion
                    confusion = grown
                np.add.at(confusion, (a, b), 1.0)
            out.write(f"{key} {n} {int(bad.sum())}\n")
            done += 1
            frames += n
            differ += int(bad.sum())
    logger.info("Computed difference for %d utterances, of which %d had mismatched lengths; "
                "corresponding utterance not found for %d", done, mismatched, not_found)
    percent = differ * 100.0 / frames if frames else float("nan")
    logger.info("Average p(different) is %.4g%%, over %d frames.", percent, frames)
    if not done:
        raise FormatError(f"{rspecifier1}: none of its keys is in {rspecifier2} (see the "
                          "warnings), so nothing was compared")
    if opts.write_tot_counts:
        write_object(opts.write_tot_counts, tot.astype(np.float32), "vec", opts.binary)
    if opts.write_diff_counts:
        write_object(opts.write_diff_counts, diff.astype(np.float32), "vec", opts.binary)
    if opts.write_confusion_matrix:
        write_object(opts.write_confusion_matrix, confusion, "mat", opts.binary)
    return frames, differ
