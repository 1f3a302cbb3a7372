"""Compressed mixing with error feedback (``--mix-compression``).

What is sent at a mix is not the model but each rank's update since the last mixed model,
compressed, with the part the compression dropped kept on the rank and added to its next update
(error feedback: Seide et al. 2014, 1-bit SGD; Karimireddy et al. 2019, EF-SGD). With A the last
mixed model (the same on every rank), theta_r rank r's model at the mix, e_r its residual and
C/D a compressor and its decompressor, every mix does

    v_r     = (theta_r - A) + e_r
    theta   = A + (1/N) sum_r D(C(v_r))          on every rank, bitwise the same
    e_r     <- v_r - D(C(v_r))
    A       <- theta

so the sum of what was applied over all mixes is the sum of the true updates minus the residuals
still held: nothing is lost, only delayed, and the residual stays bounded (it is at most what one
compression drops). Model averaging (``--mixing=allreduce``) takes A = the last mixed model; BMUF
computes its block's aggregated update G(t) = W_bar(t) - W_g(t-1) the same way with A = W_g(t-1)
(:class:`~nnetmix.parallel.bmuf.BMUF` ``feedback=``), and then filters it with block momentum as
without compression. ``none`` is not a compressor: the mixing is today's, bit for bit.

The compressors (bytes per value of the payload, float32 is 4):

========= ================================================================= ===================
``fp16``  IEEE half precision (values beyond +-65504 clipped to it)          2
``bf16``  bfloat16: the top 16 bits of the float32, rounded to nearest even;   2
          numpy has no bfloat16 type, so it is done on the uint32 bits
``1bit``  the sign of each value, plus two float32 per block of 256 values:   1/8 + 8/256
          the mean of the block's values >= 0 and the mean of its values < 0   (25.6x fewer)
          (the reconstruction values that minimise the squared error for that
          split). Seide et al. and CNTK keep two values per matrix column; a
          column of our row-major weights is strided and the flat buffer also
          holds the biases, so fixed blocks of the flat buffer take its place.
``topk``  the ceil(f n) values of largest magnitude, as int32 index and       8 f
          float32 value (``--mix-compression-topk-fraction`` f)
========= ================================================================= ===================

The reduction is decompress-reduce: one ``Allgather`` of the ranks' payloads (every payload has
the same size, fixed by n and the options), then every rank decompresses all N payloads and adds
them in rank order, so all ranks compute the same float32 sum and end the mix with bitwise
identical models. Each rank sends its P payload bytes to N - 1 others ((N - 1) P on the wire per
rank with a ring all-gather), against 2 (N - 1)/N 4n for a ring all-reduce of float32: 1bit is
51/N times fewer bytes, so it wins up to about 50 ranks and loses its 10x beyond 5. A
reduce-scatter/all-gather of 1-bit blocks (each rank owns n/N of the buffer, receives the other
ranks' compressed blocks of its part, sums them, compresses the sum again with an error
feedback of its own, and all-gathers the compressed sums: CNTK's and DeepSpeed 1-bit Adam's
scheme) would send 2 (N - 1)/N P per rank, independent of N, at the price of a second
compression; it is not built here.

The residuals are part of the checkpoint (:meth:`ErrorFeedback.state_dict`,
``<model>.mix.npz``, written with the model by :func:`nnetmix.driver.dnn.dnn_epoch`). The
arithmetic is numpy on the host: a device buffer is copied to the host and back at each mix.
"""
from __future__ import annotations

import abc
import math
import os
import time
from typing import Any, Optional

import numpy as np

from nnetmix.parallel.buffers import ParallelError
from nnetmix.utils.state import Array, read_npz, write_npz

__all__ = ["COMPRESSIONS", "BLOCK", "Codec", "make_codec", "check_compression", "ErrorFeedback",
           "read_mix_state", "write_mix_state", "MIX_STATE_SUFFIX"]

COMPRESSIONS = ("none", "fp16", "bf16", "1bit", "topk")
BLOCK = 256                     #: values per pair of 1bit reconstruction values
MIX_STATE_SUFFIX = ".mix.npz"   #: the residuals' checkpoint beside a model
_FP16_MAX = 65504.0


def check_compression(name: str, topk_fraction: float, strategy: str = "allreduce") -> None:
    """The one check of --mix-compression and --mix-compression-topk-fraction (with the mixing
    strategy it must go with)."""
    if name not in COMPRESSIONS:
        raise ParallelError(f"--mix-compression={name}: expected one of {', '.join(COMPRESSIONS)}")
    if not 0.0 < topk_fraction <= 1.0:
        raise ParallelError(f"--mix-compression-topk-fraction={topk_fraction:g}: expected a "
                            "fraction in (0, 1]")
    if name != "none" and strategy == "hierarchical":
        raise ParallelError(f"--mix-compression={name} with --mixing=hierarchical: compressed "
                            "mixing is built for the flat all-reduce only (use "
                            "--mixing=allreduce, or --mix-compression=none)")
    if name != "none" and strategy != "allreduce":
        raise ParallelError(f"--mix-compression={name} with --mixing={strategy}: compression "
                            "sends each rank's update since the last model all ranks share, and "
                            "butterfly and ring mixing exchange whole models with one partner and "
                            "share none (use --mixing=allreduce or --bmuf=true)")


class Codec(abc.ABC):
    """One compressor: ``nbytes(n)`` payload bytes for n float32 values; ``encode(v, out)``
    fills the uint8 payload ``out``; ``decode(p, out)`` writes the n values it stands for and
    ``decode_add(p, acc)`` adds them to ``acc``."""

    name = ""

    @abc.abstractmethod
    def nbytes(self, n: int) -> int:
        """(each codec its own)"""

    @abc.abstractmethod
    def encode(self, v: np.ndarray, out: np.ndarray) -> None:
        """(each codec its own)"""

    @abc.abstractmethod
    def decode(self, p: np.ndarray, out: np.ndarray) -> None:
        """(each codec its own)"""

    def decode_add(self, p: np.ndarray, acc: np.ndarray) -> None:
        tmp = np.empty_like(acc)
        self.decode(p, tmp)
        acc += tmp


class Fp16(Codec):
    name = "fp16"

    def nbytes(self, n: int) -> int:
        return 2 * n

    def encode(self, v, out) -> None:
        h = out.view(np.float16)
        np.clip(v, -_FP16_MAX, _FP16_MAX, out=h, casting="same_kind")

    def decode(self, p, out) -> None:
        out[:] = p.view(np.float16)

    def decode_add(self, p, acc) -> None:
        acc += p.view(np.float16)


class Bf16(Codec):
    """bfloat16 by hand: round the float32 bits to their top 16, to nearest, ties to even (a
    NaN keeps its sign and becomes a quiet NaN)."""
    name = "bf16"

    def nbytes(self, n: int) -> int:
        return 2 * n

    def encode(self, v, out) -> None:
        u = np.ascontiguousarray(v, dtype=np.float32).view(np.uint32)
        r = (u + (np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))) >> np.uint32(16)
        nan = np.isnan(v)
        if nan.any():
            r[nan] = (u[nan] >> np.uint32(16)) | np.uint32(0x40)
        out.view(np.uint16)[:] = r

    def decode(self, p, out) -> None:
        out.view(np.uint32)[:] = p.view(np.uint16).astype(np.uint32) << np.uint32(16)


class OneBit(Codec):
    """Sign bits and, per block of :data:`BLOCK` values, the means of the values >= 0 and < 0.
    Payload: 2 float32 per block (positive mean, negative mean), then the packed sign bits."""
    name = "1bit"

    def nbytes(self, n: int) -> int:
        return 8 * (-(-n // BLOCK)) + (-(-n // 8))

    def encode(self, v, out) -> None:
        n = v.shape[0]
        nb = -(-n // BLOCK)
        starts = np.arange(0, n, BLOCK)
        pos = v >= 0
        npos = np.add.reduceat(pos, starts, dtype=np.int64)
        nneg = np.diff(np.append(starts, n)) - npos
        spos = np.add.reduceat(np.where(pos, v, np.float32(0)), starts, dtype=np.float64)
        sneg = np.add.reduceat(v, starts, dtype=np.float64) - spos
        scales = out[:8 * nb].view(np.float32).reshape(nb, 2)
        scales[:, 0] = spos / np.maximum(npos, 1)
        scales[:, 1] = sneg / np.maximum(nneg, 1)
        out[8 * nb:] = np.packbits(pos)

    def decode(self, p, out) -> None:
        n = out.shape[0]
        nb = -(-n // BLOCK)
        scales = p[:8 * nb].view(np.float32).reshape(nb, 2)
        bits = np.unpackbits(p[8 * nb:], count=nb * BLOCK).view(bool).reshape(nb, BLOCK)
        full = np.where(bits, scales[:, :1], scales[:, 1:])
        out[:] = full.reshape(-1)[:n]


class TopK(Codec):
    """The k = ceil(f n) largest magnitudes: k int32 indices (ascending), then k float32 values."""
    name = "topk"

    def __init__(self, fraction: float):
        self.fraction = float(fraction)

    def k(self, n: int) -> int:
        return max(1, min(n, int(math.ceil(self.fraction * n))))

    def nbytes(self, n: int) -> int:
        return 8 * self.k(n)

    def encode(self, v, out) -> None:
        n = v.shape[0]
        k = self.k(n)
        idx = (np.arange(n) if k == n
               else np.sort(np.argpartition(np.abs(v), n - k)[n - k:]))
        out[:4 * k].view(np.int32)[:] = idx
        out[4 * k:].view(np.float32)[:] = v[idx]

    def _split(self, p):
        k = p.shape[0] // 8
        return p[:4 * k].view(np.int32), p[4 * k:].view(np.float32)

    def decode(self, p, out) -> None:
        idx, vals = self._split(p)
        out.fill(0.0)
        out[idx] = vals

    def decode_add(self, p, acc) -> None:
        idx, vals = self._split(p)
        acc[idx] += vals                    # the indices of one payload are distinct


def make_codec(name: str, topk_fraction: float = 0.01) -> Codec:
    check_compression(name, topk_fraction)
    if name == "none":
        raise ParallelError("--mix-compression=none: no compressor (the mixing is uncompressed)")
    return {"fp16": Fp16, "bf16": Bf16, "1bit": OneBit}[name]() if name != "topk" \
        else TopK(topk_fraction)


#: the arrays of a mixing state file (one residual row per rank)
_STATE_SPEC = {"residual": Array("f", (None, None)), "compression": Array("U"),
               "topk_fraction": Array("f"), "num_ranks": Array("iu"), "model": Array("U")}
_FIX = "remove it to start with zero residuals"


def read_mix_state(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays of a mixing state file, checked; damage is one StateError naming the file."""
    return read_npz(path, "mixing state", _STATE_SPEC, _FIX)


def write_mix_state(path: str | os.PathLike, state: dict[str, np.ndarray]) -> None:
    write_npz(path, state)


class ErrorFeedback:
    """The compressed average of the ranks' updates with error feedback (module docstring), for
    one flat float32 buffer of ``count`` values over ``comm``.

    Model averaging: ``start(params)`` takes the last mixed model A, then ``average(params)``
    at every mix. BMUF: ``average(params, W_g)`` at every block (A = W_g, kept by BMUF).
    ``payload_bytes`` is one rank's payload per mix; ``bytes_sent`` counts what this rank has
    sent, (N - 1) payloads per mix; ``seconds`` the time spent.
    """

    def __init__(self, comm: Any, compression: str, count: int, topk_fraction: float = 0.01,
                 backend=None):
        self.codec = make_codec(compression, topk_fraction)
        self.compression, self.topk_fraction = compression, float(topk_fraction)
        self.comm = comm.Dup()
        self.size, self.rank = self.comm.Get_size(), self.comm.Get_rank()
        self.count = int(count)
        self.backend = backend if backend is not None and getattr(backend, "name", "cpu") != "cpu" \
            else None
        self.residual = np.zeros(self.count, np.float32)
        self.anchor: Optional[np.ndarray] = None
        self.payload_bytes = self.codec.nbytes(self.count)
        self._send = np.empty(self.payload_bytes, np.uint8)
        self._recv = np.empty(self.size * self.payload_bytes, np.uint8)
        self._v = np.empty(self.count, np.float32)
        self._acc = np.empty(self.count, np.float32)
        self.bytes_sent = 0
        self.mixes = 0
        self.seconds = 0.0

    def _host(self, buf) -> np.ndarray:
        if self.backend is None:
            if not isinstance(buf, np.ndarray) or buf.dtype != np.float32 \
                    or buf.shape != (self.count,):
                raise ParallelError(f"--mix-compression: expected a flat numpy buffer of "
                                    f"{self.count} float32, got {type(buf).__name__} "
                                    f"{getattr(buf, 'dtype', '')} {getattr(buf, 'shape', '')}")
            return buf
        self.backend.synchronize()
        return np.asarray(self.backend.to_host(buf), dtype=np.float32)

    def start(self, params) -> None:
        """A <- params (the model every rank starts from)."""
        self.anchor = np.array(self._host(params), dtype=np.float32, copy=True)

    def average(self, params, anchor=None) -> None:
        """params <- A + (1/N) sum_r D(C(params_r - A + e_r)) on every rank; e <- what this
        rank's compression dropped. ``anchor`` None: A is the one of :meth:`start`, moved to
        the result."""
        t0 = time.perf_counter()
        own = anchor is None
        if own and self.anchor is None:
            raise ParallelError("ErrorFeedback.average before start()")
        a = self.anchor if own else self._host(anchor)
        x = self._host(params)
        v, acc, codec, P = self._v, self._acc, self.codec, self.payload_bytes
        np.subtract(x, a, out=v)
        v += self.residual
        codec.encode(v, self._send)
        codec.decode(self._send, acc)
        np.subtract(v, acc, out=self.residual)
        self.comm.Allgather(self._send, self._recv)
        acc.fill(0.0)
        for j in range(self.size):                        # rank order: the same sum everywhere
            codec.decode_add(self._recv[j * P:(j + 1) * P], acc)
        acc *= np.float32(1.0 / self.size)
        if self.backend is None:
            np.add(a, acc, out=x)
        else:
            x = a + acc
            self.backend.copy(params, self.backend.asarray(x, dtype=np.float32))
        if own:
            np.copyto(a, x)
        self.bytes_sent += (self.size - 1) * P
        self.mixes += 1
        self.seconds += time.perf_counter() - t0

    # -- checkpoints -----------------------------------------------------------------------------
    def state_dict(self, model_digest: str) -> Optional[dict[str, np.ndarray]]:
        """Every rank's residual, gathered on rank 0 (None elsewhere), with what the state
        belongs to: the compression and the digest of the model saved beside it. Collective."""
        rows = np.empty((self.size, self.count), np.float32) if self.rank == 0 else None
        self.comm.Gather(self.residual, rows, root=0)
        if self.rank:
            return None
        return {"residual": rows, "compression": np.str_(self.compression),
                "topk_fraction": np.float64(self.topk_fraction),
                "num_ranks": np.int64(self.size), "model": np.str_(model_digest)}

    def load_state_dict(self, state: dict[str, Any], where: str, model_digest: str) -> None:
        """Take this rank's residual from a state (every rank reads the same file), refusing a
        state of another model, size or number of ranks with one line naming ``where``."""
        res = np.asarray(state["residual"])
        if res.shape != (self.size, self.count):
            raise ParallelError(f"{where}: mixing state has residuals of shape {res.shape}, "
                                f"expected ({self.size}, {self.count}) for {self.size} ranks and "
                                f"this model ({_FIX})")
        if str(state["model"]) != model_digest:
            raise ParallelError(f"{where}: mixing state saved with another model than the one "
                                f"given ({_FIX})")
        saved = str(state["compression"])
        if saved != self.compression:
            raise ParallelError(f"{where}: mixing state saved with --mix-compression={saved}, "
                                f"running with --mix-compression={self.compression} ({_FIX})")
        self.residual[:] = res[self.rank]

    def free(self) -> None:
        if self.comm is not None:
            self.comm.Free()
            self.comm = None
