"""Alignments and transition models in human-readable form: Kaldi's show-alignments and
show-transitions (src/bin/show-alignments.cc, show-transitions.cc).

show-alignments prints per utterance three lines: the key and the alignment's transition-ids
grouped by phone (``[ 4 1 1 ]``), the key and each group's phone symbol under it (both padded to
the same width), and an empty line. show-transitions prints TransitionModel::Print: per
transition-state its phone, HMM state and pdf (forward and self-loop pdfs where the topology is
not an ordinary HMM), then per transition-id its probability (float32 exp of the log-prob, 6
significant digits as C++'s default stream), the occupation count of its pdf when an occs file
is given, and ``[self-loop]`` or ``[from -> to]``.
"""
from __future__ import annotations

from typing import Optional, TextIO

import numpy as np

from nnetmix.kaldi.table import SequentialReader
from nnetmix.kaldi.transition_model import TransitionModel
from nnetmix.lang.symbols import SymbolTable

__all__ = ["alignment_lines", "show_alignments", "transition_lines"]


def alignment_lines(tm: TransitionModel, phones: SymbolTable, key: str, ali) -> list[str]:
    """The two lines (ids, phones) show-alignments prints for one alignment."""
    ids_line, phone_line = [], []
    for group in tm.split_to_phones(ali):
        ids = "[ " + "".join(f"{t} " for t in group.tolist()) + "] "
        phone = phones.symbol(int(tm.tid2phone[group[0]]), f"{key}: phone") + " "
        width = max(len(ids), len(phone))
        ids_line.append(ids.ljust(width))
        phone_line.append(phone.ljust(width))
    return [f"{key}  " + "".join(ids_line), f"{key}  " + "".join(phone_line)]


def show_alignments(tm: TransitionModel, phones: SymbolTable, rspecifier: str,
                    out: TextIO) -> int:
    """Write every alignment of ``rspecifier`` to ``out``; returns how many."""
    done = 0
    with SequentialReader(rspecifier, "ivec") as reader:
        for key, ali in reader:
            tm.check_alignment(ali, f"{rspecifier}: key {key}")
            out.write("\n".join(alignment_lines(tm, phones, key, ali)) + "\n\n")
            done += 1
    return done


def transition_lines(tm: TransitionModel, phones: SymbolTable,
                     occs: Optional[np.ndarray] = None) -> list[str]:
    """The lines of Kaldi's TransitionModel::Print (show-transitions)."""
    if occs is not None and len(occs) != tm.num_pdfs:
        raise ValueError(f"the occs have {len(occs)} entries, the model {tm.num_pdfs} pdfs")
    is_hmm = tm.topo.is_hmm()
    out = []
    for ts, (phone, hmm_state, fwd, loop) in enumerate(tm.tuples.tolist(), start=1):
        name = phones.symbol(phone, f"transition-state {ts}: phone")
        head = f"Transition-state {ts}: phone = {name} hmm-state = {hmm_state}"
        out.append(head + (f" pdf = {fwd}" if is_hmm else
                           f" forward-pdf = {fwd} self-loop-pdf = {loop}"))
        entry = tm.topo.topology_for_phone(phone)
        for index in range(len(entry[hmm_state].transitions)):
            tid = int(tm.state2id[ts]) + index
            line = f" Transition-id = {tid} p = {_g(np.exp(tm.log_probs[tid]))}"
            if occs is not None:
                line += f" count of pdf = {_g(occs[loop if tm.tid_is_selfloop[tid] else fwd])}"
            if tm.tid_is_selfloop[tid]:
                line += " [self-loop]"
            else:
                line += f" [{hmm_state} -> {entry[hmm_state].transitions[index][0]}]"
            out.append(line)
    return out


def _g(x) -> str:
    """C++'s default ostream output of a float or double (precision 6, %g)."""
    return "{:.6g}".format(float(x))
