"""Inference of recurrent networks: per utterance, or in context-sensitive chunks.

Per utterance (the default) is Kaldi's nnet-forward: one stream of T frames, the LSTM state
reset first, so each utterance starts from zero whatever ran before.

Chunked (``chunk_size > 0``) is the decoding of seed 002's CSC-BPTT models ("21-64+21",
decoding with a 32-frame overlap; Chen and Huo's context-sensitive chunks): the utterance is cut
into chunks of ``chunk_size`` frames, consecutive chunks starting ``chunk_size - chunk_overlap``
frames apart, the last one reaching the end. Each chunk is run with up to ``left_context``
frames before it and ``right_context`` after it (fewer at the utterance's edges), as a model
trained on such chunks saw them; only the chunk's own frames are kept, and a frame that two
chunks share gets the mean of their outputs (our reading of "overlapped CSCs": the paper is not
at hand). All chunks of an utterance run at once as parallel streams (row t*S + s is frame t of
chunk s; a chunk shorter than the longest is padding at its end), so the input projection is
still one GEMM per layer. An utterance of at most ``chunk_size`` frames is one chunk: exactly
the per-utterance output.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from nnetmix.nnet.network import Nnet
from nnetmix.nnet.options import NnetError
from nnetmix.nnet.recurrent import MultistreamComponent
from nnetmix.options import option

__all__ = ["ChunkOptions", "chunk_spans", "is_recurrent", "recurrent_forward"]


@dataclasses.dataclass
class ChunkOptions:
    """Context-sensitive chunks for decoding (seed 002: 64, 21, 21, 32)."""

    chunk_size: int = option(0, "Recurrent networks: forward in chunks of this many frames "
                             "(context-sensitive chunks, as the model was trained with CSC-BPTT; "
                             "seed 002: 64); 0: each utterance whole (Kaldi's nnet-forward). "
                             "Feed-forward networks ignore it")
    chunk_left_context: int = option(0, "With --chunk-size: frames of left context run before each "
                                     "chunk and dropped from the output (seed 002: 21)")
    chunk_right_context: int = option(0, "With --chunk-size: frames of right context run after "
                                      "each chunk and dropped from the output (seed 002: 21)")
    chunk_overlap: int = option(0, "With --chunk-size: frames that consecutive chunks share (their "
                                "outputs are averaged; seed 002: 32)")

    def check(self) -> None:
        if self.chunk_size < 0 or self.chunk_left_context < 0 or self.chunk_right_context < 0:
            raise NnetError(f"--chunk-size={self.chunk_size} --chunk-left-context="
                            f"{self.chunk_left_context} --chunk-right-context="
                            f"{self.chunk_right_context}: expected values >= 0")
        if self.chunk_size and not 0 <= self.chunk_overlap < self.chunk_size:
            raise NnetError(f"--chunk-overlap={self.chunk_overlap}: expected 0 <= overlap < "
                            f"--chunk-size={self.chunk_size}")


def is_recurrent(nnet: Nnet) -> bool:
    return any(isinstance(c, MultistreamComponent) for c in nnet.components)


def chunk_spans(num_frames: int, o: ChunkOptions) -> list[tuple[int, int, int, int]]:
    """(run_start, start, end, run_end) of each chunk: frames [start, end) are kept, frames
    [run_start, run_end) are run (the chunk with its context, clipped to the utterance)."""
    T, C = num_frames, o.chunk_size
    if T <= 0:
        return []
    if C <= 0 or T <= C:
        return [(0, 0, T, T)]
    spans, s = [], 0
    while True:
        e = min(s + C, T)
        spans.append((max(0, s - o.chunk_left_context), s, e, min(T, e + o.chunk_right_context)))
        if e >= T:
            return spans
        s += C - o.chunk_overlap


def _one_pass(nnet: Nnet, x: np.ndarray, lengths: list[int], through_softmax: bool) -> np.ndarray:
    """Run S interleaved streams from a reset state; returns the host output (T*S rows)."""
    be = nnet._be()
    nnet.set_seq_lengths(lengths)
    nnet.reset_streams([1] * len(lengths))
    y = nnet.propagate(be.asarray(x, dtype=nnet.dtype), through_softmax=through_softmax)
    return np.asarray(be.to_host(y), dtype=np.float32)


def recurrent_forward(nnet: Nnet, x: np.ndarray, o: ChunkOptions,
                      through_softmax: bool = True) -> np.ndarray:
    """The output of a recurrent network for one utterance's (transformed) features."""
    T = int(x.shape[0])
    spans = chunk_spans(T, o)
    if len(spans) <= 1:
        return _one_pass(nnet, x, [T], through_softmax)
    S = len(spans)
    lengths = [b - a for a, _, _, b in spans]
    L = max(lengths)
    xs = np.zeros((L, S, x.shape[1]), dtype=np.float32)
    for s, (a, _, _, b) in enumerate(spans):
        xs[:b - a, s] = x[a:b]
    y = _one_pass(nnet, xs.reshape(L * S, -1), lengths, through_softmax).reshape(L, S, -1)
    total = np.zeros((T, y.shape[2]), dtype=np.float64)
    count = np.zeros(T, dtype=np.int32)
    for s, (a, start, end, _) in enumerate(spans):
        total[start:end] += y[start - a:end - a, s]
        count[start:end] += 1
    return (total / count[:, None]).astype(np.float32)
