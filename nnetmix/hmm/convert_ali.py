"""convert-ali: alignments from one tree/model to another (Kaldi's ConvertAlignment,
src/hmm/hmm-utils.cc), which is how steps/train_deltas.sh starts tri1 from the monophone's
alignments.

Each phone of the old alignment (SplitToPhones) is looked up in the new tree with its context
window (N phones around it, 0 past the utterance's ends, after the optional phone map); every
transition-id keeps its HMM state and transition index and gets the new transition-state of
(phone, HMM state, new forward pdf, new self-loop pdf). The frame count and the phone sequence
never change. ``--reorder`` gives the self-loop order of the output (Kaldi's
ChangeReorderingOfAlignment when it differs from the input's).

Not here: ``--frame-subsampling-factor`` other than 1 and models whose topologies differ (Kaldi
then draws a random path per phone): both are refused with a named error.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError, NnetmixError
from nnetmix.hmm.h_transducer import HTransducerError, tuple_index, window_pdfs
from nnetmix.kaldi.context_dep import ContextDependency, read_tree
from nnetmix.kaldi.stream import open_input
from nnetmix.kaldi.table import SequentialReader
from nnetmix.kaldi.transition_model import TransitionModel, read_transition_model
from nnetmix.kaldi.writer import TableWriter

__all__ = ["ConvertAliOptions", "ConvertAliError", "convert_alignment",
           "change_reordering", "read_phone_map", "convert_ali"]

logger = logging.getLogger(__name__)


class ConvertAliError(NnetmixError):
    """An alignment cannot be converted (tree gives no pdf, model lacks the tuple, ...)."""


@dataclass
class ConvertAliOptions:
    """convert-ali's options (src/bin/convert-ali.cc), with Kaldi's defaults."""
    phone_map: str = field(default="", metadata={
        "help": "File name containing old->new phone mapping (each line is: "
                "old-integer-id new-integer-id)"})
    reorder: bool = field(default=True, metadata={
        "help": "True if you want the converted alignments to be 'reordered' versus the way "
                "they appear in the HmmTopology object"})
    repeat_frames: bool = field(default=False, metadata={
        "help": "Only relevant when frame-subsampling-factor != 1.  If true, repeat frames of "
                "alignment by 'frame-subsampling-factor' after alignment conversion, to keep "
                "the alignment the same length as the input alignment."})
    frame_subsampling_factor: int = field(default=1, metadata={
        "help": "Can be used in converting alignments to reduced frame rates. (only 1 is "
                "supported here)"})


def change_reordering(tm: TransitionModel, ali: np.ndarray) -> np.ndarray:
    """ChangeReorderingOfAlignment: in each run of one transition-state, swap its first and
    last transition-ids (moves the forward transition before or after its self-loops)."""
    ali = np.array(ali, dtype=np.int32)
    state, loop = tm.tid2state, tm.tid_is_selfloop
    start, n = 0, len(ali)
    while start != n:
        ts = state[ali[start]]
        start_is_loop = bool(loop[ali[start]])
        end = start + 1
        while end != n and state[ali[end]] == ts:
            if not loop[ali[end]]:
                if not start_is_loop:  # Kaldi's variable is inverted: "not a self-loop"
                    break
                end += 1
                break
            end += 1
        ali[start], ali[end - 1] = ali[end - 1], ali[start]
        start = end
    return ali


def convert_alignment(old: TransitionModel, new: TransitionModel, tree: ContextDependency,
                      ali: Sequence[int], reorder: bool = True,
                      phone_map: Optional[Sequence[int]] = None,
                      index: Optional[dict] = None) -> Optional[np.ndarray]:
    """ConvertAlignment with subsample factor 1: the same number of frames, phone by phone;
    None where SplitToPhones finds the alignment inconsistent (e.g. truncated)."""
    ali = np.asarray(ali, dtype=np.int32)
    if ali.size == 0:
        return ali
    old_reordered = old.is_reordered(ali)
    split = old.split_to_phones(ali)
    if not _split_ok(old, split):
        return None
    phones = [int(old.tid2phone[seg[0]]) for seg in split]
    if phone_map is not None:
        for i, p in enumerate(phones):
            if not 0 <= p < len(phone_map) or phone_map[p] == -1:
                raise ConvertAliError(f"could not map phone {p}")
            phones[i] = int(phone_map[p])
    if index is None:
        index = tuple_index(new)
    N, P = tree.N, tree.P
    out = []
    for pos, seg in enumerate(split):
        window = [phones[pos - P + k] if 0 <= pos - P + k < len(phones) else 0 for k in range(N)]
        phone = window[P]
        if old.topo.topology_for_phone(int(old.tid2phone[seg[0]])) != \
                new.topo.topology_for_phone(phone):
            raise ConvertAliError(f"phone {phone} has another topology in the new model "
                                  "(Kaldi then draws a random alignment; not supported)")
        entry = new.topo.topology_for_phone(phone)
        try:
            pdfs = window_pdfs(tree, new.topo, window)
        except HTransducerError as e:
            raise ConvertAliError(str(e)) from None
        conv = np.empty(len(seg), dtype=np.int32)
        for j, tid in enumerate(seg.tolist()):
            h = int(old.tid2hmm_state[tid])
            st = entry[h]
            key = (phone, h, pdfs[st.forward_pdf_class], pdfs[st.self_loop_pdf_class])
            ts = index.get(key)
            if ts is None:
                raise ConvertAliError(f"the new model has no transition-state for phone "
                                      f"{phone}, HMM state {h}, pdfs {key[2:]} (new model "
                                      "and tree do not match?)")
            conv[j] = new.state2id[ts] + old.tid2index[tid]
        if reorder != old_reordered:
            conv = change_reordering(new, conv)
        out.append(conv)
    return np.concatenate(out)


def _split_ok(tm: TransitionModel, split: list) -> bool:
    """SplitToPhones' checks: every phone ends in a final transition and starts in HMM state 0
    (where that state emits)."""
    for seg in split:
        if not tm.tid_is_final[seg].any():
            return False
        entry = tm.topo.topology_for_phone(int(tm.tid2phone[seg[0]]))
        if entry[0].forward_pdf_class >= 0 and tm.tid2hmm_state[seg[0]] != 0:
            return False
    return True


def read_phone_map(rxfilename: str) -> list[int]:
    """ReadPhoneMap (tree-accu.cc): lines "old new"; unmapped phones are -1."""
    src = open_input(rxfilename)
    lines = []
    try:
        while True:
            raw = src.readline()
            if not raw:
                break
            lines.append(raw.decode("utf-8", errors="replace").rstrip("\n"))
    finally:
        src.close(check=False)
    pairs = {}
    for n, line in enumerate(lines, 1):
        f = line.split()
        if not f:
            continue
        if len(f) != 2 or not all(x.lstrip("-").isdigit() for x in f) or int(f[0]) < 0:
            raise FormatError(f"{rxfilename}:{n}: expected 'old-phone new-phone', got '{line}'")
        if int(f[0]) in pairs:
            raise FormatError(f"{rxfilename}:{n}: phone {f[0]} mapped twice")
        pairs[int(f[0])] = int(f[1])
    out = [-1] * (max(pairs) + 1 if pairs else 0)
    for k, v in pairs.items():
        out[k] = v
    return out


def convert_ali(old_model: str, new_model: str, new_tree: str, ali_rspecifier: str,
                ali_wspecifier: str, opts: ConvertAliOptions = ConvertAliOptions()
                ) -> tuple[int, int]:
    """convert-ali: (succeeded, failed). A transition-id outside the old model is an error
    naming the archive and key; nothing is written then (the table writer aborts)."""
    if opts.frame_subsampling_factor != 1:
        raise ConvertAliError(f"--frame-subsampling-factor={opts.frame_subsampling_factor}: "
                              "only 1 is supported")
    phone_map = read_phone_map(opts.phone_map) if opts.phone_map else None
    old = read_transition_model(old_model)
    new = read_transition_model(new_model)
    if old.topo != new.topo:
        logger.warning("Toplogies of models are not equal: conversion may not be correct or "
                       "may fail.")
    tree = read_tree(new_tree)
    index = tuple_index(new)
    done = failed = 0
    with SequentialReader(ali_rspecifier, "ivec") as reader, \
            TableWriter(ali_wspecifier, "ivec") as writer:
        for key, ali in reader:
            old.check_alignment(ali, f"{ali_rspecifier}: key {key} (model {old_model})")
            try:
                new_ali = convert_alignment(old, new, tree, ali, opts.reorder, phone_map, index)
            except ConvertAliError as e:
                raise ConvertAliError(f"{ali_rspecifier}: key {key}: {e}") from None
            if new_ali is None:
                logger.warning("Could not convert alignment for key %s (possibly truncated "
                               "alignment?)", key)
                failed += 1
                continue
            writer.write(key, new_ali)
            done += 1
    logger.info("Succeeded converting alignments for %d files, failed for %d", done, failed)
    return done, failed
