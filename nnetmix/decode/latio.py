"""Lattice archives as Kaldi writes them (src/lat/kaldi-lattice.cc, CompactLatticeHolder).

Binary: ``key SPACE`` then the OpenFst binary VectorFst, with no ``\\0B`` marker (Kaldi leaves
it out so a single lattice file is an OpenFst file). OpenFst layout (fst.h FstHeader, vector-
fst.h WriteFst): int32 magic 2125659606, string "vector", string arc type, int32 version 2,
int32 flags 0, uint64 properties (those Kaldi's writers leave there, see fstprops.py), int64 start,
int64 number of states, int64 number of arcs (0, as OpenFst writes it); then per state the final
weight, int64 arc count and per arc int32 ilabel, int32 olabel, weight, int32 nextstate. Strings
are int32 length + bytes; all little-endian. Weights: ``compactlattice44`` = float32 graph cost,
float32 acoustic cost, int32 string length, int32 transition-ids; ``lattice4`` = two float32;
``standard`` = one float32. Zero (non-final) is infinity.

Text: ``key`` newline, one ``src<TAB>dst<TAB>word<TAB>g,a,t1_t2_...`` line per arc, a
``state<TAB>g,a,tids`` line per final state (the weight left out when it is One), then an empty
line. The binary writer is checked against kaldifst's own reader in the tests (standard and
lattice4 arcs share everything but the weight codec).
"""
from __future__ import annotations

import struct
from typing import Iterator

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.decode.fstprops import lattice_properties
from nnetmix.decode.lattice import CompactLattice, INF, RawLattice
from nnetmix.kaldi.specifier import parse_wspecifier
from nnetmix.kaldi.stream import InputStream, open_output
from nnetmix.kaldi.table import iter_object_table
from nnetmix.kaldi.writer import ArkScpSinks

__all__ = ["compact_lattice_to_bytes", "compact_lattice_to_text", "read_compact_lattice",
           "CompactLatticeWriter", "iter_compact_lattices", "fst_bytes", "lattice4_bytes"]

FST_MAGIC = 2125659606
_CLAT_TYPE = "compactlattice44"
_LAT_TYPE = "lattice4"


def _ostr(s: str) -> bytes:
    b = s.encode("ascii")
    return struct.pack("<i", len(b)) + b


def fst_bytes(arc_type: str, start: int, states: list[tuple[bytes, list[bytes]]],
              properties: int = 3) -> bytes:
    """OpenFst binary VectorFst from encoded (final weight, [arc bytes]) per state.

    ``properties`` go into the header as they are; 3 (expanded, mutable) claims nothing else.
    """
    head = (struct.pack("<i", FST_MAGIC) + _ostr("vector") + _ostr(arc_type)
            + struct.pack("<iiQqqq", 2, 0, properties, start, len(states), 0))
    body = [head]
    for final, arcs in states:
        body.append(final)
        body.append(struct.pack("<q", len(arcs)))
        body.extend(arcs)
    return b"".join(body)


def _clat_weight(g: float, a: float, tids: tuple) -> bytes:
    return struct.pack(f"<ffi{len(tids)}i", g, a, len(tids), *tids)


def _clat_trivial(g: float, a: float, tids: tuple) -> bool:
    """CompactLatticeWeight One ((0, 0), no tids) or Zero ((inf, inf), no tids)."""
    return not tids and ((g == 0 and a == 0) or (g == INF and a == INF))


def compact_lattice_to_bytes(clat: CompactLattice) -> bytes:
    zero = struct.pack("<ffi", INF, INF, 0)
    states = []
    eps = weighted = False
    for s in range(clat.num_states):
        fin = clat.finals[s]
        final = zero if fin is None else _clat_weight(*fin)
        weighted = weighted or (fin is not None and not _clat_trivial(*fin))
        arcs = []
        for lab, g, a, t, nxt in clat.arcs[s]:
            arcs.append(struct.pack("<ii", lab, lab) + _clat_weight(g, a, t)
                        + struct.pack("<i", nxt))
            eps = eps or lab == 0
            weighted = weighted or not _clat_trivial(g, a, t)
        states.append((final, arcs))
    props = lattice_properties(clat.num_states, clat.num_arcs(), True, eps, eps, eps, weighted)
    return fst_bytes(_CLAT_TYPE, clat.start, states, props)


def lattice4_bytes(lat: RawLattice) -> bytes:
    """A raw Lattice (arc type lattice4) in OpenFst binary form, kaldifst.Lattice.read-able."""
    per_state: list[list[bytes]] = [[] for _ in range(lat.num_states)]
    for s, d, il, ol, g, a in zip(lat.src.tolist(), lat.dst.tolist(), lat.ilabel.tolist(),
                                  lat.olabel.tolist(), lat.g.tolist(), lat.a.tolist()):
        per_state[s].append(struct.pack("<iiffi", il, ol, g, a, d))
    states = [(struct.pack("<ff", lat.final_g[s], lat.final_a[s]), per_state[s])
              for s in range(lat.num_states)]
    il, ol = np.asarray(lat.ilabel), np.asarray(lat.olabel)

    def nontrivial(g: np.ndarray, a: np.ndarray) -> bool:
        """Some LatticeWeight is neither One (0, 0) nor Zero (inf, inf)."""
        g, a = np.asarray(g, np.float32), np.asarray(a, np.float32)
        return bool(np.any(~(((g == 0) & (a == 0)) | ((g == INF) & (a == INF)))))

    props = lattice_properties(
        lat.num_states, il.size, bool(np.all(il == ol)), bool(np.any(il == 0)),
        bool(np.any(ol == 0)), bool(np.any((il == 0) & (ol == 0))),
        nontrivial(lat.g, lat.a) or nontrivial(lat.final_g, lat.final_a))
    return fst_bytes(_LAT_TYPE, lat.start, states, props)


def _fmt(x: float) -> str:
    """C++ ostream default (precision 6, %g), which OpenFst's printer uses."""
    if x == INF:
        return "Infinity"
    return f"{x:.6g}"


def _text_weight(g: float, a: float, t: tuple) -> str:
    return f"{_fmt(g)},{_fmt(a)}," + "_".join(str(x) for x in t)


def compact_lattice_to_text(clat: CompactLattice) -> str:
    """The FstPrinter acceptor form Kaldi's WriteCompactLattice uses (states printed from the
    start state first, as OpenFst does when the start is not 0)."""
    lines = []
    n = clat.num_states
    order = ([clat.start] if clat.start >= 0 else []) + [s for s in range(n) if s != clat.start]
    for s in order:
        for lab, g, a, t, nxt in clat.arcs[s]:
            if g == 0 and a == 0 and not t:
                lines.append(f"{s}\t{nxt}\t{lab}")
            else:
                lines.append(f"{s}\t{nxt}\t{lab}\t{_text_weight(g, a, t)}")
        fin = clat.finals[s]
        if fin is not None:
            if fin[0] == 0 and fin[1] == 0 and not fin[2]:
                lines.append(f"{s}")
            else:
                lines.append(f"{s}\t{_text_weight(*fin)}")
    return "\n" + "".join(line + "\n" for line in lines) + "\n"


# -- reading -----------------------------------------------------------------------------------
class _Buf:
    def __init__(self, src: InputStream, where: str):
        self.src, self.where = src, where

    def take(self, n: int, what: str) -> bytes:
        b = self.src.read(n)
        if len(b) != n:
            raise FormatError(f"{self.where}: truncated lattice ({what})")
        return b

    def unpack(self, fmt: str, what: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def string(self, what: str) -> str:
        (n,) = self.unpack("<i", what)
        if not 0 <= n < 1024:
            raise FormatError(f"{self.where}: bad {what} length {n}")
        return self.take(n, what).decode("ascii", errors="replace")


def _read_binary(src: InputStream, where: str) -> CompactLattice:
    b = _Buf(src, where)
    (magic,) = b.unpack("<i", "magic")
    if magic != FST_MAGIC:
        raise FormatError(f"{where}: not an OpenFst FST (magic {magic})")
    fst_type, arc_type = b.string("fst type"), b.string("arc type")
    if fst_type != "vector" or arc_type not in (_CLAT_TYPE, _LAT_TYPE):
        raise FormatError(f"{where}: expected a vector FST of compactlattice44 or lattice4 arcs, "
                          f"got {fst_type}/{arc_type}")
    _version, flags, _props, start, nstates, _narcs = b.unpack("<iiQqqq", "header")
    if flags & 3:
        raise FormatError(f"{where}: lattices with symbol tables are not supported")
    if nstates < 0:
        raise FormatError(f"{where}: the lattice does not say its number of states")
    clat = CompactLattice()
    if arc_type == _CLAT_TYPE:
        def weight(what):
            g, a, k = b.unpack("<ffi", what)
            return g, a, tuple(b.unpack(f"<{k}i", what)) if k else ()
        for s in range(nstates):
            clat.add_state()
            g, a, t = weight("final weight")
            if g != INF:
                clat.set_final(s, g, a, t)
            (na,) = b.unpack("<q", "arc count")
            for _ in range(na):
                il, _ol = b.unpack("<ii", "arc")
                g, a, t = weight("arc weight")
                (nxt,) = b.unpack("<i", "arc")
                clat.arcs[s].append((il, g, a, t, nxt))
        clat.start = start
        return clat
    # lattice4: ConvertLattice to a compact one (word on the output side, tid in the string);
    # each raw arc becomes one compact arc (epsilon-word arcs keep label 0, as Kaldi would only
    # after removing epsilons; our tools treat label 0 as "no word").
    for s in range(nstates):
        clat.add_state()
        g, a = b.unpack("<ff", "final weight")
        if g != INF:
            clat.set_final(s, g, a)
        (na,) = b.unpack("<q", "arc count")
        for _ in range(na):
            il, ol, g, a, nxt = b.unpack("<iiffi", "arc")
            clat.arcs[s].append((ol, g, a, (il,) if il else (), nxt))
    clat.start = start
    return clat


def _parse_weight(text: str, where: str) -> tuple[float, float, tuple]:
    parts = text.split(",")
    if len(parts) != 3:
        raise FormatError(f"{where}: bad compact-lattice weight '{text}' (expected g,a,t1_t2)")
    tids = tuple(int(x) for x in parts[2].split("_") if x)
    return float(parts[0]), float(parts[1]), tids


def _read_text(src: InputStream, where: str) -> CompactLattice:
    first = src.readline()
    if first.strip():
        raise FormatError(f"{where}: a text lattice starts on the line after its key")
    rows = []
    while True:
        line = src.readline()
        if not line or not line.strip():
            break
        rows.append(line.decode("utf-8").split())
    clat = CompactLattice()
    n = 1 + max([int(r[0]) for r in rows] + [int(r[1]) for r in rows if len(r) >= 3], default=-1)
    if any(int(r[0]) < 0 or (len(r) >= 3 and int(r[1]) < 0) for r in rows):
        raise FormatError(f"{where}: bad text lattice (a negative state number)")
    if n > 2 * len(rows) + 1:  # state numbers far beyond the lines: not a lattice
        raise FormatError(f"{where}: bad text lattice (state {n - 1} in {len(rows)} lines)")
    for _ in range(n):
        clat.add_state()
    for r in rows:
        if len(r) >= 3:
            g, a, t = _parse_weight(r[3], where) if len(r) > 3 else (0.0, 0.0, ())
            clat.arcs[int(r[0])].append((int(r[2]), g, a, t, int(r[1])))
        elif len(r) == 2:
            clat.set_final(int(r[0]), *_parse_weight(r[1], where))
        else:
            clat.set_final(int(r[0]), 0.0, 0.0)
    clat.start = int(rows[0][0]) if rows else -1
    return clat


def read_compact_lattice(src: InputStream, where: str) -> CompactLattice:
    c = src.peek(1)
    if c in (b"\n", b" ", b"\t", b"\r"):
        try:
            return _checked(_read_text(src, where), where)
        except (ValueError, IndexError) as e:  # a field that is not a number, a short line
            raise FormatError(f"{where}: bad text lattice ({e})") from None
    if c == b"\xd6":
        return _checked(_read_binary(src, where), where)
    if not c:
        raise FormatError(f"{where}: truncated (end of file where a lattice should be)")
    raise FormatError(f"{where}: does not appear to be a lattice (no FST magic number and not "
                      "text)")


def _checked(clat: CompactLattice, where: str) -> CompactLattice:
    """The checks :mod:`nnetmix.kaldi.fstfile` makes on other FSTs, before compiled code (the
    determinizer, the best-path search) walks the lattice: the start state and every arc's
    destination in range, no negative label or transition-id."""
    n = clat.num_states
    if not (-1 <= clat.start < n) or (n and clat.start < 0):
        raise FormatError(f"{where}: start state {clat.start} out of range (the lattice has {n} "
                          "states)")
    for s, arcs in enumerate(clat.arcs):
        for label, _g, _a, tids, nxt in arcs:
            if not 0 <= nxt < n or label < 0 or (tids and min(tids) < 0):
                raise FormatError(f"{where}: bad arc of state {s}: to state {nxt} of {n}, "
                                  f"label {label}, smallest transition-id "
                                  f"{min(tids) if tids else 'none'}")
    return clat


def iter_compact_lattices(rspecifier: str) -> Iterator[tuple[str, CompactLattice]]:
    """Yield (key, CompactLattice) from an ark rspecifier (``ark:gunzip -c lat.1.gz|``) or an
    scp whose entries are ``key ark:offset`` / whole lattice files."""
    return iter_object_table(rspecifier, read_compact_lattice)


class CompactLatticeWriter(ArkScpSinks):
    """Write (key, CompactLattice) to an ark wspecifier (``ark:|gzip -c > lat.1.gz``, ``ark,t:-``,
    ``ark,scp:a.ark,a.scp``)."""

    def __init__(self, wspecifier: str):
        self.spec = parse_wspecifier(wspecifier)
        if self.spec.type == "scp":
            raise FormatError(f"{wspecifier}: lattices are written to ark or ark,scp only")
        self.wspecifier = wspecifier
        self._ark = open_output(self.spec.ark or "", wspecifier)
        self._scp = open_output(self.spec.scp, wspecifier) if self.spec.type == "both" else None

    def write(self, key: str, clat: CompactLattice) -> None:
        if not key or any(c.isspace() for c in key):
            raise FormatError(f"{self.wspecifier}: invalid key {key!r}")
        self._ark.write(key.encode("utf-8") + b" ")
        offset = self._ark.pos
        if self.spec.binary:
            self._ark.write(compact_lattice_to_bytes(clat))
        else:
            self._ark.write(compact_lattice_to_text(clat).encode("ascii"))
        if self._scp is not None:
            self._scp.write(f"{key} {self.spec.ark}:{offset}\n".encode("utf-8"))

    __setitem__ = write
