"""convert-ali: alignments from one tree/model to another (Kaldi's ConvertAlignment,
src/hmm/hmm-utils.cc), which is how steps/train_deltas.sh starts tri1 from the monophone's
alignments.

Each phone of the old alignment (SplitToPhones) is looked up in the new tree with its context
window (N phones around it, 0 past the utterance's ends, after the optional phone map); every
transition-id keeps its HMM state and transition index and gets the new transition-state of
(phone, HMM state, new forward pdf, new self-loop pdf). The frame count and the phone sequence
never change. ``--reorder`` gives the self-loop order of the output (Kaldi's
ChangeReorderingOfAlignment when it differs from the input's).

``--frame-subsampling-factor=F`` (chain models' reduced frame rate) maps phone boundaries to
the subsampled time axis (``(t + shift) // F``, shift F-1 by default so the length equals
subsample-feats' output), moves single frames between neighbours so every phone keeps its
topology's minimum length (ComputeNewPhoneLengths), and then, as Kaldi does for any phone whose
length or topology changed, draws a path of the new length through the phone's HMM uniformly
among the arcs that can still finish (GetRandomAlignmentForPhone). ``--repeat-frames`` converts
at every shift 0..F-1 and interleaves the results, giving the input's length back. The draws use
a generator seeded once per run (``seed``), so a run is reproducible; they are not Kaldi's
draws.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError, NnetmixError
from nnetmix.hmm.h_transducer import HTransducerError, tuple_index, window_pdfs
from nnetmix.kaldi.context_dep import ContextDependency, read_tree
from nnetmix.kaldi.hmm_topology import NO_PDF
from nnetmix.kaldi.stream import open_input
from nnetmix.kaldi.table import SequentialReader
from nnetmix.kaldi.transition_model import TransitionModel, read_transition_model
from nnetmix.kaldi.writer import TableWriter
from nnetmix.options import option

__all__ = ["ConvertAliOptions", "ConvertAliError", "convert_alignment", "change_reordering",
           "read_phone_map", "convert_ali", "new_phone_lengths", "min_length",
           "random_phone_alignment"]

logger = logging.getLogger(__name__)
_warned_topology: list = []  # Kaldi warns once per process about a topology mismatch


class ConvertAliError(NnetmixError):
    """An alignment cannot be converted (tree gives no pdf, model lacks the tuple, ...)."""


@dataclass
class ConvertAliOptions:
    """convert-ali's options (src/bin/convert-ali.cc), with Kaldi's defaults."""
    phone_map: str = option("", "File name containing old->new phone mapping (each line is: "
                            "old-integer-id new-integer-id)")
    reorder: bool = option(True, "True if you want the converted alignments to be 'reordered' "
                           "versus the way they appear in the HmmTopology object")
    repeat_frames: bool = option(False, "Only relevant when frame-subsampling-factor != 1.  If "
                                 "true, repeat frames of alignment by 'frame-subsampling-factor' "
                                 "after alignment conversion, to keep the alignment the same "
                                 "length as the input alignment.")
    frame_subsampling_factor: int = option(1, "Can be used in converting alignments to reduced "
                                           "frame rates.")


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
                      index: Optional[dict] = None, subsample_factor: int = 1,
                      repeat_frames: bool = False,
                      rng: Optional[np.random.Generator] = None) -> Optional[np.ndarray]:
    """ConvertAlignment: phone by phone into the new tree and model; None where SplitToPhones
    finds the alignment inconsistent (e.g. truncated) or the subsampled phones cannot all get
    their minimum length. With ``subsample_factor`` 1 and equal topologies the frame count is
    kept and each transition-id mapped; otherwise see the module docstring."""
    ali = np.asarray(ali, dtype=np.int32)
    if subsample_factor < 1:
        raise ConvertAliError(f"--frame-subsampling-factor={subsample_factor}: must be >= 1")
    if ali.size == 0:
        return ali
    if index is None:
        index = tuple_index(new)
    rng = rng if rng is not None else np.random.default_rng(0)
    if not repeat_frames or subsample_factor == 1:
        return _convert(old, new, tree, ali, reorder, phone_map, index, subsample_factor - 1,
                        subsample_factor, rng)
    shifted = []
    for shift in range(subsample_factor - 1, -1, -1):
        one = _convert(old, new, tree, ali, reorder, phone_map, index, shift,
                       subsample_factor, rng)
        if one is None:
            return None
        shifted.append(one)
    # interleave: frame i of shift F-1, of shift F-2, ..., of shift 0 (Kaldi's order)
    out = [x[i] for i in range(max(len(x) for x in shifted)) for x in shifted if i < len(x)]
    return np.array(out, dtype=np.int32)


def _convert(old: TransitionModel, new: TransitionModel, tree: ContextDependency,
             ali: np.ndarray, reorder: bool, phone_map: Optional[Sequence[int]], index: dict,
             shift: int, factor: int, rng: np.random.Generator) -> Optional[np.ndarray]:
    """ConvertAlignmentInternal at one conversion shift."""
    old_reordered = old.is_reordered(ali)
    split = old.split_to_phones(ali)
    if not _split_ok(old, split):
        return None
    old_phones = [int(old.tid2phone[seg[0]]) for seg in split]
    phones = list(old_phones)
    if phone_map is not None:
        for i, p in enumerate(phones):
            if not 0 <= p < len(phone_map) or phone_map[p] == -1:
                raise ConvertAliError(f"could not map phone {p}")
            phones[i] = int(phone_map[p])
    old_lengths = [len(seg) for seg in split]
    if factor == 1 and old.topo == new.topo:
        lengths = old_lengths
    else:
        mins = {}
        for p in set(phones):
            if p not in new.topo.phones:
                raise ConvertAliError(f"phone {p} is not in the new model's topology")
            mins[p] = min_length(new.topo.topology_for_phone(p))
        lengths = new_phone_lengths([mins[p] for p in phones], old_lengths, shift, factor)
        if lengths is None:
            logger.warning("Failed to produce suitable phone lengths")
            return None
    N, P = tree.N, tree.P
    out = []
    for pos, seg in enumerate(split):
        window = [phones[pos - P + k] if 0 <= pos - P + k < len(phones) else 0 for k in range(N)]
        phone = window[P]
        entry = new.topo.topology_for_phone(phone)
        try:
            pdfs = window_pdfs(tree, new.topo, window)
        except HTransducerError as e:
            raise ConvertAliError(str(e)) from None
        same_topo = old.topo.topology_for_phone(old_phones[pos]) == entry
        if not same_topo and not _warned_topology:
            logger.warning("Topology mismatch detected; automatically converting. Won't warn "
                           "again.")
            _warned_topology.append(True)
        if lengths[pos] != len(seg) or not same_topo:
            conv = random_phone_alignment(new, index, phone, pdfs, lengths[pos], rng)
            if reorder:
                conv = change_reordering(new, conv)
            out.append(conv)
            continue
        conv = np.empty(len(seg), dtype=np.int32)
        for j, tid in enumerate(seg.tolist()):
            h = int(old.tid2hmm_state[tid])
            conv[j] = _tid(new, index, phone, h, pdfs, int(old.tid2index[tid]))
        if reorder != old_reordered:
            conv = change_reordering(new, conv)
        out.append(conv)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int32)


def _tid(tm: TransitionModel, index: dict, phone: int, h: int, pdfs: list[int],
         trans_index: int) -> int:
    """PairToTransitionId(TupleToTransitionState(phone, h, forward pdf, self-loop pdf), k)."""
    st = tm.topo.topology_for_phone(phone)[h]
    key = (phone, h, pdfs[st.forward_pdf_class], pdfs[st.self_loop_pdf_class])
    ts = index.get(key)
    if ts is None:
        raise ConvertAliError(f"the new model has no transition-state for phone {phone}, HMM "
                              f"state {h}, pdfs {key[2:]} (new model and tree do not match?)")
    return int(tm.state2id[ts]) + trans_index


def _finish_table(entry: list, length: int) -> np.ndarray:
    """can[h, r]: HMM state h reaches the final state in exactly r more frames (every
    transition out of an emitting state is one frame)."""
    n = len(entry)
    can = np.zeros((n, length + 1), dtype=bool)
    can[n - 1, 0] = True
    for r in range(1, length + 1):
        for h, st in enumerate(entry):
            if st.forward_pdf_class == NO_PDF and st.transitions:
                raise ConvertAliError("a non-emitting HMM state inside a phone: random "
                                      "alignments for it are not supported")
            can[h, r] = any(can[dst, r - 1] for dst, _p in st.transitions)
    return can


def min_length(entry: list) -> int:
    """HmmTopology::MinLength: the fewest frames a path through the phone's HMM takes."""
    for n in range(1, 1000):
        if _finish_table(entry, n)[0, n]:
            return n
    raise ConvertAliError("the phone's HMM has no path to its final state")


def new_phone_lengths(min_lengths: Sequence[int], old_lengths: Sequence[int], shift: int,
                      factor: int) -> Optional[list[int]]:
    """ComputeNewPhoneLengths: phone boundaries at ``(t + shift) // factor``; a phone shorter
    than its minimum takes one frame at a time from the nearest phone (right first, left on a
    strictly nearer one, distance counted in frames in between) that has a spare one. None when
    no phone can give a frame."""
    lengths, t = [], 0
    for n in old_lengths:
        start = (t + shift) // factor
        t += n
        lengths.append((t + shift) // factor - start)
    changed = True
    while changed:
        changed = False
        for i, need in enumerate(min_lengths):
            if lengths[i] >= need:
                continue
            changed = True
            best, best_dist, dist = -1, None, 0
            for j in range(i + 1, len(lengths)):
                if lengths[j] > min_lengths[j]:
                    best, best_dist = j, dist
                    break
                dist += lengths[j]
            dist = 0
            for j in range(i - 1, -1, -1):
                if lengths[j] > min_lengths[j]:
                    if best_dist is None or best_dist > dist:
                        best = j
                    break
                dist += lengths[j]
            if best < 0:
                return None
            lengths[i] += 1
            lengths[best] -= 1
    return lengths


def random_phone_alignment(tm: TransitionModel, index: dict, phone: int, pdfs: list[int],
                           length: int, rng: np.random.Generator) -> np.ndarray:
    """GetRandomAlignmentForPhone: a path of exactly ``length`` frames through the phone's HMM
    (in context: ``pdfs`` per pdf-class), each step chosen uniformly among the transitions from
    which the final state is still reachable in the frames left. Non-reordered order (a state's
    self-loops before its forward transition), as Kaldi draws it."""
    entry = tm.topo.topology_for_phone(phone)
    can = _finish_table(entry, length)
    if not can[0, length]:
        raise ConvertAliError(f"Error generating random alignment (wrong length?): requested "
                              f"length is {length} versus min-length {min_length(entry)}")
    out, h = [], 0
    for r in range(length, 0, -1):
        ok = [k for k, (dst, _p) in enumerate(entry[h].transitions) if can[dst, r - 1]]
        k = ok[int(rng.integers(len(ok)))]
        out.append(_tid(tm, index, phone, h, pdfs, k))
        h = entry[h].transitions[k][0]
    return np.array(out, dtype=np.int32)


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
    if opts.frame_subsampling_factor < 1:
        raise ConvertAliError(f"--frame-subsampling-factor={opts.frame_subsampling_factor}: "
                              "must be >= 1")
    phone_map = read_phone_map(opts.phone_map) if opts.phone_map else None
    old = read_transition_model(old_model)
    new = read_transition_model(new_model)
    if old.topo != new.topo:
        logger.warning("Toplogies of models are not equal: conversion may not be correct or "
                       "may fail.")
    tree = read_tree(new_tree)
    index = tuple_index(new)
    rng = np.random.default_rng(0)  # fixed, as Kaldi's unseeded rand(): reruns agree
    done = failed = 0
    with SequentialReader(ali_rspecifier, "ivec") as reader, \
            TableWriter(ali_wspecifier, "ivec") as writer:
        for key, ali in reader:
            old.check_alignment(ali, f"{ali_rspecifier}: key {key} (model {old_model})")
            try:
                new_ali = convert_alignment(old, new, tree, ali, opts.reorder, phone_map, index,
                                            opts.frame_subsampling_factor, opts.repeat_frames,
                                            rng)
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
