"""Kaldi's ContextDependency (the ``tree`` file) and its event maps (src/tree/context-dep.cc,
event-map.cc, build-tree-utils.cc GetStubMap).

A tree maps an *event* -- the phones in a window of ``N`` positions (the central one at ``P``)
plus the pdf-class under key -1 -- to a pdf-id. The map is a tree of three node kinds:

* ``CE answer`` -- ConstantEventMap: always ``answer``;
* ``TE key n ( child_0 ... child_{n-1} )`` -- TableEventMap: the child indexed by the event's
  value for ``key`` (``NULL`` children allowed); n is a uint32 (size byte 0xFC in binary);
* ``SE key [ yes-set ] { yes no }`` -- SplitEventMap: ``yes`` if the value for ``key`` is in the
  set (an integer vector), else ``no``.

File layout, binary or text: ``ContextDependency N P ToPdf <event map> EndContextDependency``
(tokens without angle brackets; old files may carry a ``ToLength`` map first, which is skipped).
:func:`monophone_context_dependency` builds what Kaldi's MonophoneContextDependency builds (the
tree steps/train_mono.sh starts from), node for node, so it writes byte-identical ``tree`` files.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Union

from nnetmix.errors import FormatError
from nnetmix.kaldi.tokens import TokenReader, TokenWriter, open_object, write_object_bytes

__all__ = ["ConstantEventMap", "TableEventMap", "SplitEventMap", "EventMap", "ContextDependency",
           "monophone_context_dependency", "monophone_context_dependency_shared", "read_tree",
           "write_tree", "PDF_CLASS_KEY", "stub_map"]

PDF_CLASS_KEY = -1  #: Kaldi's kPdfClass: the event key holding the pdf-class


@dataclass(frozen=True)
class ConstantEventMap:
    answer: int

    def map(self, event: Mapping[int, int]) -> Optional[int]:
        return self.answer

    def multimap(self, event: Mapping[int, int], out: list) -> None:
        out.append(self.answer)

    def write(self, w: TokenWriter) -> None:
        w.token("CE")
        w.int32(self.answer)


@dataclass(frozen=True)
class TableEventMap:
    key: int
    table: tuple  # of Optional[EventMap]

    def map(self, event: Mapping[int, int]) -> Optional[int]:
        v = event.get(self.key)
        if v is None or not 0 <= v < len(self.table) or self.table[v] is None:
            return None
        return self.table[v].map(event)

    def multimap(self, event: Mapping[int, int], out: list) -> None:
        v = event.get(self.key)
        if v is not None:
            if 0 <= v < len(self.table) and self.table[v] is not None:
                self.table[v].multimap(event, out)
            return
        for child in self.table:
            if child is not None:
                child.multimap(event, out)

    def write(self, w: TokenWriter) -> None:
        w.token("TE")
        w.int32(self.key)
        w.uint32(len(self.table))
        w.token("(")
        for child in self.table:
            _write_map(w, child)
        w.token(")")
        w.newline()


@dataclass(frozen=True)
class SplitEventMap:
    key: int
    yes_set: tuple  # sorted ints
    yes: "EventMap"
    no: "EventMap"

    def map(self, event: Mapping[int, int]) -> Optional[int]:
        v = event.get(self.key)
        if v is None:
            return None
        return (self.yes if v in self.yes_set else self.no).map(event)

    def multimap(self, event: Mapping[int, int], out: list) -> None:
        v = event.get(self.key)
        if v is not None:
            (self.yes if v in self.yes_set else self.no).multimap(event, out)
        else:
            self.yes.multimap(event, out)
            self.no.multimap(event, out)

    def write(self, w: TokenWriter) -> None:
        w.token("SE")
        w.int32(self.key)
        w.int_vector(self.yes_set)
        w.token("{")
        self.yes.write(w)
        self.no.write(w)
        w.token("}")
        w.newline()


EventMap = Union[ConstantEventMap, TableEventMap, SplitEventMap]


def _write_map(w: TokenWriter, m: Optional[EventMap]) -> None:
    if m is None:
        w.token("NULL")
    else:
        m.write(w)


def _read_map(r: TokenReader, depth: int = 0) -> Optional[EventMap]:
    """EventMap::Read: dispatch on the first character (N, C, T, S)."""
    if depth > 10000:
        raise r.fail("event map nested too deeply (corrupt tree?)")
    c = r.peek_char()
    if c == "N":
        r.expect("NULL")
        return None
    if c == "C":
        r.expect("CE")
        return ConstantEventMap(r.int32("CE answer"))
    if c == "T":
        r.expect("TE")
        key = r.int32("TE key")
        size = r.uint32("TE size")
        r.expect("(")
        table = tuple(_read_map(r, depth + 1) for _ in range(size))
        r.expect(")")
        return TableEventMap(key, table)
    if c == "S":
        r.expect("SE")
        key = r.int32("SE key")
        yes_set = tuple(r.int_vector("SE yes-set").tolist())
        r.expect("{")
        yes = _read_map(r, depth + 1)
        no = _read_map(r, depth + 1)
        r.expect("}")
        if yes is None or no is None:
            raise r.fail("SE node with a NULL child")
        return SplitEventMap(key, yes_set, yes, no)
    raise r.fail(f"expected an event map (NULL, CE, TE or SE), got {c!r}" if c
                 else "expected an event map, got end of file")


class ContextDependency:
    """Kaldi's ContextDependency: context width ``N``, central position ``P``, ``to_pdf`` map."""

    def __init__(self, N: int, P: int, to_pdf: Optional[EventMap]):
        self.N = int(N)
        self.P = int(P)
        self.to_pdf = to_pdf

    context_width = property(lambda self: self.N)
    central_position = property(lambda self: self.P)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ContextDependency) and (self.N, self.P, self.to_pdf)
                == (other.N, other.P, other.to_pdf))

    def multimap(self, event: Mapping[int, int]) -> list[int]:
        out: list[int] = []
        if self.to_pdf is not None:
            self.to_pdf.multimap(event, out)
        return out

    @property
    def num_pdfs(self) -> int:
        """MaxResult()+1 over every answer in the map."""
        answers = self.multimap({})
        return max(answers) + 1 if answers and max(answers) >= 0 else 0

    def compute_pdf(self, phone_window: Sequence[int], pdf_class: int) -> Optional[int]:
        """ContextDependency::Compute: the pdf-id for a full phone window, None if unmapped."""
        if len(phone_window) != self.N:
            raise ValueError(f"phone window has {len(phone_window)} phones, the tree wants "
                             f"{self.N}")
        event = {PDF_CLASS_KEY: int(pdf_class)}
        event.update((i, int(p)) for i, p in enumerate(phone_window))
        return None if self.to_pdf is None else self.to_pdf.map(event)

    def get_pdf_info(self, phones: Sequence[int],
                     num_pdf_classes: Sequence[int]) -> list[list[tuple[int, int]]]:
        """GetPdfInfo (the HMM case): per pdf, the sorted (phone, pdf-class) pairs it serves."""
        info: list[set] = [set() for _ in range(self.num_pdfs)]
        for phone in phones:
            for pos in range(num_pdf_classes[phone]):
                for pdf in set(self.multimap({PDF_CLASS_KEY: pos, self.P: int(phone)})):
                    if not 0 <= pdf < len(info):
                        raise FormatError(f"tree: pdf {pdf} out of range")
                    info[pdf].add((int(phone), pos))
        return [sorted(s) for s in info]

    def _enumerate_pairs(self, phones: Sequence[int], self_loop_pdf_class: int,
                         forward_pdf_class: int, window: list[int], pairs: set) -> None:
        """ContextDependency::EnumeratePairs: possible (forward pdf, self-loop pdf) pairs."""
        base = {i: p for i, p in enumerate(window) if p >= 0}
        fwd = sorted(set(self.multimap({**base, PDF_CLASS_KEY: forward_pdf_class})))
        if self_loop_pdf_class < 0:
            pairs.update((f, -1) for f in fwd)
            return
        loop = sorted(set(self.multimap({**base, PDF_CLASS_KEY: self_loop_pdf_class})))
        if len(fwd) == 1 or len(loop) == 1:
            pairs.update((f, s) for f in fwd for s in loop)
            return
        position, min_dist = 0, self.N - 1
        for i in range(self.N):
            dist = abs(self.P - i)
            if window[i] == -1 and dist < min_dist:
                position, min_dist = i, dist
        if min_dist >= self.N or position == self.P:
            raise FormatError("tree: cannot enumerate pdf pairs (context exhausted)")
        new = list(window)
        for value in [0, *phones]:
            new[position] = int(value)
            self._enumerate_pairs(phones, self_loop_pdf_class, forward_pdf_class, new, pairs)

    def get_pdf_info_pairs(self, phones: Sequence[int],
                           pdf_class_pairs: Mapping[int, Sequence[tuple[int, int]]]
                           ) -> dict[int, list[list[tuple[int, int]]]]:
        """GetPdfInfo (the non-HMM case): per phone, per (fwd, loop) pdf-class pair, the sorted
        (forward pdf, self-loop pdf) pairs."""
        out: dict[int, list[list[tuple[int, int]]]] = {}
        for phone in phones:
            rows = []
            for fwd_class, loop_class in pdf_class_pairs[phone]:
                window = [-1] * self.N
                window[self.P] = int(phone)
                pairs: set = set()
                self._enumerate_pairs(phones, loop_class, fwd_class, window, pairs)
                rows.append(sorted(pairs))
            out[int(phone)] = rows
        return out

    # -- I/O -----------------------------------------------------------------------------------
    @classmethod
    def read(cls, r: TokenReader) -> "ContextDependency":
        r.expect("ContextDependency")
        N = r.int32("context width N")
        P = r.int32("central position P")
        if N <= 0 or not 0 <= P < N:
            raise r.fail(f"bad context width/central position N={N} P={P}")
        pos = r.src.pos
        tok = r.token("ToPdf")
        if tok == "ToLength":  # back-compatibility: skip the old length map
            _read_map(r)
            pos = r.src.pos
            tok = r.token("ToPdf")
        if tok != "ToPdf":
            raise r.fail(f"expected token ToPdf, got {tok[:40]!r}", pos=pos)
        to_pdf = _read_map(r)
        r.expect("EndContextDependency")
        return cls(N, P, to_pdf)

    def write(self, w: TokenWriter) -> None:
        """ContextDependency::Write, byte for byte."""
        w.token("ContextDependency")
        w.int32(self.N)
        w.int32(self.P)
        w.token("ToPdf")
        _write_map(w, self.to_pdf)
        w.token("EndContextDependency")

    def to_bytes(self, binary: bool = True) -> bytes:
        w = TokenWriter(binary)
        self.write(w)
        return w.getvalue()


def _stub_map(P: int, phone_sets: list[list[int]], phone2num: Sequence[int],
              share_roots: list[bool], counter: list[int]) -> EventMap:
    """GetStubMap (build-tree-utils.cc): the initial tree over phone sets, leaves numbered in
    the order Kaldi creates them."""
    if len(phone_sets) == 1:
        if share_roots[0]:
            counter[0] += 1
            return ConstantEventMap(counter[0] - 1)
        max_len = max(int(phone2num[p]) for p in phone_sets[0])
        table = []
        for _ in range(max_len):
            table.append(ConstantEventMap(counter[0]))
            counter[0] += 1
        return TableEventMap(PDF_CLASS_KEY, tuple(table))
    highest = max(max(s) for s in phone_sets)
    if max(len(s) for s in phone_sets) == 1 and len(phone_sets) <= 2 * highest:
        children = {}
        for s, share in zip(phone_sets, share_roots):
            children[s[0]] = _stub_map(P, [s], phone2num, [share], counter)
        top = max(children)
        return TableEventMap(P, tuple(children.get(v) for v in range(top + 1)))
    half = len(phone_sets) // 2
    map1 = _stub_map(P, phone_sets[:half], phone2num, share_roots[:half], counter)
    map2 = _stub_map(P, phone_sets[half:], phone2num, share_roots[half:], counter)
    first = tuple(sorted(p for s in phone_sets[:half] for p in s))
    return SplitEventMap(P, first, map1, map2)


def stub_map(P: int, phone_sets: Sequence[Sequence[int]], phone2num: Sequence[int],
             share_roots: Sequence[bool]) -> tuple[EventMap, int]:
    """GetStubMap (build-tree-utils.cc) for build-tree: the initial map over the roots' phone
    sets (sorted, as ReadRootsFile leaves them) and its number of leaves."""
    counter = [0]
    em = _stub_map(P, [sorted(int(p) for p in s) for s in phone_sets], phone2num,
                   [bool(b) for b in share_roots], counter)
    return em, counter[0]


def _phone2num(phones: Sequence[int], pdf_classes) -> list[int]:
    if isinstance(pdf_classes, Mapping):
        top = max(int(p) for p in phones)
        return [int(pdf_classes.get(p, -1)) for p in range(top + 1)]
    return [int(x) for x in pdf_classes]


def monophone_context_dependency_shared(phone_sets: Sequence[Sequence[int]],
                                        pdf_classes) -> ContextDependency:
    """MonophoneContextDependencyShared: each set of phones shares its pdfs (N=1, P=0)."""
    sets = [sorted(int(p) for p in s) for s in phone_sets]
    if not sets or any(not s for s in sets):
        raise ValueError("monophone tree: empty phone set")
    flat = [p for s in sets for p in s]
    if len(set(flat)) != len(flat):
        raise ValueError("monophone tree: a phone appears in more than one set")
    phone2num = _phone2num(flat, pdf_classes)
    return ContextDependency(1, 0, _stub_map(0, sets, phone2num, [False] * len(sets), [0]))


def monophone_context_dependency(phones: Sequence[int], pdf_classes) -> ContextDependency:
    """MonophoneContextDependency (context-dep.cc): one pdf per (phone, pdf-class), N=1, P=0.

    ``pdf_classes``: number of pdf-classes per phone, a sequence indexed by phone (as
    HmmTopology.phone_to_num_pdf_classes() gives) or a mapping phone -> count.
    """
    return monophone_context_dependency_shared([[int(p)] for p in phones], pdf_classes)


def read_tree(rxfilename: str) -> ContextDependency:
    """Read a Kaldi ``tree`` file (binary or text)."""
    r = open_object(rxfilename)
    try:
        tree = ContextDependency.read(r)
    finally:
        r.src.close(check=False)
    return tree


def write_tree(wxfilename: str, tree: ContextDependency, binary: bool = True) -> None:
    """Write a ``tree`` file as Kaldi's WriteKaldiObject(ctx_dep, ...)."""
    write_object_bytes(wxfilename, tree.to_bytes(binary), binary)
