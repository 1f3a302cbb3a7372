"""OpenFst binary FSTs checked byte by byte before compiled code sees them.

kaldifst and the OpenFst algorithms trust their input: a truncated L.fst reads as ``None``
(OpenFst prints its own ``ERROR: VectorFst::Read`` and the next call segfaults), and an FST whose
start state or an arc's destination is out of range reads fine and crashes the decoder or
compose(). Every FST a tool reads (L, G, HCLG, H, CLG, training graphs) goes through
:func:`check_fst_bytes` first; a file that fails is one :class:`FstFormatError` naming it.

The layout (fst.h FstHeader, vector-fst.h WriteFst, const-fst.h, symbol-table.cc; all
little-endian, strings are an int32 length and the bytes): int32 magic 2125659606, string FST
type, string arc type, int32 version, int32 flags (1, 2: input/output symbol table follows;
4: the ConstFst body is 16-byte aligned), uint64 properties, int64 start, int64 number of states
(-1 when a VectorFst was written to a stream that cannot seek), int64 number of arcs (not kept up
to date by VectorFst). VectorFst: per state a float32 final weight, an int64 arc count and 16-byte
arcs ``int32 ilabel, int32 olabel, float32 weight, int32 nextstate``. ConstFst: the state records
(float32 final, uint32 first arc, uint32 arc count, uint32 input and output epsilon counts), then
the arcs.
"""
from __future__ import annotations

import atexit
import os
import shutil
import struct
import tempfile
import threading
from dataclasses import dataclass
from typing import Optional

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi.errors import KaldiIOError
from nnetmix.kaldi.stream import read_all
from nnetmix.kaldi.table import iter_object_table

__all__ = ["FST_MAGIC", "FstFormatError", "FstLayout", "check_fst_bytes", "read_fst_bytes",
           "read_checked_fst", "const_to_vector", "fst_from_arrays", "fst_from_bytes", "scratch_path",
           "read_fst_stream", "iter_fst_table"]

FST_MAGIC = 2125659606
_SYMTAB_MAGIC = 2125658996
_HEADER = struct.Struct("<iiQqqq")
_ARC = np.dtype([("il", "<i4"), ("ol", "<i4"), ("w", "<f4"), ("next", "<i4")])
_CONST_STATE = np.dtype([("final", "<f4"), ("pos", "<u4"), ("narcs", "<u4"), ("ni", "<u4"),
                         ("no", "<u4")])
_MAX_NAME = 64  # FST and arc type names ("vector", "standard", "compactlattice44")


class FstFormatError(FormatError):
    """A file that is not a well-formed binary FST of the kind a tool reads."""


@dataclass
class FstLayout:
    """What :func:`check_fst_bytes` found: the header and, per arc in state order, its byte
    offset in the data (``arc_pos``) and fields. ``end`` is the offset after the FST."""

    fst_type: str
    arc_type: str
    flags: int
    start: int
    num_states: int
    arc_pos: np.ndarray      # (num_arcs,) int64: byte offset of each arc record
    arc_start: np.ndarray    # (num_states + 1,) int64: state s has arcs arc_start[s]:[s + 1]
    arcs: np.ndarray         # (num_arcs,) _ARC records
    final: np.ndarray        # (num_states,) float32
    end: int

    @property
    def num_arcs(self) -> int:
        return int(self.arcs.shape[0])


class _Bytes:
    """A cursor over the data that names the file and the field when it runs out."""

    def __init__(self, data: bytes, what: str, pos: int = 0):
        self.data, self.what, self.pos = data, what, pos

    def fail(self, why: str) -> FstFormatError:
        return FstFormatError(f"{self.what}: {why}")

    def unpack(self, fmt: struct.Struct, field: str) -> tuple:
        if self.pos + fmt.size > len(self.data):
            raise self.fail(f"truncated ({len(self.data)} bytes, cut in the {field})")
        out = fmt.unpack_from(self.data, self.pos)
        self.pos += fmt.size
        return out

    def string(self, field: str, limit: int = _MAX_NAME) -> str:
        (n,) = self.unpack(_I32, field)
        if n < 0 or n > limit:
            raise self.fail(f"not a binary FST (the {field} has length {n})")
        if self.pos + n > len(self.data):
            raise self.fail(f"truncated ({len(self.data)} bytes, cut in the {field})")
        raw = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        try:
            return raw.decode("ascii")
        except UnicodeDecodeError:
            raise self.fail(f"not a binary FST (the {field} is not text)") from None

    def symbol_table(self, which: str) -> None:
        (magic,) = self.unpack(_I32, f"{which} symbol table")
        if magic != _SYMTAB_MAGIC:
            raise self.fail(f"bad {which} symbol table (magic number {magic})")
        self.string(f"{which} symbol table's name", 1 << 16)
        _avail, size = self.unpack(_Q2, f"{which} symbol table")
        if size < 0 or size > len(self.data):
            raise self.fail(f"bad {which} symbol table (size {size})")
        for _ in range(size):
            self.string(f"{which} symbol table", 1 << 16)
            self.unpack(_I64, f"{which} symbol table")


_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_Q2 = struct.Struct("<qq")


def check_fst_bytes(data: bytes, what: str, *, max_ilabel: Optional[int] = None,
                    max_olabel: Optional[int] = None, whole: bool = True,
                    offset: int = 0, allow_empty: bool = False,
                    labels_from: str = "") -> FstLayout:
    """Check a binary FST of standard (tropical) arcs; raise FstFormatError naming ``what``.

    Checked: the magic number, the type names (vector or const FST, standard arcs), the header,
    the state and arc counts against the bytes there are, the start state and every arc's
    destination in range, labels not negative and at most ``max_ilabel`` / ``max_olabel`` where
    the caller knows its symbol tables (``labels_from`` says where the limits come from, for
    the message). ``whole``: nothing may follow the FST (a file; in an archive the next entry
    follows). ``allow_empty``: an FST with no states is accepted.
    """
    if len(data) <= offset:
        raise FstFormatError(f"{what}: empty file, expected a binary FST")
    cur = _Bytes(data, what, offset)
    (magic,) = cur.unpack(_I32, "magic number")
    if magic != FST_MAGIC:
        raise cur.fail("not an OpenFst binary FST (bad magic number)")
    fst_type = cur.string("FST type")
    arc_type = cur.string("arc type")
    if fst_type not in ("vector", "const"):
        raise cur.fail(f"an FST of type '{fst_type}' (expected vector or const)")
    if arc_type != "standard":
        raise cur.fail(f"an FST of '{arc_type}' arcs (expected standard, tropical arcs)")
    version, flags, _props, start, num_states, num_arcs = cur.unpack(_HEADER, "header")
    if flags & 1:
        cur.symbol_table("input")
    if flags & 2:
        cur.symbol_table("output")
    if fst_type == "vector":
        if version != 2:
            raise cur.fail(f"VectorFst file version {version} (expected 2)")
        lay = _vector_body(cur, num_states, start, flags)
    else:
        if version not in (1, 2):
            raise cur.fail(f"ConstFst file version {version} (expected 1 or 2)")
        lay = _const_body(cur, num_states, num_arcs, start, flags)
    lay.fst_type, lay.arc_type = fst_type, arc_type
    if whole and lay.end != len(data):
        raise cur.fail(f"{len(data) - lay.end} bytes of garbage after the FST's "
                       f"{lay.num_states} states")
    _check_graph(cur, lay, max_ilabel, max_olabel, allow_empty, labels_from)
    return lay


def _vector_body(cur: _Bytes, num_states: int, start: int, flags: int) -> FstLayout:
    data, n = cur.data, len(cur.data)
    if num_states < -1 or num_states > (n - cur.pos) // 12:
        raise cur.fail(f"truncated or not an FST (the header claims {num_states} states in "
                       f"{n} bytes)")
    states, counts = [], []
    pos = cur.pos
    unpack = _I64.unpack_from
    s = 0
    while num_states == -1 and pos < n or s < num_states:  # -1: states up to the end of file
        if pos + 12 > n:
            raise cur.fail(f"truncated ({n} bytes, cut in state {s} of {num_states})")
        (k,) = unpack(data, pos + 4)
        if k < 0 or pos + 12 + 16 * k > n:
            raise cur.fail(f"truncated ({n} bytes, cut in the arcs of state {s} of "
                           f"{num_states}, which claims {k} arcs)")
        states.append(pos)
        counts.append(k)
        pos += 12 + 16 * k
        s += 1
    st = np.asarray(states, dtype=np.int64)
    cnt = np.asarray(counts, dtype=np.int64)
    arc_start = np.zeros(len(st) + 1, dtype=np.int64)
    np.cumsum(cnt, out=arc_start[1:])
    within = np.arange(int(arc_start[-1]), dtype=np.int64) - np.repeat(arc_start[:-1], cnt)
    arc_pos = np.repeat(st + 12, cnt) + 16 * within
    raw = np.frombuffer(data, dtype=np.uint8)
    arcs = raw[arc_pos[:, None] + np.arange(16)].copy().view(_ARC).ravel() if len(arc_pos) \
        else np.zeros(0, dtype=_ARC)
    final = raw[st[:, None] + np.arange(4)].copy().view("<f4").ravel() if len(st) \
        else np.zeros(0, dtype="<f4")
    return FstLayout("", "", flags, start, len(st), arc_pos, arc_start, arcs, final, pos)


def _const_body(cur: _Bytes, num_states: int, num_arcs: int, start: int,
                flags: int) -> FstLayout:
    n = len(cur.data)
    if num_states < 0 or num_arcs < 0 or num_states * 20 + num_arcs * 16 > n - cur.pos:
        raise cur.fail(f"truncated ({n} bytes for the {num_states} states and {num_arcs} "
                       "arcs its header claims)")
    pos = cur.pos
    align = bool(flags & 4)
    if align:
        pos += (-pos) % 16
    if pos + num_states * 20 > n:
        raise cur.fail(f"truncated ({n} bytes, cut in the states)")
    states = np.frombuffer(cur.data, dtype=_CONST_STATE, count=num_states, offset=pos)
    pos += states.nbytes
    if align:
        pos += (-pos) % 16
    if pos + num_arcs * 16 > n:
        raise cur.fail(f"truncated ({n} bytes, cut in the arcs)")
    arcs = np.frombuffer(cur.data, dtype=_ARC, count=num_arcs, offset=pos)
    arc_pos = pos + 16 * np.arange(num_arcs, dtype=np.int64)
    pos += arcs.nbytes
    arc_start = np.zeros(num_states + 1, dtype=np.int64)
    np.cumsum(states["narcs"].astype(np.int64), out=arc_start[1:])
    if arc_start[-1] != num_arcs or not np.array_equal(arc_start[:-1],
                                                        states["pos"].astype(np.int64)):
        raise cur.fail(f"bad ConstFst (its states' arcs do not add up to the {num_arcs} arcs "
                       "in state order)")
    return FstLayout("", "", flags, start, num_states, arc_pos, arc_start, arcs,
                     np.ascontiguousarray(states["final"]), pos)


def _check_graph(cur: _Bytes, lay: FstLayout, max_ilabel, max_olabel, allow_empty,
                 labels_from) -> None:
    if lay.num_states == 0:
        if not allow_empty:
            raise cur.fail("an FST with no states")
        return
    if not 0 <= lay.start < lay.num_states:
        raise cur.fail(f"start state {lay.start} out of range (the FST has {lay.num_states} "
                       "states)")
    arcs = lay.arcs
    bad = np.flatnonzero((arcs["next"] < 0) | (arcs["next"] >= lay.num_states))
    if len(bad):
        a = int(bad[0])
        s = int(np.searchsorted(lay.arc_start, a, side="right") - 1)
        raise cur.fail(f"arc {a - int(lay.arc_start[s])} of state {s} goes to state "
                       f"{int(arcs['next'][a])}, out of range (the FST has {lay.num_states} "
                       f"states; {len(bad)} such arcs)")
    for field, name, limit in (("il", "input", max_ilabel), ("ol", "output", max_olabel)):
        labels = arcs[field]
        if not len(labels):
            continue
        lo, hi = int(labels.min()), int(labels.max())
        if lo < 0:
            raise cur.fail(f"negative {name} label {lo}")
        if limit is not None and hi > limit:
            why = f": {labels_from}" if labels_from else " here"
            raise cur.fail(f"{name} label {hi} out of range (at most {limit}{why})")


def read_fst_bytes(rxfilename: str, what: str = "") -> bytes:
    """The bytes of an FST file (a file name, ``-``, or a ``cmd |`` pipe)."""
    what = what or rxfilename
    if rxfilename not in ("", "-") and not rxfilename.rstrip().endswith("|") \
            and not os.path.exists(rxfilename):
        raise FstFormatError(f"{what}: no such file")
    try:
        return read_all(rxfilename)
    except (KaldiIOError, OSError) as e:
        raise FstFormatError(f"{what}: cannot read ({e})") from None


def read_checked_fst(rxfilename: str, what: str = "", *, max_ilabel: Optional[int] = None,
                     max_olabel: Optional[int] = None, allow_empty: bool = False,
                     labels_from: str = ""):
    """A kaldifst.StdVectorFst from a checked vector or const FST file (a ConstFst, as Kaldi's
    mkgraph.sh writes HCLG.fst, is rebuilt as a VectorFst); FstFormatError naming the file."""
    import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
    import kaldifst

    what = what or rxfilename
    data = read_fst_bytes(rxfilename, what)
    lay = check_fst_bytes(data, what, max_ilabel=max_ilabel, max_olabel=max_olabel,
                          allow_empty=allow_empty, labels_from=labels_from)
    if lay.fst_type == "const":
        return const_to_vector(lay)
    if os.path.isfile(rxfilename):
        fst = kaldifst.StdVectorFst.read(rxfilename)
    else:  # a pipe or stdin: the bytes already read
        fst = fst_from_bytes(data)
    if fst is None:  # only if the file changed under us; never hand None on
        raise FstFormatError(f"{what}: cannot read the FST")
    return fst


def scratch_path() -> str:
    """A file name in a private directory (in RAM where /dev/shm exists), made once a process,
    for handing bytes to kaldifst (which reads FSTs from files only); one name per thread."""
    if not _scratch:
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        d = tempfile.mkdtemp(prefix="nnetmix-fst-", dir=base)
        atexit.register(shutil.rmtree, d, True)
        _scratch.append(d)
    return os.path.join(_scratch[0], f"graph.{threading.get_ident()}.fst")


_scratch: list[str] = []


def fst_from_bytes(data: bytes):
    """A kaldifst.StdVectorFst from the bytes of a binary VectorFst (checked by the caller)."""
    import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
    import kaldifst

    path = scratch_path()
    with open(path, "wb") as fh:
        fh.write(data)
    return kaldifst.StdVectorFst.read(path)


def const_to_vector(lay: FstLayout):
    """A ConstFst's checked layout as a kaldifst.StdVectorFst (kaldifst 1.7.17 cannot read
    ConstFst files: "Unknown FST type const"), state numbers kept."""
    arcs = lay.arcs
    return fst_from_arrays(lay.num_states, lay.start, lay.arc_start, arcs["il"], arcs["ol"],
                           arcs["w"], arcs["next"], lay.final)


def read_fst_stream(src, what: str, **check: object) -> tuple[bytes, FstLayout]:
    """The bytes of the binary FST at an InputStream's position (an archive entry: the next
    entry follows it), read state by state and checked by :func:`check_fst_bytes`, with their
    layout. Kaldi's FST tables hold VectorFsts; an unaligned ConstFst (as ``fstconvert
    --fst_type=const`` writes it, or a mkgraph.sh HCLG.fst an scp line names) is read too, since
    its header gives its size. An aligned ConstFst pads to 16-byte file offsets, which an
    archive entry does not keep, so it is refused by name, as are symbol tables."""
    parts: list[bytes] = []

    def take(n: int, field: str) -> bytes:
        b = src.read(n)
        if len(b) != n:
            raise FstFormatError(f"{what}: truncated (cut in {field})")
        parts.append(b)
        return b

    if src.peek(1) != b"\xd6":
        got = src.peek(1)
        raise FstFormatError(f"{what}: " + ("truncated (end of file where an FST should be)"
                                            if not got else "not an OpenFst binary FST"))
    take(4, "the magic number")
    names = []
    for field in ("the FST type", "the arc type"):
        (n,) = _I32.unpack(take(4, field))
        if not 0 <= n <= _MAX_NAME:
            raise FstFormatError(f"{what}: not a binary FST ({field} has length {n})")
        names.append(take(n, field).decode("ascii", "replace"))
    _v, flags, _p, _start, num_states, num_arcs = _HEADER.unpack(take(_HEADER.size,
                                                                      "the header"))
    if names[0] == "const" and not flags & 7 and num_states >= 0 and num_arcs >= 0:
        take(20 * num_states + 16 * num_arcs,
             f"the {num_states} states and {num_arcs} arcs of a const FST")
    elif names[0] == "const" and flags & 4:
        raise FstFormatError(f"{what}: an aligned const FST in an archive (its padding is "
                             "relative to its own file; write it with fstconvert "
                             "--fst_type=vector, or unaligned)")
    elif names[0] != "vector" or flags & 3 or num_states < 0:
        check_fst_bytes(b"".join(parts), what, whole=False)  # names the type problem
        raise FstFormatError(f"{what}: an archived FST must be a vector or const FST with its "
                             "number of states and no symbol tables")
    else:
        for s in range(num_states):
            (k,) = _I64.unpack_from(take(12, f"state {s} of {num_states}"), 4)
            if k < 0 or k > 1 << 40:
                raise FstFormatError(f"{what}: bad arc count {k} in state {s}")
            if k:
                take(16 * k, f"the arcs of state {s} of {num_states}")
    data = b"".join(parts)
    return data, check_fst_bytes(data, what, **check)  # type: ignore[arg-type]


def iter_fst_table(rspecifier: str, **check: object):
    """(key, kaldifst.StdVectorFst) from an FST archive or script (training graphs), each
    checked before kaldifst sees it (a ConstFst rebuilt as a VectorFst, as
    :func:`read_checked_fst` does); FstFormatError naming the file and key."""
    def read(src, where: str):
        data, lay = read_fst_stream(src, where, **check)
        return const_to_vector(lay) if lay.fst_type == "const" else fst_from_bytes(data)

    return iter_object_table(rspecifier, read)


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
        raise FstFormatError("fst_from_arrays: arc_start does not match the states and arcs")
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
    import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
    import kaldifst

    with tempfile.TemporaryDirectory(prefix="nnetmix-graph-") as tmp:
        path = os.path.join(tmp, "graph.fst")
        with open(path, "wb") as fh:
            fh.write(header)
            fh.write(body.tobytes())
        return kaldifst.StdVectorFst.read(path)
