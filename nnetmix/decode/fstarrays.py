"""A decoding graph as flat arrays, the form a compiled decoder walks: arcs grouped by source
state (CSR), in the FST's own arc order, with the exact float32 weights.

The arrays come from OpenFst's ConstFst binary layout (const-fst.h): a header, then one record
per state (float final weight, uint32 first arc, uint32 number of arcs, uint32 input and output
epsilon counts) and one record per arc (int32 ilabel, int32 olabel, float weight, int32
nextstate), both 16-byte aligned when the header says so. A ConstFst already *is* CSR, so a
StdVectorFst is written once as a ConstFst (kaldifst binds that) and read back with numpy:
no per-arc Python and no loss of precision (``fst.to_str`` prints weights with 6 digits).
"""
from __future__ import annotations

import os
import struct
import tempfile
from dataclasses import dataclass

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
import kaldifst
import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.kaldi.fstfile import FstFormatError, check_fst_bytes

__all__ = ["GraphArrays", "ConstFstError", "parse_const_fst", "graph_arrays", "fst_from_arrays"]

class ConstFstError(NnetmixError):
    """Bytes that are not a ConstFst of standard (tropical) arcs."""


@dataclass
class GraphArrays:
    """Arc a of state s (arc_start[s] <= a < arc_start[s + 1]) goes to nextstate[a] with
    ilabel[a] (transition-id, 0 = epsilon), olabel[a] (word) and weight[a]; final[s] is inf
    where s is not final; num_input_eps[s] counts s's epsilon-input arcs (Kaldi's
    NumInputEpsilons, which the decoder uses to skip states without epsilons)."""

    num_states: int
    start: int
    arc_start: np.ndarray     # (num_states + 1,) int64
    ilabel: np.ndarray        # (num_arcs,) int32
    olabel: np.ndarray        # (num_arcs,) int32
    weight: np.ndarray        # (num_arcs,) float32
    nextstate: np.ndarray     # (num_arcs,) int32
    final: np.ndarray         # (num_states,) float32
    num_input_eps: np.ndarray  # (num_states,) int32

    @property
    def num_arcs(self) -> int:
        return int(self.ilabel.shape[0])


def parse_const_fst(data: bytes, what: str = "FST") -> GraphArrays:
    """The arrays of a binary ConstFst<StdArc>, checked (:func:`nnetmix.kaldi.fstfile.
    check_fst_bytes`: counts, start state, destinations); ``what`` names the source in errors."""
    try:
        lay = check_fst_bytes(data, what, allow_empty=True)
    except FstFormatError as e:
        raise ConstFstError(str(e)) from None
    if lay.fst_type != "const":
        raise ConstFstError(f"{what}: a {lay.fst_type} FST; expected a const FST")
    arcs = lay.arcs
    src = np.repeat(np.arange(lay.num_states), np.diff(lay.arc_start))
    num_input_eps = np.bincount(src[arcs["il"] == 0], minlength=lay.num_states)
    return GraphArrays(lay.num_states, lay.start, lay.arc_start,
                       np.ascontiguousarray(arcs["il"]), np.ascontiguousarray(arcs["ol"]),
                       np.ascontiguousarray(arcs["w"]), np.ascontiguousarray(arcs["next"]),
                       np.ascontiguousarray(lay.final), num_input_eps.astype(np.int32))


def graph_arrays(fst) -> GraphArrays:
    """The arrays of a kaldifst.StdVectorFst (written once as a ConstFst in a temporary
    directory and parsed; state numbers and arc order are kept)."""
    with tempfile.TemporaryDirectory(prefix="nnetmix-graph-") as tmp:
        path = os.path.join(tmp, "graph.const.fst")
        kaldifst.StdConstFst(fst).write(path)
        with open(path, "rb") as fh:
            return parse_const_fst(fh.read(), "decoding graph")


def fst_from_arrays(num_states: int, start: int, arc_start: np.ndarray, ilabel: np.ndarray,
                    olabel: np.ndarray, weight: np.ndarray, nextstate: np.ndarray,
                    final: np.ndarray) -> "kaldifst.StdVectorFst":
    """The inverse of graph_arrays: a kaldifst.StdVectorFst with these states (numbers kept)
    and arcs (grouped by source state as ``arc_start`` says, in that order), written in
    OpenFst's VectorFst binary layout with numpy and read back, so that a graph of millions of
    arcs needs no per-arc Python and keeps its float32 weights exactly. The layout (vector-fst.h
    WriteFst): the header, then per state its final weight (float), its number of arcs
    (int64) and its arcs (int32 ilabel, int32 olabel, float weight, int32 nextstate); every
    field is 4 bytes or two, so the body is built as 32-bit words. The header claims no
    properties but kExpanded and kMutable; OpenFst computes the others when asked."""
    arc_start = np.asarray(arc_start, dtype=np.int64)
    narcs = np.diff(arc_start)
    num_arcs = len(ilabel)
    if len(narcs) != num_states or (num_states and arc_start[-1] != num_arcs):
        raise ConstFstError("fst_from_arrays: arc_start does not match the states and arcs")
    states = np.arange(num_states, dtype=np.int64)
    body = np.zeros(3 * num_states + 4 * num_arcs, dtype="<u4")
    at = 3 * states + 4 * arc_start[:-1]              # each state's record, in words
    body[at] = np.asarray(final, dtype="<f4").view("<u4")
    body[at + 1] = (narcs & 0xFFFFFFFF).astype("<u4")
    body[at + 2] = (narcs >> 32).astype("<u4")
    at = 3 * (np.repeat(states, narcs) + 1) + 4 * np.arange(num_arcs, dtype=np.int64)
    body[at] = np.asarray(ilabel, dtype="<i4").view("<u4")
    body[at + 1] = np.asarray(olabel, dtype="<i4").view("<u4")
    body[at + 2] = np.asarray(weight, dtype="<f4").view("<u4")
    body[at + 3] = np.asarray(nextstate, dtype="<i4").view("<u4")
    header = bytes([0xD6, 0xFD, 0xB2, 0x7E])
    for name in (b"vector", b"standard"):
        header += struct.pack("<i", len(name)) + name
    header += struct.pack("<iiQqqq", 2, 0, 3, start, num_states, num_arcs)
    with tempfile.TemporaryDirectory(prefix="nnetmix-graph-") as tmp:
        path = os.path.join(tmp, "graph.fst")
        with open(path, "wb") as fh:
            fh.write(header)
            fh.write(body.tobytes())
        return kaldifst.StdVectorFst.read(path)
