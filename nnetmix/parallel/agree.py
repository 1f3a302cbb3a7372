"""Agreement between ranks: the minibatch count, and refusing to start when ranks differ.

Data-parallel training is only meaningful when every rank runs the same options on the same
model and the same data config, and mixing only works when every rank reaches every mix: all
ranks do the same number of minibatches between mixes, so they agree up front on how many
minibatches the epoch has (the minimum over ranks, as the seeds' implementations do: the
frames past it on the larger shards are dropped for that epoch; the shards are balanced by
frames, so this is at most about one utterance's worth).

Everything here is a collective on ``comm`` with mpi4py's buffer API, and works at size 1.
"""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from nnetmix.parallel.buffers import RankMismatchError

__all__ = ["agree_minibatches", "agree_max", "value_digest", "params_digest", "check_same",
           "check_same_model", "mismatch_message"]

_DESC_LEN = 120


def _allreduce_int(comm: Any, value: int, op_name: str) -> int:
    from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when MPI is used
    send = np.array([int(value)], dtype=np.int64)
    recv = np.empty(1, dtype=np.int64)
    comm.Allreduce(send, recv, op=getattr(MPI, op_name))
    return int(recv[0])


def agree_minibatches(comm: Any, local_count: int) -> int:
    """The number of minibatches every rank does this epoch: the minimum of the local counts."""
    return _allreduce_int(comm, local_count, "MIN")


def agree_max(comm: Any, value: int) -> int:
    """The maximum of an integer over ranks (e.g. 'did any rank hit an error': 0/1)."""
    return _allreduce_int(comm, value, "MAX")


def _canonical(value: Any) -> bytes:
    """A byte string equal for equal values (arrays by dtype, shape and bytes)."""
    if isinstance(value, np.ndarray):
        return b"ndarray:" + str(value.dtype).encode() + str(value.shape).encode() + \
            np.ascontiguousarray(value).tobytes()
    if isinstance(value, (bytes, bytearray)):
        return b"bytes:" + bytes(value)
    if isinstance(value, dict):
        return b"dict:{" + b",".join(_canonical(k) + b"=" + _canonical(value[k])
                                     for k in sorted(value, key=repr)) + b"}"
    if isinstance(value, (list, tuple)):
        return type(value).__name__.encode() + b":[" + b",".join(_canonical(v) for v in value) + b"]"
    if hasattr(value, "__dataclass_fields__"):
        import dataclasses
        return type(value).__name__.encode() + _canonical(dataclasses.asdict(value))
    return type(value).__name__.encode() + b":" + repr(value).encode()


def value_digest(value: Any) -> bytes:
    """sha256 of the canonical form of ``value`` (32 bytes)."""
    return hashlib.sha256(_canonical(value)).digest()


def params_digest(params: Any, backend=None) -> str:
    """Hex sha256 of a flat parameter buffer's bytes (a device buffer is copied to the host)."""
    host = params if isinstance(params, np.ndarray) else (
        backend.to_host(params) if backend is not None else np.asarray(params))
    return hashlib.sha256(np.ascontiguousarray(host).tobytes()).hexdigest()


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array {value.dtype} {value.shape} sha256 {value_digest(value).hex()[:12]}"
    text = repr(value)
    return text if len(text) <= _DESC_LEN else text[:_DESC_LEN - 3] + "..."


def _ranks(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def mismatch_message(name: str, digests: list[bytes], descs: list[str]) -> str:
    """The one-line refusal: ranks grouped by value, rank 0's group first."""
    groups: dict[bytes, list[int]] = {}
    for r, d in enumerate(digests):
        groups.setdefault(d, []).append(r)
    parts = [f"{_ranks(ranks)} {'has' if len(ranks) == 1 else 'have'} {descs[ranks[0]]}"
             for ranks in groups.values()]
    differ = [r for r, d in enumerate(digests) if d != digests[0]]
    verb = "differs" if len(differ) == 1 else "differ"
    return (f"check_same: {name}: {_ranks(differ)} {verb} from rank 0: " + "; ".join(parts)
            + " (every rank must start with the same options, model and data config)")


def check_same(comm: Any, name: str, value: Any) -> None:
    """Raise RankMismatchError on EVERY rank when ``value`` is not the same on all ranks.

    Collective: every rank calls it with its own value. The message names the ranks that differ
    from rank 0 and what each group has (short reprs; arrays by dtype, shape and hash).
    """
    size = comm.Get_size()
    if size == 1:
        return
    digest = np.frombuffer(value_digest(value), dtype=np.uint8).copy()
    alld = np.empty((size, digest.size), dtype=np.uint8)
    comm.Allgather(digest, alld)
    if (alld == alld[0]).all():
        return
    desc = np.frombuffer(_describe(value).encode("utf-8", "replace")[:4 * _DESC_LEN],
                         dtype=np.uint8).copy()
    lens = np.empty(size, dtype=np.int32)
    comm.Allgather(np.array([desc.size], dtype=np.int32), lens)
    displs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int32)
    alldesc = np.empty(int(lens.sum()), dtype=np.uint8)
    from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when MPI is used
    comm.Allgatherv([desc, MPI.BYTE], [alldesc, (lens.tolist(), displs.tolist()), MPI.BYTE])
    descs = [alldesc[o:o + n].tobytes().decode("utf-8", "replace") for o, n in zip(displs, lens)]
    raise RankMismatchError(mismatch_message(name, [bytes(d) for d in alld], descs))


def check_same_model(comm: Any, params: Any, backend=None, name: str = "the initial model") -> str:
    """check_same on the hash of the flat parameter buffer; returns the hex digest."""
    digest = params_digest(params, backend)
    check_same(comm, f"{name} (sha256 of the flat parameter buffer)", digest)
    return digest
