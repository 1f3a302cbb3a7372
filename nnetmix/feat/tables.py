"""Table-level drivers for the feature bin/ tools: one function per Kaldi binary.

Each follows its Kaldi namesake in src/featbin/ — what it reads, what a missing key does
(a WARNING naming the key, counted), its summary line and its success rule (at least one item
done) — so the bin/ files stay argument parsing plus one call. Reading and writing go through
nnetmix.kaldi tables; the arithmetic is in cmvn.py and deltas.py.
"""
from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np

from nnetmix.errors import NnetmixError, UsageError
from nnetmix.feat.cmvn import CmvnError, acc_cmvn_stats, apply_cmvn
from nnetmix.feat.deltas import add_deltas, splice_frames
from nnetmix.feat.textio import (TextTableWriter, is_rspecifier, is_wspecifier,
                                 read_token_table, write_text_object)
from nnetmix.kaldi import (RandomAccessReader, SequentialReader, TableWriter, read_object,
                           write_object)

__all__ = ["Counts", "copy_feats", "transform_feats", "add_deltas_table", "splice_feats_table",
           "feat_to_dim", "feat_to_len", "compute_cmvn_stats", "apply_cmvn_table"]

logger = logging.getLogger(__name__)


@dataclass
class Counts:
    """How many items a tool finished and how many it skipped; ok when at least one finished."""

    done: int = 0
    err: int = 0

    @property
    def ok(self) -> bool:
        return self.done > 0


def _as_float32(mat: np.ndarray) -> np.ndarray:
    return np.asarray(mat, dtype=np.float32)


def transform_feats(rspecifier: str, wspecifier: str,
                    fn: Callable[[str, np.ndarray], np.ndarray | None]) -> Counts:
    """Apply ``fn(key, feats)`` to every matrix; None from fn means 'skip this key'."""
    counts = Counts()
    with SequentialReader(rspecifier, "mat") as reader, TableWriter(wspecifier, "mat") as writer:
        for key, feats in reader:
            out = fn(key, feats)
            if out is None:
                counts.err += 1
                continue
            writer.write(key, out)
            counts.done += 1
    return counts


def copy_feats(rspecifier: str, wspecifier: str, binary: bool = True,
               write_num_frames: str = "") -> Counts:
    """Kaldi's copy-feats: table to table, or one rxfilename to one wxfilename (float32)."""
    if is_rspecifier(rspecifier) != is_wspecifier(wspecifier):
        raise UsageError("copy-feats: give two tables (rspecifier, wspecifier) or two files "
                         f"(rxfilename, wxfilename), got '{rspecifier}' and '{wspecifier}'")
    if not is_rspecifier(rspecifier):
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
            return _as_float32(feats)
        counts = transform_feats(rspecifier, wspecifier, one)
        ok = True
    finally:
        if lengths:
            lengths.close(ok)
    logger.info("Copied %d feature matrices.", counts.done)
    return counts


def add_deltas_table(rspecifier: str, wspecifier: str, order: int = 2, window: int = 2,
                     truncate: int = 0) -> Counts:
    """Kaldi's add-deltas (--truncate keeps only the first N input dimensions)."""
    def one(key, feats):
        if feats.shape[0] == 0:
            logger.warning("Empty feature matrix for utterance %s", key)
            return None
        if truncate > 0:
            if truncate > feats.shape[1]:
                raise UsageError(f"--truncate={truncate} is more than the feature dim "
                                 f"{feats.shape[1]} (key {key})")
            feats = feats[:, :truncate]
        return add_deltas(feats, order, window)
    counts = transform_feats(rspecifier, wspecifier, one)
    logger.info("Added deltas to %d feature matrices, %d empty.", counts.done, counts.err)
    return counts


def splice_feats_table(rspecifier: str, wspecifier: str, left_context: int = 4,
                       right_context: int = 4) -> Counts:
    """Kaldi's splice-feats."""
    counts = transform_feats(rspecifier, wspecifier,
                             lambda key, f: splice_frames(_as_float32(f), left_context,
                                                          right_context))
    logger.info("Spliced %d feature matrices.", counts.done)
    return counts


def feat_to_dim(rspecifier: str, out: str) -> int:
    """Kaldi's feat-to-dim: the dim of the first matrix to a wxfilename, or a key->dim table."""
    if is_wspecifier(out):
        with SequentialReader(rspecifier, "mat") as reader, TextTableWriter(out) as w:
            for key, feats in reader:
                w.write(key, feats.shape[1])
        return w.count
    if is_rspecifier(rspecifier):
        dim = _first_dim(rspecifier)
    else:
        dim = read_object(rspecifier, "mat").shape[1]
    write_text_object(out, dim)
    return dim


def _first_dim(rspecifier: str) -> int:
    with SequentialReader(rspecifier, "mat") as reader:
        for _key, feats in reader:
            return feats.shape[1]
    raise NnetmixError(f"feat-to-dim: no features in {rspecifier}")


def feat_to_len(rspecifier: str, wspecifier: str = "") -> int:
    """Kaldi's feat-to-len: a key->frames table, or the total frame count (returned)."""
    if not is_rspecifier(rspecifier):
        if wspecifier:
            raise UsageError("feat-to-len: a single matrix file takes no output table")
        return read_object(rspecifier, "mat").shape[0]
    total = 0
    with SequentialReader(rspecifier, "mat") as reader, \
            TextTableWriter(wspecifier) if wspecifier else contextlib.nullcontext() as w:
        for key, feats in reader:
            if w is not None:
                w.write(key, feats.shape[0])
            total += feats.shape[0]
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
        with SequentialReader(rspecifier, "mat") as reader:
            for _key, feats in reader:
                stats = acc_cmvn_stats(feats, stats)
                counts.done += 1
        if stats is None:
            raise NnetmixError(f"compute-cmvn-stats: no features in {rspecifier}")
        write_object(out, stats, "mat", binary=binary)
        logger.info("Wrote global CMVN stats to %s", out)
    elif spk2utt:
        with RandomAccessReader(rspecifier, "mat") as feats_reader, \
                TableWriter(out, "mat") as writer:
            for spk, utts in read_token_table(spk2utt):
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
    if norm_vars and not norm_means:
        raise UsageError("You cannot normalize the variance but not the mean.")
    if not is_rspecifier(cmvn):
        if utt2spk:
            logger.warning("--utt2spk option is ignored with global CMVN stats %s", cmvn)
        global_stats = read_object(cmvn, "mat")
        lookup = None
    else:
        spk_of = {}
        if utt2spk:
            for utt, toks in read_token_table(utt2spk):
                spk_of[utt] = toks[0]
        lookup = RandomAccessReader(cmvn, "mat")

    def one(key, feats):
        if lookup is None:
            return apply_cmvn(global_stats, feats, norm_vars, norm_means, cmvn)
        if utt2spk and key not in spk_of:
            logger.warning("No speaker for utterance %s in %s, producing no output for this "
                           "utterance", key, utt2spk)
            return None
        skey = spk_of.get(key, key)
        if skey not in lookup:
            logger.warning("No normalization statistics available for key %s, producing no "
                           "output for this utterance", skey)
            return None
        try:
            return apply_cmvn(lookup[skey], feats, norm_vars, norm_means, skey)
        except CmvnError as e:
            logger.warning("%s, producing no output for utterance %s", e, key)
            return None

    try:
        counts = transform_feats(rspecifier, wspecifier, one)
    finally:
        if lookup is not None:
            lookup.close()
    what = "mean and variance" if norm_vars else "mean"
    logger.info("Applied cepstral %s normalization to %d utterances, errors on %d", what,
                counts.done, counts.err)
    return counts
