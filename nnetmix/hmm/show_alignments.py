"""Alignments in human-readable form: Kaldi's show-alignments (src/bin/show-alignments.cc).

Per utterance three lines: the key and the alignment's transition-ids grouped by phone
(``[ 4 1 1 ]``), the key and each group's phone symbol under it (both padded to the same
width), and an empty line.
"""
from __future__ import annotations

from typing import TextIO

from nnetmix.kaldi.table import SequentialReader
from nnetmix.kaldi.transition_model import TransitionModel
from nnetmix.lang.symbols import SymbolTable

__all__ = ["alignment_lines", "show_alignments"]


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
