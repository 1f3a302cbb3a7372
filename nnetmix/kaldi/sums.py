"""Sums, concatenations and shapes of matrix and vector tables: Kaldi's matrix-sum, vector-sum,
sum-matrices, matrix-dim (src/bin/) and paste-vectors (src/featbin/).

matrix-sum and vector-sum take three forms, told apart by their arguments as Kaldi tells them
(ClassifyRspecifier / ClassifyWspecifier):

1. tables to a table (the last argument a wspecifier): per key of the first table, its object
   plus the same key's objects of the other tables (looked up by key); a key another table
   lacks, or whose object has other dimensions, is warned about and left out of that key's sum
   (a missing one is counted: the tool fails when half or more of the lookups were missing);
2. one table to one object (an rspecifier, then a wxfilename): the sum of all its objects, in
   double precision, empty or mismatched ones warned about and counted as errors;
3. objects to an object (rxfilenames, then a wxfilename): the sum, which must have one shape
   (Kaldi's AddMat asserts; here it is an error naming the file).

Arithmetic is Kaldi's: float32 (BaseFloat) in forms 1 and 3, float64 in form 2; the output is
float32. Kaldi writes an empty archive when the first table is empty; here nothing is written and
it is an error (nnetmix.kaldi.writer.EmptyTableError), as for every table tool.
"""
from __future__ import annotations

import logging
from typing import Optional, Sequence, TextIO

import numpy as np

from nnetmix.errors import FormatError, UsageError
from nnetmix.kaldi.copy import Counts, is_rspecifier, is_wspecifier, map_table
from nnetmix.kaldi.objects import read_object, write_object
from nnetmix.kaldi.table import RandomAccessReader, SequentialReader
from nnetmix.kaldi.writer import TableWriter

__all__ = ["shape_text", "printable_wxfilename", "sum_tables", "sum_table_to_object",
           "sum_objects", "sum_any", "sum_matrices", "paste_vectors", "matrix_dim",
           "matrix_sum_rows"]

logger = logging.getLogger(__name__)

_NOUNS = {"mat": ("matrix", "matrices"), "vec": ("vector", "vectors")}


def shape_text(value: np.ndarray) -> str:
    """A matrix's ``R by C`` or a vector's dimension, as Kaldi's warnings print them."""
    return f"{value.shape[0]} by {value.shape[1]}" if value.ndim == 2 else str(value.size)


def printable_wxfilename(wxfilename: str) -> str:
    """Kaldi's PrintableWxfilename: standard output for ``-`` (or an empty name)."""
    return "standard output" if wxfilename in ("", "-") else wxfilename


def _is_empty(value: np.ndarray) -> bool:
    """Kaldi's NumRows() == 0 for a matrix, Dim() == 0 for a vector."""
    return value.shape[0] == 0


def sum_tables(rspecifiers: Sequence[str], wspecifier: str, kind: str = "mat",
               scale1: float = 1.0, scale2: float = 1.0, average: bool = False) -> bool:
    """Form 1: per key of the first table, the (scaled) sum over the tables; True on success
    (output for some key, and fewer missing lookups than found ones)."""
    one, many = _NOUNS[kind]
    systems = len(rspecifiers)
    if average:
        scales = [np.float32(1.0 / systems)] * systems
    else:
        scales = [np.float32(scale1), np.float32(scale2)] + [np.float32(1.0)] * (systems - 2)
    others = []
    n_utts = n_total = n_missing = 0
    try:
        for spec in rspecifiers[1:]:
            others.append(RandomAccessReader(spec, kind))

        def one_key(key: str, value: np.ndarray) -> np.ndarray:
            nonlocal n_utts, n_total, n_missing
            n_utts += 1
            n_total += 1
            out = np.asarray(value, np.float32) * scales[0]
            for i, (spec, reader) in enumerate(zip(rspecifiers[1:], others)):
                if key not in reader:
                    logger.warning("No %s found for utterance %s for system %d, rspecifier: %s",
                                   one, key, i + 2, spec)
                    n_missing += 1
                    continue
                other = np.asarray(reader[key], np.float32)
                n_total += 1
                if other.shape != out.shape:
                    logger.warning("Dimension mismatch for utterance %s : %s for system %d, "
                                   "rspecifier: %s vs %s primary %s, rspecifier:%s", key,
                                   shape_text(other), i + 2, spec, shape_text(out), one,
                                   rspecifiers[0])
                    continue
                out += scales[i + 1] * other
            return out

        def summary(counts: Counts) -> None:
            logger.info("Processed %d utterances: with a total of %d %s across %d different "
                        "systems", n_utts, n_total, many, systems)
            logger.info("Produced output for %d utterances; %d total missing %s", counts.done,
                        n_missing, many)

        counts = map_table(rspecifiers[0], wspecifier, one_key, kind, summary=summary)
    finally:
        for reader in others:
            reader.close()
    return counts.done != 0 and n_missing < counts.done - n_missing


def sum_table_to_object(rspecifier: str, wxfilename: str, kind: str = "mat", binary: bool = True,
                        average: bool = False) -> bool:
    """Form 2: the sum (or, for vectors, the average) of a table's objects, in double, written
    as one float object; True when some were summed and fewer had errors."""
    one, many = _NOUNS[kind]
    if average and kind == "mat":
        raise UsageError("--average option not compatible with type two usage.")
    total: Optional[np.ndarray] = None
    counts = Counts()
    with SequentialReader(rspecifier, kind) as reader:
        for key, value in reader:
            if _is_empty(value):
                logger.warning("Zero %s input for key %s", one, key)
                counts.err += 1
                continue
            if total is None:
                total = np.zeros(value.shape, np.float64)
            if total.shape != value.shape:
                logger.warning("Dimension mismatch for key %s: %s vs. %s", key,
                               shape_text(value), shape_text(total))
                counts.err += 1
                continue
            total += np.asarray(value, np.float32)
            counts.done += 1
    if total is None:
        raise FormatError(f"{rspecifier}: no {many} to sum ({counts.err} empty), so "
                          f"{printable_wxfilename(wxfilename)} was not written")
    if average:
        total *= 1.0 / counts.done
    write_object(wxfilename, total.astype(np.float32), kind, binary)
    logger.info("Summed %d %s, %d with errors; wrote sum to %s", counts.done, many, counts.err,
                printable_wxfilename(wxfilename))
    return counts.done > 0 and counts.err < counts.done


def _add_objects(rxfilenames: Sequence[str], kind: str) -> np.ndarray:
    """The float32 sum of single objects of one shape; an error names the first that differs."""
    total: Optional[np.ndarray] = None
    first = ""
    for rx in rxfilenames:
        value = np.asarray(read_object(rx, kind), np.float32)
        if total is None or total.size == 0:
            total, first = value.copy(), rx
        elif value.shape != total.shape:
            raise FormatError(f"{rx}: {_NOUNS[kind][0]} is {shape_text(value)}, but {first} is "
                              f"{shape_text(total)} (the {_NOUNS[kind][1]} summed must have "
                              "one size)")
        else:
            total += value
    assert total is not None  # callers pass at least one file
    return total


def sum_objects(rxfilenames: Sequence[str], wxfilename: str, kind: str = "mat",
                binary: bool = True, average: bool = False) -> None:
    """Form 3: the sum (or average) of single objects, written as one."""
    for rx in list(rxfilenames) + [wxfilename]:
        if is_rspecifier(rx):
            raise UsageError("Wrong usage (type 3): if first and last arguments are not tables, "
                             "the intermediate arguments must not be tables.")
    total = _add_objects(rxfilenames, kind)
    if average:
        total *= np.float32(1.0 / len(rxfilenames))
    write_object(wxfilename, total, kind, binary)
    logger.info("Summed %d %s; wrote sum to %s", len(rxfilenames), _NOUNS[kind][1],
                printable_wxfilename(wxfilename))


def sum_any(args: Sequence[str], kind: str = "mat", binary: bool = True, average: bool = False,
            scale1: float = 1.0, scale2: float = 1.0) -> bool:
    """matrix-sum's and vector-sum's dispatch on their arguments (the inputs, then the output);
    True on success."""
    inputs, out = list(args[:-1]), args[-1]
    if is_wspecifier(out):
        return sum_tables(inputs, out, kind, scale1, scale2, average)
    if (scale1, scale2) != (1.0, 1.0):
        raise UsageError("--scale1 and --scale2 apply to type one usage only (tables to a table)")
    if len(inputs) == 1 and is_rspecifier(inputs[0]):
        return sum_table_to_object(inputs[0], out, kind, binary, average)
    if not is_rspecifier(inputs[0]):
        sum_objects(inputs, out, kind, binary, average)
        return True
    raise UsageError(f"tables in and '{out}' out fit none of the three usages (tables to a "
                     "table, one table to a file, files to a file; see --help)")


def sum_matrices(wxfilename: str, rxfilenames: Sequence[str], binary: bool = True) -> np.ndarray:
    """Kaldi's sum-matrices: the sum of single matrix files, which must have one size."""
    total = _add_objects(rxfilenames, "mat")
    write_object(wxfilename, total, "mat", binary)
    logger.info("Summed %d matrices  of dimension %d by %d", len(rxfilenames), total.shape[0],
                total.shape[1])
    return total


def paste_vectors(rspecifiers: Sequence[str], wspecifier: str) -> Counts:
    """Kaldi's paste-vectors: per key of the first table, its vector followed by the same key's
    vectors of the other tables; a key another table lacks is warned about and skipped."""
    if not is_rspecifier(rspecifiers[0]):
        raise UsageError("This program can operate only on tables, not on rxfiles")
    others = []
    try:
        for spec in rspecifiers[1:]:
            others.append(RandomAccessReader(spec, "vec"))

        def one_key(key: str, first: np.ndarray) -> Optional[np.ndarray]:
            parts = [np.asarray(first, np.float32)]
            for spec, reader in zip(rspecifiers[1:], others):
                if key not in reader:
                    logger.warning("Missing utt %s from input %s", key, spec)
                    return None
                parts.append(np.asarray(reader[key], np.float32))
            return np.concatenate(parts)

        return map_table(rspecifiers[0], wspecifier, one_key, "vec",
                         summary="Done {done} utts, errors on {err}")
    finally:
        for reader in others:
            reader.close()


def matrix_dim(source: str, out: TextIO) -> int:
    """Kaldi's matrix-dim: ``rows<TAB>cols`` of one matrix, or ``key<TAB>rows<TAB>cols`` per
    matrix of a table, written to ``out``; returns how many matrices were read."""
    if not is_rspecifier(source):
        m = read_object(source, "mat")
        out.write(f"{m.shape[0]}\t{m.shape[1]}\n")
        return 1
    n = 0
    with SequentialReader(source, "mat") as reader:
        for key, m in reader:
            out.write(f"{key}\t{m.shape[0]}\t{m.shape[1]}\n")
            n += 1
    if n == 0:
        logger.warning("No features read from rspecifier '%s'", source)
    return n


def matrix_sum_rows(rspecifier: str, wspecifier: str) -> Counts:
    """Kaldi's matrix-sum-rows: each matrix's rows summed (in double, to keep round-off down)
    into a float vector of the same key."""
    rows = [0]

    def one(key: str, mat: np.ndarray) -> np.ndarray:
        rows[0] += mat.shape[0]
        return np.asarray(mat, np.float64).sum(axis=0).astype(np.float32)

    def summary(counts: Counts) -> None:
        logger.info("Summed rows %d matrices, %d rows in total.", counts.done, rows[0])

    return map_table(rspecifier, wspecifier, one, kind="mat", out_kind="vec", summary=summary)
