"""Kaldi's HmmTopology (src/hmm/hmm-topology.cc).

A topology maps each phone to an entry: a list of HMM states, each with a forward pdf-class, a
self-loop pdf-class (equal to the forward one in an ordinary HMM; -1 = non-emitting) and its
transitions ``(dst_state, prob)``. The last state of an entry is the non-emitting final state.

Two forms, as Kaldi writes them:

* text (the ``topo`` file utils/gen_topo.pl writes, and the text form inside a text .mdl)::

    <Topology>
    <TopologyEntry>
    <ForPhones>
    2 3 4
    </ForPhones>
    <State> 0 <PdfClass> 0 <Transition> 0 0.75 <Transition> 1 0.25 </State>
    ...
    </TopologyEntry>
    </Topology>

  ``<ForwardPdfClass> f <SelfLoopPdfClass> s`` replaces ``<PdfClass>`` when they differ.
* binary: ``<Topology>`` phones (WriteIntegerVector), phone2idx (WriteIntegerVector), then an
  int32 -1 only when some state's pdf-classes differ ("not an HMM"), the entry count, per entry
  its state count, per state forward pdf-class [self-loop pdf-class] and its transitions as int32
  + float32 pairs, then ``</Topology>``.

Read and written with :mod:`nnetmix.kaldi.tokens`, as every model file is.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi.stream import InputStream
from nnetmix.kaldi.tokens import TokenReader, TokenWriter, open_object, write_object_bytes

__all__ = ["HmmState", "HmmTopology", "read_topology_text", "write_topology_text",
           "default_topology", "default_topology_text", "read_topology", "write_topology", "NO_PDF"]

NO_PDF = -1  #: Kaldi's kNoPdf: a non-emitting state


# -- the topology -------------------------------------------------------------------------------
@dataclass
class HmmState:
    """One HMM state: pdf classes (-1: non-emitting) and transitions (dst_state, prob)."""

    forward_pdf_class: int = NO_PDF
    self_loop_pdf_class: int = NO_PDF
    transitions: list = field(default_factory=list)

    @property
    def pdf_class(self) -> int:
        """The pdf-class of an ordinary HMM state (forward == self-loop)."""
        return self.forward_pdf_class


Entry = list  # list[HmmState]


class HmmTopology:
    """Kaldi's HmmTopology: ``phones`` (sorted), ``phone2idx`` and ``entries``.

    Build from a mapping ``{tuple_of_phones: [HmmState, ...]}`` with :meth:`from_entries`, or read
    one with :func:`read_topology_text` / :meth:`read`.
    """

    def __init__(self, phones: Sequence[int], phone2idx: Sequence[int], entries: list[Entry]):
        self.phones = np.asarray(phones, dtype=np.int32)
        self.phone2idx = np.asarray(phone2idx, dtype=np.int32)
        self.entries = entries

    @classmethod
    def from_entries(cls, entries: Sequence[tuple[Sequence[int], Entry]]) -> "HmmTopology":
        phone2idx: list[int] = []
        phones: list[int] = []
        out: list[Entry] = []
        for i, (plist, states) in enumerate(entries):
            out.append(list(states))
            for p in plist:
                if p <= 0:
                    raise FormatError(f"topology entry {i}: phone {p} must be > 0")
                if len(phone2idx) <= p:
                    phone2idx += [-1] * (p + 1 - len(phone2idx))
                if phone2idx[p] != -1:
                    raise FormatError(f"topology: phone {p} appears in more than one entry")
                phone2idx[p] = i
                phones.append(p)
        topo = cls(sorted(phones), phone2idx, out)
        topo.check()
        return topo

    # -- queries -------------------------------------------------------------------------------
    def topology_for_phone(self, phone: int) -> Entry:
        if not 0 <= phone < self.phone2idx.size or self.phone2idx[phone] < 0:
            raise FormatError(f"topology: no entry for phone {phone}")
        return self.entries[int(self.phone2idx[phone])]

    def num_pdf_classes(self, phone: int) -> int:
        entry = self.topology_for_phone(phone)
        classes = [c for s in entry for c in (s.forward_pdf_class, s.self_loop_pdf_class)]
        return max(classes) + 1

    def phone_to_num_pdf_classes(self) -> list[int]:
        """GetPhoneToNumPdfClasses: indexed by phone, -1 for phones with no entry."""
        out = [-1] * (int(self.phones.max()) + 1)
        for p in self.phones.tolist():
            out[p] = self.num_pdf_classes(p)
        return out

    def is_hmm(self) -> bool:
        return all(s.forward_pdf_class == s.self_loop_pdf_class
                   for p in self.phones.tolist() for s in self.topology_for_phone(p))

    def phones_of_entry(self, i: int) -> list[int]:
        return [p for p in range(self.phone2idx.size) if self.phone2idx[p] == i]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, HmmTopology) and np.array_equal(self.phones, other.phones)
                and np.array_equal(self.phone2idx, other.phone2idx)
                and self.entries == other.entries)

    def check(self, name: str = "topology") -> None:
        """HmmTopology::Check: the structural rules Kaldi enforces on reading."""
        if not self.entries or self.phones.size == 0:
            raise FormatError(f"{name}: empty topology")
        seen = [False] * len(self.entries)
        for p in self.phones.tolist():
            if p >= self.phone2idx.size or not 0 <= self.phone2idx[p] < len(self.entries):
                raise FormatError(f"{name}: phone {p} has no valid entry index")
            seen[int(self.phone2idx[p])] = True
        for i, entry in enumerate(self.entries):
            where = f"{name}: entry {i}"
            if not seen[i]:
                raise FormatError(f"{where} has no phones")
            n = len(entry)
            if n <= 1:
                raise FormatError(f"{where}: needs at least one emitting state")
            if entry[-1].transitions or entry[-1].forward_pdf_class != NO_PDF:
                raise FormatError(f"{where}: the last state must be non-emitting, with no "
                                  "transitions")
            classes = set()
            has_in = [False] * n
            for j, s in enumerate(entry):
                if s.forward_pdf_class != NO_PDF:
                    classes.update((s.forward_pdf_class, s.self_loop_pdf_class))
                dsts = set()
                for dst, prob in s.transitions:
                    if prob <= 0:
                        raise FormatError(f"{where}, state {j}: transition prob {prob} <= 0")
                    if not 0 <= dst < n or dst in dsts:
                        raise FormatError(f"{where}, state {j}: bad or duplicate destination "
                                          f"{dst}")
                    if dst == n - 1 and s.forward_pdf_class == NO_PDF:
                        raise FormatError(f"{where}, state {j}: a non-emitting state may not "
                                          "go to the final state")
                    dsts.add(dst)
                    has_in[dst] = True
                if j + 1 < n and not s.transitions:
                    raise FormatError(f"{where}, state {j}: a non-final state needs transitions")
            if not all(has_in[1:]):
                raise FormatError(f"{where}: state {has_in.index(False, 1)} has no input "
                                  "transitions")
            if sorted(classes) != list(range(len(classes))):
                raise FormatError(f"{where}: pdf-classes must be contiguous from 0, got "
                                  f"{sorted(classes)}")

    # -- I/O -----------------------------------------------------------------------------------
    @classmethod
    def read(cls, r: TokenReader) -> "HmmTopology":
        r.expect("<Topology>")
        if not r.binary:
            return cls._read_text_body(r)
        phones = r.int_vector("topology phones")
        phone2idx = r.int_vector("topology phone2idx")
        n = r.int32("topology entry count")
        is_hmm = True
        if n == -1:
            is_hmm = False
            n = r.int32("topology entry count")
        if n < 0:
            raise r.fail(f"bad topology entry count {n}")
        entries: list[Entry] = []
        for _ in range(n):
            num_states = r.int32("topology state count")
            if num_states < 0:
                raise r.fail(f"bad topology state count {num_states}")
            entry = []
            for _ in range(num_states):
                fwd = r.int32("forward pdf-class")
                loop = fwd if is_hmm else r.int32("self-loop pdf-class")
                nt = r.int32("transition count")
                if nt < 0:
                    raise r.fail(f"bad transition count {nt}")
                trans = [(r.int32("transition destination"), float(r.float32("transition prob")))
                         for _ in range(nt)]
                entry.append(HmmState(fwd, loop, trans))
            entries.append(entry)
        r.expect("</Topology>")
        topo = cls(phones, phone2idx, entries)
        topo.check(r.name)
        return topo

    @classmethod
    def _read_text_body(cls, r: TokenReader) -> "HmmTopology":
        groups: list[tuple[list[int], Entry]] = []
        while True:
            pos = r.src.pos
            tok = r.token("<TopologyEntry> or </Topology>", allow_eof=True)
            if tok == "</Topology>":
                break
            if tok != "<TopologyEntry>":
                raise r.fail(f"expected <TopologyEntry> or </Topology>, got {tok[:40]!r}", pos=pos)
            r.expect("<ForPhones>")
            phones = []
            while True:
                word = r.token("a phone or </ForPhones>")
                if word == "</ForPhones>":
                    break
                try:
                    phones.append(int(word))
                except ValueError:
                    raise r.fail(f"expected a phone (integer), got {word[:40]!r}") from None
            entry: Entry = []
            tok = r.token("<State> or </TopologyEntry>")
            while tok != "</TopologyEntry>":
                if tok != "<State>":
                    raise r.fail(f"expected <State> or </TopologyEntry>, got {tok[:40]!r}")
                state = r.int32("state number")
                if state != len(entry):
                    raise r.fail(f"states must be numbered in order from 0: expected "
                                 f"{len(entry)}, got {state}")
                tok = r.token("a state field")
                fwd = loop = NO_PDF
                if tok == "<PdfClass>":
                    fwd = loop = r.int32("pdf-class")
                    tok = r.token("a state field")
                elif tok == "<ForwardPdfClass>":
                    fwd = r.int32("forward pdf-class")
                    r.expect("<SelfLoopPdfClass>")
                    loop = r.int32("self-loop pdf-class")
                    tok = r.token("a state field")
                trans = []
                while tok == "<Transition>":
                    trans.append((r.int32("transition destination"),
                                  float(r.float32("transition prob"))))
                    tok = r.token("<Transition> or </State>")
                if tok != "</State>":
                    raise r.fail(f"expected </State>, got {tok[:40]!r}")
                entry.append(HmmState(fwd, loop, trans))
                tok = r.token("<State> or </TopologyEntry>")
            groups.append((phones, entry))
        try:
            return cls.from_entries(groups)
        except FormatError as e:
            raise FormatError(f"{r.name}: {e}") from None

    def write(self, w: TokenWriter) -> None:
        """HmmTopology::Write, byte for byte."""
        is_hmm = self.is_hmm()
        w.token("<Topology>")
        if not w.binary:
            w.newline()
            for i, entry in enumerate(self.entries):
                w.token("<TopologyEntry>")
                w.newline()
                w.token("<ForPhones>")
                w.newline()
                w.raw("".join(f"{p} " for p in self.phones_of_entry(i)).encode())
                w.newline()
                w.token("</ForPhones>")
                w.newline()
                for j, s in enumerate(entry):
                    w.token("<State>")
                    w.int32(j)
                    if s.forward_pdf_class != NO_PDF:
                        if is_hmm:
                            w.token("<PdfClass>")
                            w.int32(s.forward_pdf_class)
                        else:
                            w.token("<ForwardPdfClass>")
                            w.int32(s.forward_pdf_class)
                            w.token("<SelfLoopPdfClass>")
                            w.int32(s.self_loop_pdf_class)
                    for dst, prob in s.transitions:
                        w.token("<Transition>")
                        w.int32(dst)
                        w.float32(prob)
                    w.token("</State>")
                    w.newline()
                w.token("</TopologyEntry>")
                w.newline()
        else:
            w.int_vector(self.phones)
            w.int_vector(self.phone2idx)
            if not is_hmm:
                w.int32(-1)
            w.int32(len(self.entries))
            for entry in self.entries:
                w.int32(len(entry))
                for s in entry:
                    w.int32(s.forward_pdf_class)
                    if not is_hmm:
                        w.int32(s.self_loop_pdf_class)
                    w.int32(len(s.transitions))
                    for dst, prob in s.transitions:
                        w.int32(dst)
                        w.float32(prob)
        w.token("</Topology>")
        w.newline()

    def to_text(self) -> str:
        w = TokenWriter(binary=False)
        self.write(w)
        return w.getvalue().decode("ascii")


def read_topology_text(text: str, name: str = "topology") -> HmmTopology:
    """Parse the text ``<Topology>`` form (a lang directory's ``topo`` file)."""
    import io
    src = InputStream(io.BytesIO(text.encode("latin-1")), name)
    return HmmTopology.read(TokenReader(src, False, name))


def write_topology_text(topo: HmmTopology) -> str:
    """The text form Kaldi's HmmTopology::Write(os, false) writes."""
    return topo.to_text()


def read_topology(rxfilename: str) -> HmmTopology:
    """Read a topology file (text, as lang/topo, or binary)."""
    r = open_object(rxfilename)
    try:
        topo = HmmTopology.read(r)
    finally:
        r.src.close(check=False)
    return topo


def write_topology(wxfilename: str, topo: HmmTopology, binary: bool = False) -> None:
    w = TokenWriter(binary)
    topo.write(w)
    write_object_bytes(wxfilename, w.getvalue(), binary)


def default_topology_text(phones: Sequence[int], silence_phones: Sequence[int],
                          num_nonsil_states: int = 3, num_sil_states: int = 5) -> str:
    """What ``utils/gen_topo.pl 3 5 nonsil sil`` prints (prepare_lang.sh's defaults)."""
    sil = sorted(set(int(p) for p in silence_phones))
    nonsil = [int(p) for p in sorted(set(int(p) for p in phones)) if p not in set(sil)]
    if not 1 <= num_nonsil_states <= 100 or not (num_sil_states == 1 or 3 <= num_sil_states <= 100):
        raise ValueError(f"unexpected state counts {num_nonsil_states}, {num_sil_states}")
    out = ["<Topology>"]
    if nonsil:
        out += ["<TopologyEntry>", "<ForPhones>", " ".join(map(str, nonsil)), "</ForPhones>"]
        for s in range(num_nonsil_states):
            out.append(f"<State> {s} <PdfClass> {s} <Transition> {s} 0.75 "
                       f"<Transition> {s + 1} 0.25 </State>")
        out += [f"<State> {num_nonsil_states} </State>", "</TopologyEntry>"]
    if sil:
        out += ["<TopologyEntry>", "<ForPhones>", " ".join(map(str, sil)), "</ForPhones>"]
        n = num_sil_states
        if n > 1:
            p = "%.15g" % (1.0 / (n - 1))  # perl's default number format
            out.append("<State> 0 <PdfClass> 0 "
                       + "".join(f"<Transition> {d} {p} " for d in range(n - 1)) + "</State>")
            for s in range(1, n - 1):
                out.append(f"<State> {s} <PdfClass> {s} "
                           + "".join(f"<Transition> {d} {p} " for d in range(1, n)) + "</State>")
            out.append(f"<State> {n - 1} <PdfClass> {n - 1} <Transition> {n - 1} 0.75 "
                       f"<Transition> {n} 0.25 </State>")
        else:
            out.append("<State> 0 <PdfClass> 0 <Transition> 0 0.75 <Transition> 1 0.25 </State>")
        out += [f"<State> {n} </State>", "</TopologyEntry>"]
    out.append("</Topology>")
    return "\n".join(out) + "\n"


def default_topology(phones: Sequence[int], silence_phones: Sequence[int],
                     num_nonsil_states: int = 3, num_sil_states: int = 5) -> HmmTopology:
    """Kaldi's standard topology as utils/prepare_lang.sh writes it (through gen_topo.pl):
    3-state left-to-right for non-silence phones, 5-state with skips for silence phones."""
    return read_topology_text(default_topology_text(phones, silence_phones, num_nonsil_states,
                                                    num_sil_states))

