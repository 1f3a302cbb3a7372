"""Input labels of an OpenFst VectorFst, read and rewritten in its binary layout.

A triphone model has thousands of transition-ids (14k for 1400 pdfs) while one utterance's
training graph uses a few hundred. The C++ aligner reads its acoustic costs from a dense (frames x
labels) matrix, so relabelling the graph's transition-ids to 1..n (n = those the graph uses)
shrinks that matrix, and the copy into C++, by the same factor: the alignment of a tri1 pass
spent most of its time building and copying the dense matrix, not in the Viterbi search.

kaldifst binds no relabelling and its arc iterators cost microseconds of Python per arc, so the
graph is written once in OpenFst's VectorFst binary layout (vector-fst.h: a header, then per
state a float final weight, an int64 arc count and 16-byte arcs ``ilabel olabel weight
nextstate``), its ilabel fields are rewritten with numpy, and it is read back: the states, the
arc order and the weights are untouched, so the search is the same, tie for tie.
"""
from __future__ import annotations

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
import kaldifst
import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi.fstfile import FstFormatError, check_fst_bytes, fst_from_bytes, scratch_path

__all__ = ["VectorFstLabels", "compact_input_labels"]


class VectorFstLabels:
    """A StdVectorFst's binary bytes with the byte offset of every arc's ilabel."""

    def __init__(self, fst: kaldifst.StdVectorFst):
        path = scratch_path()
        fst.write(path)
        with open(path, "rb") as fh:
            self.data = bytearray(fh.read())
        self._ilabel_pos = self._arc_positions()

    def _arc_positions(self) -> np.ndarray:
        try:
            return check_fst_bytes(bytes(self.data), "FST", allow_empty=True).arc_pos
        except FstFormatError as e:
            raise FormatError(str(e)) from None

    @property
    def ilabels(self) -> np.ndarray:
        """Every arc's input label, in state then arc order (int32)."""
        raw = np.frombuffer(self.data, dtype=np.uint8)
        return raw[self._ilabel_pos[:, None] + np.arange(4)].copy().view("<i4").ravel()

    def with_ilabels(self, ilabels: np.ndarray) -> kaldifst.StdVectorFst:
        """The same FST with the arcs' input labels replaced (same order as :attr:`ilabels`)."""
        new = np.ascontiguousarray(ilabels, dtype="<i4")
        raw = np.frombuffer(self.data, dtype=np.uint8).copy()
        raw[self._ilabel_pos[:, None] + np.arange(4)] = new.view(np.uint8).reshape(-1, 4)
        return fst_from_bytes(raw.tobytes())


def compact_input_labels(fst: kaldifst.StdVectorFst) -> tuple[kaldifst.StdVectorFst, np.ndarray]:
    """(fst', labels): fst' has input label i (1..n) where ``fst`` had ``labels[i - 1]``
    (sorted distinct non-epsilon labels); epsilons stay 0."""
    fl = VectorFstLabels(fst)
    il = fl.ilabels
    labels, inverse = np.unique(il, return_inverse=True)
    if len(labels) and labels[0] == 0:
        labels = labels[1:]
    else:
        inverse = inverse + 1
    return fl.with_ilabels(inverse.astype(np.int32)), labels.astype(np.int64)
