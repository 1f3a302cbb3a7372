"""Table-level drivers for the feature bin/ tools: one function per Kaldi binary.

Each follows its Kaldi namesake in src/featbin/ — what it reads, what a missing key does
(a WARNING naming the key, counted), its summary line and its success rule (at least one item
done) — so the bin/ files stay argument parsing plus one call. Features are read with
:func:`nnetmix.feat.pipeline.open_features` (any rspecifier or ``pipeline:file.json``), written
through nnetmix.kaldi tables; the per-utterance CMVN and delta steps are in stages.py.
"""
from __future__ import annotations

import contextlib
import logging
from typing import Callable

import numpy as np

from nnetmix.errors import NnetmixError, UsageError
from nnetmix.feat.cmvn import acc_cmvn_stats
from nnetmix.feat.pipeline import is_pipeline, open_features
from nnetmix.feat.stages import CmvnStep, DeltaStep, SpliceStep, TransformStep, apply_transform
from nnetmix.feat.textio import (TextTableWriter, is_rspecifier, is_wspecifier,
                                 read_token_table, write_text_object)
from nnetmix.kaldi import RandomAccessReader, TableWriter, read_object, write_object
from nnetmix.kaldi.compressed import METHODS, Compressed
from nnetmix.kaldi.copy import Counts, map_table
from nnetmix.kaldi.writer import EmptyTableError

__all__ = ["Counts", "copy_feats", "transform_feats", "add_deltas_table", "splice_feats_table",
           "apply_transform", "transform_feats_table", "compose_transforms",
           "compose_transforms_tables", "paste_feats_table",
           "feat_to_dim", "feat_to_len", "compute_cmvn_stats", "apply_cmvn_table"]

logger = logging.getLogger(__name__)


def _is_table(rspecifier: str) -> bool:
    """A feature table (an rspecifier or a pipeline), not one matrix's rxfilename."""
    return is_rspecifier(rspecifier) or is_pipeline(rspecifier)


def _as_float32(mat: np.ndarray) -> np.ndarray:
    return np.asarray(mat, dtype=np.float32)


def transform_feats(rspecifier: str, wspecifier: str,
                    fn: Callable[[str, np.ndarray], np.ndarray | None],
                    summary: str = "") -> Counts:
    """Apply ``fn(key, feats)`` to every matrix; None from fn means 'skip this key'.

    ``summary`` (``{done}``, ``{err}`` filled in) is logged before the output is closed, so
    it precedes the error of a table with nothing written (Kaldi logs it, then exits 1)."""
    return map_table(rspecifier, wspecifier, fn, "mat", summary=summary,
                     reader=open_features(rspecifier))


def copy_feats(rspecifier: str, wspecifier: str, binary: bool = True,
               write_num_frames: str = "", compress: bool = False,
               compression_method: int = 1) -> Counts:
    """Kaldi's copy-feats: table to table, or one rxfilename to one wxfilename (float32).

    ``compress`` writes the table's matrices as Kaldi compressed matrices with
    ``compression_method`` (1-7, nnetmix.kaldi.compressed.METHODS), as Kaldi's
    CompressedMatrixWriter; like Kaldi, a single file is never written compressed."""
    if compression_method not in METHODS:
        raise UsageError(f"--compression-method={compression_method}: expected 1 through 7 "
                         "(Kaldi's CompressionMethod: " + ", ".join(
                             f"{k} {v}" for k, v in METHODS.items()) + ")")
    if _is_table(rspecifier) != is_wspecifier(wspecifier):
        raise UsageError("copy-feats: give two tables (rspecifier, wspecifier) or two files "
                         f"(rxfilename, wxfilename), got '{rspecifier}' and '{wspecifier}'")
    if compress and not _is_table(rspecifier):
        raise UsageError("--compress=true writes tables only (as Kaldi's copy-feats, which does "
                         f"not compress a single file such as '{wspecifier}')")
    if not _is_table(rspecifier):
        mat = _as_float32(read_object(rspecifier, "mat"))
        write_object(wspecifier, mat, "mat", binary=binary)
        logger.info("Copied features from %s to %s", rspecifier, wspecifier)
        return Counts(done=1)
    lengths = TextTableWriter(write_num_frames) if write_num_frames else None
    ok = False
    try:
        def one(key, feats):
            if lengths:
                lengths.write(key, feats.shape[0])
            if compress:
                return Compressed(_as_float32(feats), compression_method)
            return _as_float32(feats)
        counts = transform_feats(rspecifier, wspecifier, one, "Copied {done} feature matrices.")
        ok = True
    finally:
        if lengths:
            lengths.close(ok)
    return counts


def add_deltas_table(rspecifier: str, wspecifier: str, order: int = 2, window: int = 2,
                     truncate: int = 0) -> Counts:
    """Kaldi's add-deltas (--truncate keeps only the first N input dimensions)."""
    return transform_feats(rspecifier, wspecifier, DeltaStep(order, window, truncate),
                           "Added deltas to {done} feature matrices, {err} empty.")


def splice_feats_table(rspecifier: str, wspecifier: str, left_context: int = 4,
                       right_context: int = 4) -> Counts:
    """Kaldi's splice-feats."""
    return transform_feats(rspecifier, wspecifier, SpliceStep(left_context, right_context),
                           "Spliced {done} feature matrices.")


def compose_transforms(a: np.ndarray, b: np.ndarray, b_is_affine: bool = False
                       ) -> np.ndarray | None:
    """Kaldi's ComposeTransforms: A B (B applied to the features first). An affine A (one
    more column than B has rows) multiplies B extended by the row [0 ... 0 1] (b_is_affine:
    B's last column is its offset) or by [B 0; 0 1] (B linear: A's offset is kept). None, with
    a warning, when the sizes fit neither."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    if b.shape[0] == 0 or a.shape[1] == 0:
        logger.warning("Empty matrix in ComposeTransforms")
        return None
    if a.shape[1] == b.shape[0]:
        return a @ b
    if a.shape[1] == b.shape[0] + 1:
        if b_is_affine:
            ext = np.zeros((b.shape[0] + 1, b.shape[1]), np.float32)
            ext[:-1] = b
            ext[-1, -1] = 1.0
        else:
            ext = np.zeros((b.shape[0] + 1, b.shape[1] + 1), np.float32)
            ext[:-1, :-1] = b
            ext[-1, -1] = 1.0
        return a @ ext
    logger.warning("ComposeTransforms: mismatched dimensions, a has %d columns and b has %d "
                   "rows.", a.shape[1], b.shape[0])
    return None


def compose_transforms_tables(a_in: str, b_in: str, c_out: str, b_is_affine: bool = False,
                              utt2spk: str = "", binary: bool = True) -> Counts:
    """Kaldi's compose-transforms: matrices, or tables keyed alike (A per utterance and B per
    speaker with ``utt2spk``; Kaldi there looks B up by the utterance, a bug we do not copy)."""
    a_tab, b_tab = is_rspecifier(a_in), is_rspecifier(b_in)
    if (a_tab or b_tab) != is_wspecifier(c_out):
        raise UsageError("Formats of the input and output rspecifiers/rxfilenames do not match "
                         "(if either a or b is an rspecifier, then the output must be a "
                         "wspecifier.")
    if utt2spk and not (a_tab and b_tab):
        raise UsageError("utt2spk option provided compose transforms but at least one of the "
                         "inputs is a global transform.")
    counts = Counts()
    if not (a_tab or b_tab):
        a, b = read_object(a_in, "mat"), read_object(b_in, "mat")
        if (not b_is_affine and a.shape[0] == a.shape[1] + 1 and a.shape == b.shape):
            logger.warning("It looks like you are trying to compose two affine transforms, but "
                           "you omitted the --b-is-affine option.")
        c = compose_transforms(a, b, b_is_affine)
        if c is None:
            raise NnetmixError(f"cannot compose {a_in} ({a.shape[0]}x{a.shape[1]}) with "
                               f"{b_in} ({b.shape[0]}x{b.shape[1]})")
        write_object(c_out, c, "mat", binary)
        counts.done = 1
        return counts
    spk_of = dict((k, v[0]) for k, v in read_token_table(utt2spk) if v) if utt2spk else None
    with TableWriter(c_out, "mat") as writer:
        if a_tab:
            fixed_b = None if b_tab else read_object(b_in, "mat")
            b_reader = RandomAccessReader(b_in, "mat") if b_tab else contextlib.nullcontext()
            with open_features(a_in) as a_reader, b_reader as b_lookup:
                for key, a in a_reader:
                    bkey = key if spk_of is None else spk_of.get(key)
                    if bkey is None:
                        logger.warning("No speaker provided for utterance %s (perhaps you "
                                       "wrongly provided utt2spk option to  compose-transforms?)",
                                       key)
                        counts.err += 1
                        continue
                    if b_tab and bkey not in b_lookup:
                        logger.warning("Second table does not have key %s", bkey)
                        counts.err += 1
                        continue
                    c = compose_transforms(a, b_lookup[bkey] if b_tab else fixed_b, b_is_affine)
                    if c is None:
                        counts.err += 1
                        continue
                    writer.write(key, c)
                    counts.done += 1
        else:
            a = read_object(a_in, "mat")
            with open_features(b_in) as b_reader:
                for key, b in b_reader:
                    c = compose_transforms(a, b, b_is_affine)
                    if c is None:
                        counts.err += 1
                        continue
                    writer.write(key, c)
                    counts.done += 1
    return counts


def transform_feats_table(transform: str, rspecifier: str, wspecifier: str,
                          utt2spk: str = "") -> Counts:
    """Kaldi's transform-feats: a global transform (an rxfilename), or per utterance / per
    speaker (``utt2spk``) from a table of matrices; keys without one are skipped with a
    warning; the average (pseudo-)log-determinant over frames is logged."""
    with TransformStep(transform, utt2spk) as step:
        counts = transform_feats(rspecifier, wspecifier, step)
    line = step.summary()
    if line:
        logger.info("%s", line)
    logger.info("Applied transform to %d utterances; %d had errors.", counts.done, counts.err)
    return counts


def paste_feats_table(rspecifiers: list, wspecifier: str, length_tolerance: int = 0) -> Counts:
    """Kaldi's paste-feats: each utterance's matrices side by side, in the inputs' order. Row
    counts that differ by at most ``length_tolerance`` are cut to the shortest (pitch and
    MFCC frames differ by one or two); a larger difference or a key missing from a later input
    is warned about and skipped."""
    counts = Counts()
    others = [RandomAccessReader(r, "mat") for r in rspecifiers[1:]]
    try:
        def one(key, first):
            mats = [first]
            for spec, reader in zip(rspecifiers[1:], others):
                if key not in reader:
                    logger.warning("Missing utt %s from input %s", key, spec)
                    return None
                mats.append(np.asarray(reader[key], np.float32))
            lens = [m.shape[0] for m in mats]
            lo, hi = min(lens), max(lens)
            if hi - lo > length_tolerance:
                logger.warning("Length mismatch %d vs. %d for utt %s exceeds tolerance %d",
                               hi, lo, key, length_tolerance)
                return None
            return np.hstack([_as_float32(m[:lo]) for m in mats])

        counts = transform_feats(rspecifiers[0], wspecifier, one,
                                 "Done {done} utts, errors on {err}")
    finally:
        for r in others:
            r.close()
    return counts


def feat_to_dim(rspecifier: str, out: str) -> int:
    """Kaldi's feat-to-dim: the dim of the first matrix to a wxfilename, or a key->dim table."""
    if is_wspecifier(out):
        with open_features(rspecifier) as reader, TextTableWriter(out) as w:
            for key, feats in reader:
                w.write(key, feats.shape[1])
        return w.count
    if _is_table(rspecifier):
        dim = _first_dim(rspecifier)
    else:
        dim = read_object(rspecifier, "mat").shape[1]
    write_text_object(out, dim)
    return dim


def _first_dim(rspecifier: str) -> int:
    with open_features(rspecifier) as reader:
        for _key, feats in reader:
            return feats.shape[1]
    raise NnetmixError(f"feat-to-dim: no features in {rspecifier}")


def feat_to_len(rspecifier: str, wspecifier: str = "") -> int:
    """Kaldi's feat-to-len: a key->frames table, or the total frame count (returned)."""
    if not _is_table(rspecifier):
        if wspecifier:
            raise UsageError("feat-to-len: a single matrix file takes no output table")
        return read_object(rspecifier, "mat").shape[0]
    total = 0
    with open_features(rspecifier) as reader, \
            TextTableWriter(wspecifier) if wspecifier else contextlib.nullcontext() as w:
        n = 0
        for n, (key, feats) in enumerate(reader, 1):
            if w is not None:
                w.write(key, feats.shape[0])
            total += feats.shape[0]
        if w is not None and not n:  # as copy-feats: a table of nothing is not written
            raise EmptyTableError(f"{rspecifier}: no features, so {wspecifier} is not written")
    return total


def compute_cmvn_stats(rspecifier: str, out: str, spk2utt: str = "",
                       binary: bool = True, fake: bool = False) -> Counts:
    """Kaldi's compute-cmvn-stats: per utterance, per speaker (--spk2utt) or global (wxfilename).

    The stats are 2 x (D+1) float64 (see cmvn.py), written as Kaldi DM matrices. ``fake``
    writes, for every speaker of ``spk2utt``, stats that normalise nothing (count 1, sums 0,
    squares 1: mean 0, variance 1), which steps/compute_cmvn_stats.sh --fake asks for; Kaldi
    builds those in awk, we do it here.
    """
    counts = Counts()
    if fake:
        if not spk2utt or not is_wspecifier(out):
            raise UsageError("--fake needs --spk2utt and a stats wspecifier")
        dim = _first_dim(rspecifier)
        stats = np.zeros((2, dim + 1))
        stats[0, dim] = 1.0
        stats[1, :dim] = 1.0
        with TableWriter(out, "mat") as writer:
            for spk, _utts in read_token_table(spk2utt):
                writer.write(spk, stats)
                counts.done += 1
        logger.info("Wrote fake CMVN stats (no normalization) for %d speakers", counts.done)
        return counts
    if not is_wspecifier(out):
        if spk2utt:
            raise UsageError("--spk2utt needs a stats wspecifier, not a file name")
        stats = None
        with open_features(rspecifier) as reader:
            for _key, feats in reader:
                stats = acc_cmvn_stats(feats, stats)
                counts.done += 1
        if stats is None:
            raise NnetmixError(f"compute-cmvn-stats: no features in {rspecifier}")
        write_object(out, stats, "mat", binary=binary)
        logger.info("Wrote global CMVN stats to %s", out)
    elif spk2utt:
        # a pipeline is opened for each speaker's utterances (kept in spk2utt's order, the
        # order the stats add up in); other tables are looked up by key
        pipe = is_pipeline(rspecifier)
        with contextlib.nullcontext() if pipe else RandomAccessReader(rspecifier, "mat") as ra, \
                TableWriter(out, "mat") as writer:
            for spk, utts in read_token_table(spk2utt):
                feats_reader = ra
                if pipe:
                    with open_features(rspecifier, utts) as reader:
                        feats_reader = dict(reader)
                stats = None
                for utt in utts:
                    if utt not in feats_reader:
                        logger.warning("Did not find features for utterance %s", utt)
                        counts.err += 1
                        continue
                    stats = acc_cmvn_stats(feats_reader[utt], stats)
                    counts.done += 1
                if stats is None:
                    logger.warning("No stats accumulated for speaker %s", spk)
                    continue
                writer.write(spk, stats)
    else:
        counts = transform_feats(rspecifier, out, lambda key, feats: acc_cmvn_stats(feats))
    logger.info("Done accumulating CMVN stats for %d utterances; %d had errors.",
                counts.done, counts.err)
    return counts


def apply_cmvn_table(cmvn: str, rspecifier: str, wspecifier: str, norm_vars: bool = False,
                     norm_means: bool = True, utt2spk: str = "") -> Counts:
    """Kaldi's apply-cmvn: per-key stats (through --utt2spk) or one global stats file."""
    what = "mean and variance" if norm_vars else "mean"
    with CmvnStep(cmvn, norm_vars, norm_means, utt2spk) as step:
        return transform_feats(rspecifier, wspecifier, step, f"Applied cepstral {what} "
                               "normalization to {done} utterances, errors on {err}")
