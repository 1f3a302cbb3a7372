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
import tempfile
from dataclasses import dataclass

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
import kaldifst
import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.kaldi.fstfile import FstFormatError, check_fst_bytes, fst_from_arrays

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


